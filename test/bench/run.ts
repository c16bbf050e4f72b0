/**
 * `npm run bench`: the measurements the targets need, on both stores (embedded PGlite, and Postgres
 * at TEST_DATABASE_URL when it answers), written to BENCHMARKS.md at the repository root. Progress
 * goes to stderr. Everything talks over loopback only (127.0.0.0/8: signed-out readers take many
 * source addresses, test/bench/spread.ts). With BENCH_ONLY, only the sections it names are measured,
 * and they replace their own in the BENCHMARKS.md already there.
 */
import { writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Benchmark, StoreTarget } from './benchmark.ts';
import { coldLoad } from './coldLoad.ts';
import { coldOpen } from './coldOpen.ts';
import { liveBroadcast } from './liveBroadcast.ts';
import { liveEdit } from './liveEdit.ts';
import { markdownThreadView } from './markdownReads.ts';
import { readsOverMcp } from './mcpReads.ts';
import { selected } from './selection.ts';
import { machineCpu, progress } from './stats.ts';
import { walPerEdit } from './walPerEdit.ts';
import { searchBench } from './searchBench.ts';
import { inboxBench } from './inboxBench.ts';
import { waitsBench } from './waitsBench.ts';
import { durableEdits } from './durableEdits.ts';
import { workersBench } from './workersBench.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

// 10,000 edits: their p99 is the 100th slowest. On this shared 2-core machine a few stalls of 1-4 ms
// (the server's thread waiting for its core behind V8's compiler threads) fall on more or fewer
// samples from run to run; with 2,000 edits the p99 moved by nearly a factor of two on the same
// code, with 10,000 it is the tail of the distribution rather than of a few bursts.
const EDITS = Number(process.env.BENCH_EDITS ?? 10_000);
// V8 is still compiling this code after hundreds of edits: with V8's --trace-opt, the server
// process compiled about 1,030 functions in its first 1,000 rounds and 70-120 in each 1,000 after.
// Those compilations run on background threads that take the server's core for 1-11 ms at a time,
// so a short warm-up measures the JIT as much as the server.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const TRANSACTIONS = Number(process.env.BENCH_TRANSACTIONS ?? 10_000);
const LOAD_RUNS = Number(process.env.BENCH_LOAD_RUNS ?? 30);

/**
 * Every benchmark, in the order they run and are reported; each measures every store, starts the
 * servers it needs (`startServerProcess` and `freshDatabase` in setup.ts for a server in its own
 * process, `startTestServer` for one in this process) and writes its own section (benchmark.ts).
 *
 * The targets are absolute: from an agent's edit_pad call to the change shown in a live editor,
 * p99 <= 10 ms, durable before the answer; a cold load, p50 <= 30 ms.
 */
const BENCHMARKS: Benchmark[] = selected([
  liveEdit({ edits: EDITS, warmup: WARMUP, targetP99: 10, editors: 400 }),
  coldLoad({ transactions: TRANSACTIONS, runs: LOAD_RUNS, targetP50: 30 }),
  // A cold open through a provider until synced, small pad and the long-typed one, <= 1.3x a bare
  // Hocuspocus server on the same database at the p50 (BENCH_ONLY=coldopen; Postgres only).
  coldOpen({ transactions: TRANSACTIONS, runs: Number(process.env.BENCH_OPEN_RUNS ?? 40), targetRatio: 1.3 }),
  // The read benchmarks, each beside its baseline in the same run (BENCH_ONLY=reads runs only these):
  // open_thread and open_hub over MCP at 8 clients >= 0.8x a bare stateless SDK server; the Markdown thread view
  // >= 3,000 req/s and its 304 >= 5,000 req/s on Postgres, beside a plain Koa route; WAL per
  // paragraph edit <= 1.2 KiB, beside a bare append.
  readsOverMcp({ clients: 8, agents: 400, seconds: Number(process.env.BENCH_READ_SECONDS ?? 3), rounds: Number(process.env.BENCH_READ_ROUNDS ?? 5), warmupSeconds: 5, targetRatio: 0.8 }),
  markdownThreadView({ concurrency: 16, seconds: Number(process.env.BENCH_READ_SECONDS ?? 3), rounds: Number(process.env.BENCH_READ_ROUNDS ?? 5), warmupSeconds: 3, target200: 3_000, target304: 5_000 }),
  walPerEdit({ edits: Number(process.env.BENCH_WAL_EDITS ?? 1_000), warmup: 50, targetBytes: 1.2 * 1024, editors: 40 }),
  // Conversation at scale (BENCH_ONLY=search, inbox or waits): search_dotpad over 100,000 posts and
  // 1,000 pads, p95 <= 50 ms on Postgres; check_inbox with 10,000 items, p99 <= 20 ms; 1,000
  // concurrent wait_for_changes woken by one post, all answered, p99 <= 200 ms, with no more database
  // connections than the pool's.
  searchBench({ posts: Number(process.env.BENCH_SEARCH_POSTS ?? 100_000), pads: 1_000, rounds: Number(process.env.BENCH_SEARCH_ROUNDS ?? 40), targetP95: 50 }),
  inboxBench({ items: 10_000, readers: 5, othersItems: 40_000, rounds: Number(process.env.BENCH_INBOX_ROUNDS ?? 500), targetP99: 20 }),
  waitsBench({ waits: 1_000, rounds: Number(process.env.BENCH_WAIT_ROUNDS ?? 3), targetP99: 200 }),
  // Durable edit_pad at 50 writers over 200 pads, as 400 agents of one person and as 50 people with 8
  // agents each: >= 1,000/s, and beside a bare node:http + one INSERT in the same run, >= 0.5x its
  // throughput with a p99 <= 3x its p99 (BENCH_ONLY=durable).
  durableEdits({ writers: 50, pads: 200, agents: 400, edits: Number(process.env.BENCH_DURABLE_EDITS ?? 6_000), warmup: 1_000, rounds: Number(process.env.BENCH_DURABLE_ROUNDS ?? 5), target: 1_000, targetRatio: 0.5, targetP99Ratio: 3 }),
  // Live broadcast, 2,000 editors over 500 pads, beside bare Hocuspocus in the same run: delivery
  // and connect p99 each <= 2x bare's (BENCH_ONLY=broadcast; BENCH_BROADCAST_EDITORS for a smaller run).
  liveBroadcast({
    editors: Number(process.env.BENCH_BROADCAST_EDITORS ?? 2_000),
    perPad: 4,
    rate: Number(process.env.BENCH_BROADCAST_RATE ?? 500),
    warmupSeconds: 5,
    seconds: Number(process.env.BENCH_BROADCAST_SECONDS ?? 20),
    connecting: 50,
    targetRatio: 2,
  }),
  // npm start with WORKERS=2 beside WORKERS=1, both on Postgres and Redis, and the bare baselines
  // (BENCH_ONLY=workers; Postgres and Redis only): durable edits >= 1.5x one instance's; 5,000 live
  // editors over 500 pads at a delivery p99 no worse than bare Hocuspocus'; a reconnect storm of
  // 2,000 editors at 100/s on one pad slowing other pads' p99 <= 2x; a removal or revocation through
  // one worker holding on the other within 5 s.
  workersBench({
    workers: 2,
    durable: { writers: 50, padsEach: 4, agentsEach: 8, edits: Number(process.env.BENCH_DURABLE_EDITS ?? 6_000), warmup: 1_000, rounds: Number(process.env.BENCH_DURABLE_ROUNDS ?? 5), targetRatio: 1.5 },
    live: { editors: Number(process.env.BENCH_WORKERS_EDITORS ?? 5_000), perPad: 10, rate: 500, warmupSeconds: 5, seconds: Number(process.env.BENCH_BROADCAST_SECONDS ?? 20), connecting: 50 },
    storm: { editors: Number(process.env.BENCH_STORM_EDITORS ?? 2_000), perSecond: 100, background: 2_000, perPad: 4, rate: 500, warmupSeconds: 5, seconds: 20, targetRatio: 2 },
    reads: { trials: 10, withinMs: 5_000 },
  }),
]);

/** Whether Postgres answers at the URL, and its version; a short timeout so a missing server is quick. */
async function probePostgres(url: string): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return { ok: true, version: rows[0]!.server_version };
  } catch (error) {
    return { ok: false, reason: (error as Error).message || String(error) };
  } finally {
    await client.end().catch(() => {});
  }
}

/** CPU time of the whole machine (Linux only). */
function cpuTimes(): { total: number; steal: number } | null {
  try {
    return machineCpu();
  } catch {
    return null;
  }
}

type RunFacts = { stores: string[]; notes: string[]; seconds: number; load: { start: number; end: number }; stealShare: number | null };

function header(run: RunFacts): string {
  const cpus = os.cpus();
  const pkg = (name: string) => JSON.parse(readFileSync(`${ROOT}node_modules/${name}/package.json`, 'utf8')).version as string;
  return [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (`node test/bench/run.ts`); do not edit by hand, run it again.',
    '',
    '- Command: `npm run bench`',
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()} ${os.arch()}`,
    `- Node ${process.version}; yjs ${pkg('yjs')}, @hocuspocus/server ${pkg('@hocuspocus/server')}, @hocuspocus/provider ${pkg('@hocuspocus/provider')}, @modelcontextprotocol/sdk ${pkg('@modelcontextprotocol/sdk')}`,
    `- Stores: ${run.stores.join('; ')}`,
    `- Load average (1 min) at the start ${run.load.start.toFixed(2)}, at the end ${run.load.end.toFixed(2)}: other work on the machine during the run inflates the tails`,
    ...(run.stealShare === null ? [] : [`- CPU time stolen by the hypervisor during the run: ${(100 * run.stealShare).toFixed(1)}% (from /proc/stat; other guests on the same host, which this run cannot control, and which lengthens the tails of every figure)`]),
    `- Total run time: ${run.seconds.toFixed(0)} s`,
    ...run.notes.map((note) => `- Note: ${note}`),
    '- Method: the server is the real one on 127.0.0.1 port 0 with `LOG_LEVEL=silent`, against a fresh database (PGlite in memory, or a new Postgres database dropped afterwards). Percentiles are nearest-rank over the measured samples; warm-up runs are not counted.',
    "- Load: spread as many users spread it, so that the figures are the server's capacity and not its limits (SPEC part 8, at their production numbers: no pace is loosened for the benchmarks). Writes and agent reads turn over enough agents, and edits over enough pads, that no window per participant or per pad fills (sections 1, 3, 5 and 7 say how many); signed-out reads come from loopback addresses across 127.0.0.0/8, each client socket bound to an address of its own for 100 requests and then to one not used before, so that no per-IP window fills (section 4). Seeding, which is not measured, is done by a server in the benchmark's process whose pace is loosened as the test suites' is (`test/support/server.ts`); the server measured runs at the production numbers.",
    '',
  ].join('\n');
}

/** A section's number, from its heading (`## 9. ...`). */
const sectionNumber = (section: string) => Number(/^## (\d+)\./.exec(section)?.[1] ?? NaN);

/**
 * With BENCH_ONLY, the sections measured replace theirs in the report the last full run wrote (or
 * join it, in order), and a note in its header says which were measured again, when, and under what load.
 */
function mergedInto(report: string, measured: string[], run: RunFacts): string {
  const [head, ...kept] = report.split(/^(?=## \d+\.)/m);
  const byNumber = new Map(kept.map((section) => [sectionNumber(section), section.replace(/\n*$/, '\n')]));
  for (const section of measured) byNumber.set(sectionNumber(section), section.replace(/\n*$/, '\n'));
  const numbers = measured.map(sectionNumber).join(', ');
  const note = `- Sections ${numbers} measured again on ${new Date().toISOString()} with \`BENCH_ONLY=${process.env.BENCH_ONLY}\` (load average ${run.load.start.toFixed(2)} at the start, ${run.load.end.toFixed(2)} at the end; ${run.stores.join('; ')}); the others are from the run dated above.`;
  const headLines = head!.replace(/\n*$/, '').split('\n').filter((line) => !line.startsWith(`- Sections ${numbers} measured again`));
  return [[...headLines, note, ''].join('\n'), ...[...byNumber].sort(([a], [b]) => a - b).map(([, section]) => section)].join('\n');
}

async function main() {
  const started = performance.now();
  const loadStart = os.loadavg()[0]!;
  const cpuStart = cpuTimes();
  if (loadStart > 0.5 * os.cpus().length) progress(`the machine is busy (1-minute load ${loadStart.toFixed(2)}): tail figures will suffer`);
  process.env.TEST_DATABASE_URL ??= DEFAULT_DATABASE_URL;
  const notes: string[] = [];
  const stores = [`PGlite ${JSON.parse(readFileSync(`${ROOT}node_modules/@electric-sql/pglite/package.json`, 'utf8')).version} in memory (served to slonik over a Unix socket)`];
  const targets: StoreTarget[] = [{ store: 'pglite', label: 'PGlite' }];
  // BENCH_STORES=postgres (or pglite) measures one store alone, for a quick look; the report is for both.
  const only = process.env.BENCH_STORES;
  if (only === 'postgres') {
    targets.pop();
    stores.pop();
  }
  const probe = only === 'pglite' ? ({ ok: false, reason: 'BENCH_STORES=pglite' } as const) : await probePostgres(process.env.TEST_DATABASE_URL);
  const safeUrl = process.env.TEST_DATABASE_URL.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
  if (probe.ok) {
    targets.push({ store: 'postgres', label: 'Postgres' });
    stores.push(`Postgres ${probe.version} at ${safeUrl} (a fresh database per run)`);
  } else {
    notes.push(`Postgres was skipped: ${safeUrl} did not answer (${probe.reason}).`);
    progress(`Postgres skipped: ${probe.reason}`);
  }

  const sections: string[] = [];
  for (const benchmark of BENCHMARKS) {
    progress(`${benchmark.name}: on ${targets.map((t) => t.label).join(' and ')}`);
    sections.push(await benchmark.measure(targets));
  }

  const seconds = (performance.now() - started) / 1000;
  const cpuEnd = cpuTimes();
  const stealShare = cpuStart && cpuEnd && cpuEnd.total > cpuStart.total ? (cpuEnd.steal - cpuStart.steal) / (cpuEnd.total - cpuStart.total) : null;
  const facts = { stores, notes, seconds, load: { start: loadStart, end: os.loadavg()[0]! }, stealShare };
  const markdown = process.env.BENCH_ONLY ? mergedInto(readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8'), sections, facts) : [header(facts), ...sections].join('\n');
  writeFileSync(`${ROOT}BENCHMARKS.md`, markdown);
  progress(`wrote BENCHMARKS.md in ${seconds.toFixed(0)} s`);
}

main().then(
  // Clients and timers may linger (provider reconnect timers, pools): the run is over.
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
