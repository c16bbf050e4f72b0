/**
 * `npm start` with WORKERS=2 beside one instance (WORKERS=1) of the same deployment, both on Postgres
 * and Redis, and beside the bare baselines, in one run: durable edits, live editors, a reconnect storm
 * on one pad, and how soon a removal or a revocation made through one worker holds on the other.
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { Redis } from 'ioredis';
import { childrenOf, spawnWorkers } from '../crash/spawnServer.ts';
import { durableStore, signIn, type Reachable } from '../support/server.ts';
import type { Benchmark } from './benchmark.ts';
import { barePads, bareWriters, peopleWriters, type EditWriters } from './durableEdits.ts';
import { broadcastRun, connectEditors, cpuMs, figuresOf, typeAndTime, type Run } from './liveBroadcast.ts';
import { startBaseline } from './readSetup.ts';
import { manyAgents } from './seeded.ts';
import { connectProvider, freshDatabase, restOk, startServerProcess } from './setup.ts';
import { countedLoop, sideBySide, spread, atLeast, type LoadRun, type SideFigures } from './sideBySide.ts';
import { spreadEditors } from './spread.ts';
import { int, machineCpu, ms, progress, summarize, table, verdict, type Summary } from './stats.ts';

type Options = {
  workers: number;
  /** Durable edit_pad by `writers` people, each turning through `padsEach` pads of their own; WORKERS=n at least `targetRatio` times one instance's rate. */
  durable: { writers: number; padsEach: number; agentsEach: number; edits: number; warmup: number; rounds: number; targetRatio: number };
  /** Live editors `perPad` to a pad, typing `rate` keystrokes a second in all; WORKERS=n's delivery p99 at most bare Hocuspocus'. */
  live: { editors: number; perPad: number; rate: number; warmupSeconds: number; seconds: number; connecting: number };
  /** `editors` connecting to one pad, `perSecond` of them a second, while `background` editors type on other pads; their p99 at most `targetRatio` times the calm's. */
  storm: { editors: number; perSecond: number; background: number; perPad: number; rate: number; warmupSeconds: number; seconds: number; targetRatio: number };
  /** Removals and revocations through one worker, each read on fresh connections until the other refuses too; within `withinMs`. */
  reads: { trials: number; withinMs: number };
};

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');

/** One deployment of `npm start` (api/main.ts) on a fresh Postgres database and the local Redis. */
type Deployment = Reachable & { workers: number; label: string; cpu(): number; close(): Promise<void> };

async function deployment(workers: number, redisUrl: string): Promise<Deployment> {
  const database = await durableStore('postgres');
  const label = `WORKERS=${workers}`;
  try {
    // At the production limits (spawnServer loosens them for the crash test), as every benchmark runs.
    // With BENCH_PROFILE_DIR set, every process of the deployment writes a V8 CPU profile there when it stops.
    const profiling: Record<string, string> = process.env.BENCH_PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}/workers-${workers}` } : {};
    const server = await spawnWorkers({ ...database.env, ...profiling, REDIS_URL: redisUrl, SVC_PACE_SCALE: '1' }, workers);
    return {
      url: server.url,
      workers,
      label,
      // The primary's and every worker's: user + system, ms.
      cpu: () => [server.pid, ...childrenOf(server.pid)].reduce((sum, pid) => sum + cpuMs(pid), 0),
      async close() {
        await server.stop();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Whether Redis answers at `url`. */
async function redisAnswers(url: string): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    client.disconnect();
  }
}

type Durable = Record<'many' | 'one' | 'bare', SideFigures & ReturnType<typeof perRequest>> & { busy: { many: number; one: number } };
type Live = { many: Run; one: Run; bare: Run };
/** `cpu`: the deployment's CPU ms a second over the calm and over the storm. */
type Storm = { calm: Summary; storm: Summary; missed: number; connects: Summary; refused: number; stormSeconds: number; cpu: { calm: number; storm: number } };
type ReadTrial = { kind: 'removed' | 'revoked'; lastAllowedMs: number; refusedFromMs: number };
type Figures = { durable: Durable | null; live: Live | null; storms: { many: Storm; one: Storm } | null; reads: ReadTrial[] | null };

export function workersBench(options: Options): Benchmark {
  return {
    name: 'workers: npm start with WORKERS=2 beside one instance',
    async measure(targets) {
      if (!targets.some((t) => t.store === 'postgres')) return report(null, options, 'Postgres did not answer: several workers need it.');
      const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
      const down = await redisAnswers(redisUrl);
      if (down) return report(null, options, `Redis did not answer at ${redisUrl} (${down}): several workers need it.`);
      return report(await measure(options, redisUrl), options, null);
    },
  };
}

async function measure(options: Options, redisUrl: string): Promise<Figures> {
  const many = await deployment(options.workers, redisUrl);
  try {
    const one = await deployment(1, redisUrl);
    try {
      // BENCH_WORKERS_PARTS=durable,live,storm,reads (the default: all) measures some of the four; the others are left out of the report.
      const parts = (process.env.BENCH_WORKERS_PARTS ?? 'durable,live,storm,reads').split(',');
      const durable = parts.includes('durable') ? await durableEdits(many, one, options.durable) : null;
      const live = parts.includes('live') ? await liveEditors(many, one, options.live) : null;
      const storms = parts.includes('storm') ? { many: await reconnectStorm(many, options.storm), one: await reconnectStorm(one, options.storm) } : null;
      const reads = parts.includes('reads') ? await readsAcross(many, options.reads) : null;
      return { durable, live, storms, reads };
    } finally {
      await one.close();
    }
  } finally {
    await many.close();
  }
}

/** CPU time (ms) so far of each Postgres process (the server's backends among them), by pid. */
function postgresCpu(): Map<number, number> {
  const pids = spawnSync('pgrep', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  const times = new Map<number, number>();
  for (const pid of pids) {
    try {
      times.set(pid, cpuMs(pid));
    } catch {} // ended meanwhile
  }
  return times;
}

/** Postgres' CPU ms between two readings: each process's own difference, a process started in between counted whole (one that ended is lost, a fraction of a tick). */
const postgresCpuBetween = (before: Map<number, number>, after: Map<number, number>) => [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);

/** What a stretch of load cost: the share of the machine busy (not idle or waiting on I/O), and the CPU ms of the server and of Postgres. */
type Cost = { busy: number; server: number; postgres: number; requests: number };

/** Runs `work`, adding what it cost to `into`. */
async function costing(work: () => Promise<LoadRun>, serverCpu: () => number, into: Cost[]): Promise<LoadRun> {
  const before = { machine: machineCpu(), server: serverCpu(), postgres: postgresCpu() };
  const run = await work();
  const machine = machineCpu();
  into.push({ busy: (machine.busy - before.machine.busy) / (machine.total - before.machine.total), server: serverCpu() - before.server, postgres: postgresCpuBetween(before.postgres, postgresCpu()), requests: run.requests });
  return run;
}

/** The measured stretches' cost (the warm-up's, the first, left out): the machine's mean busy share, and CPU ms per request. */
function perRequest(costs: Cost[]) {
  const measured = costs.slice(1);
  const requests = measured.reduce((sum, c) => sum + c.requests, 0);
  return {
    cpuBusy: measured.reduce((sum, c) => sum + c.busy, 0) / measured.length,
    serverCpu: measured.reduce((sum, c) => sum + c.server, 0) / requests,
    postgresCpu: measured.reduce((sum, c) => sum + c.postgres, 0) / requests,
  };
}

async function durableEdits(many: Deployment, one: Deployment, options: Options['durable']): Promise<Durable> {
  progress(`workers: durable edits, seeding ${options.writers} people with ${options.agentsEach} agents each on ${many.label} and on ${one.label}`);
  const shape = { writers: options.writers, padsEach: options.padsEach, agentsEach: options.agentsEach };
  const writers: Record<'many' | 'one', EditWriters> = { many: await peopleWriters(many, shape), one: await peopleWriters(one, shape) };
  const database = await freshDatabase('postgres');
  try {
    const bareServer = await startServerProcess(database.env);
    try {
      const bare = bareWriters(bareServer, await barePads(bareServer, options.writers * options.padsEach), options.writers);
      const costs: Record<'many' | 'one' | 'bare', Cost[]> = { many: [], one: [], bare: [] };
      const cpuOf = { many: many.cpu, one: one.cpu, bare: () => cpuMs(bareServer.pid) };
      const side = (name: 'many' | 'one' | 'bare', loop: readonly (() => Promise<void>)[]) => (edits: number) => costing(() => countedLoop(loop, edits), cpuOf[name], costs[name]);
      const stretch = Math.round(options.edits / options.rounds);
      progress(`workers: ${options.writers} writers, ${options.warmup} warm-up edits, then ${options.rounds} rounds of ${stretch} on ${many.label}, ${one.label} and the bare endpoint`);
      const figures = await sideBySide(
        { many: side('many', writers.many.writers), one: side('one', writers.one.writers), bare: side('bare', bare) },
        { rounds: options.rounds, stretch, warmup: options.warmup, seed: 20261128 },
      );
      progress(`workers: durable ${many.label} ${int(figures.many.rate)}/s, ${one.label} ${int(figures.one.rate)}/s, bare ${int(figures.bare.rate)}/s`);
      return {
        many: { ...figures.many, ...perRequest(costs.many) },
        one: { ...figures.one, ...perRequest(costs.one) },
        bare: { ...figures.bare, ...perRequest(costs.bare) },
        busy: { many: writers.many.busy(), one: writers.one.busy() },
      };
    } finally {
      await bareServer.close();
    }
  } finally {
    await database.drop();
  }
}

/** Each pad its own agent's, its editors connecting with that agent's key; and their hub. */
async function livePads(server: Reachable, pads: number, title: string) {
  const world = await spreadEditors(server, pads, title, PAD_TEXT);
  return { keys: new Map(world.pads.map((pad) => [pad.padId, pad.agent.key])), hubSlug: world.hubSlug };
}

async function liveEditors(many: Deployment, one: Deployment, options: Options['live']): Promise<Live> {
  const pads = Math.ceil(options.editors / options.perPad);
  progress(`workers: live editors, seeding ${pads} pads on each deployment`);
  const keys = { many: (await livePads(many, pads, 'Live editors')).keys, one: (await livePads(one, pads, 'Live editors')).keys };
  const runOn = (deployment: Deployment, which: 'many' | 'one') => broadcastRun(deployment, keys[which], deployment.cpu, `workers: ${deployment.label}`, options, null);
  const first = await runOn(many, 'many');
  const firstOne = await runOn(one, 'one');
  const states: Record<string, string> = {};
  for (const pad of first.pads) states[pad.padId] = Buffer.from(pad.state).toString('base64');
  const bare = await startBaseline({ kind: 'relay', states });
  try {
    // In the order many, one, bare, bare, one, many: none comes after another more often.
    const onBare = () => broadcastRun(bare, keys.many, () => cpuMs(bare.pid), 'workers: bare Hocuspocus', options, null);
    const bareRuns = [(await onBare()).raw, (await onBare()).raw];
    const lastOne = await runOn(one, 'one');
    const lastMany = await runOn(many, 'many');
    return { many: figuresOf([first.raw, lastMany.raw]), one: figuresOf([firstOne.raw, lastOne.raw]), bare: figuresOf(bareRuns) };
  } finally {
    await bare.close();
  }
}

/**
 * `background` editors over pads of their own type for warm-up, then a calm stretch, then as long
 * again while `editors` more connect to one other pad, `perSecond` a second (each started on time,
 * whether or not the ones before have synced); the typing's delivery in the calm and in the storm.
 */
async function reconnectStorm(deployment: Deployment, options: Options['storm']): Promise<Storm> {
  const label = `workers: storm on ${deployment.label}`;
  progress(`${label}: seeding ${options.background / options.perPad} pads and the storm's pad`);
  const { keys, hubSlug } = await livePads(deployment, options.background / options.perPad, 'Storm background');
  const [stormKey] = keys.values();
  const stormPad = (await restOk(deployment, stormKey!, 'create_pad', { hub: hubSlug, title: 'Everyone at once', text: PAD_TEXT })).pad_id as string;
  const { pads, close } = await connectEditors(deployment, keys, options.perPad, 50);
  const storm: { close(): void }[] = [];
  try {
    const connects: number[] = [];
    let refused = 0;
    let stormFrom = 0;
    let stormTo = 0;
    let stormDone: Promise<unknown> = Promise.resolve();
    // The deployment's CPU time at the calm's start, the storm's start and its end, with when each was read.
    const cpuAt: { ms: number; at: number }[] = [];
    const readCpu = () => cpuAt.push({ ms: deployment.cpu(), at: performance.now() });
    const stormSeconds = options.editors / options.perSecond;
    // Calm for `seconds`, then the storm for as long, and the typing goes on until the last of it.
    const typed = await typeAndTime(pads, { rate: options.rate, warmupSeconds: options.warmupSeconds, seconds: options.seconds + stormSeconds }, label, () => {
      readCpu();
      const started = performance.now() + options.seconds * 1000;
      stormDone = new Promise<void>((resolve) => setTimeout(resolve, options.seconds * 1000)).then(() => {
        stormFrom = performance.now();
        readCpu();
        progress(`${label}: ${options.editors} editors connecting to one pad, ${options.perSecond} a second`);
        return Promise.all(
          Array.from({ length: options.editors }, (_, i) =>
            new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, started + (i * 1000) / options.perSecond - performance.now())))
              .then(async () => {
                const t0 = performance.now();
                storm.push(await connectProvider(deployment, stormKey!, stormPad));
                connects.push(performance.now() - t0);
              })
              .catch(() => refused++),
          ),
        ).then(() => {
          stormTo = performance.now();
          readCpu();
        });
      });
    });
    await stormDone;
    const calm = typed.delivery.filter((d) => d.at < stormFrom).map((d) => d.ms);
    const during = typed.delivery.filter((d) => d.at >= stormFrom && d.at <= stormTo).map((d) => d.ms);
    const perSecond = (from: number) => ((cpuAt[from + 1]!.ms - cpuAt[from]!.ms) * 1000) / (cpuAt[from + 1]!.at - cpuAt[from]!.at);
    return { calm: summarize(calm), storm: summarize(during), missed: typed.missed, connects: summarize(connects), refused, stormSeconds: (stormTo - stormFrom) / 1000, cpu: { calm: perSecond(0), storm: perSecond(1) } };
  } finally {
    for (const editor of storm) editor.close();
    close();
  }
}

/** A REST call on a connection of its own: node:cluster hands each new connection to the next worker in turn. */
function freshCall(server: Reachable, key: string, tool: string, args: unknown): Promise<{ status: number; body: any }> {
  const body = JSON.stringify(args);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}/api/v1/tools/${tool}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Removals and revocations made through one worker: each trial first reads the hub with the member's
 * key on four fresh connections (two on each worker), so both hold what they read; then the owner
 * removes the member, or the person revokes the agent's key; from its answer, the hub is read again
 * on a fresh connection every 20 ms until four in a row are refused. Times from the answer: the last
 * read still let through, and the first of the four refused.
 */
async function readsAcross(deployment: Deployment, options: Options['reads']): Promise<ReadTrial[]> {
  progress(`workers: ${options.trials} removals and ${options.trials} revocations through one worker, read on both`);
  const person = await signIn(deployment, 'Workers reader', `workers-reader-${Date.now()}@example.com`);
  const [owner, ...members] = await manyAgents(deployment, 1 + 2 * options.trials, person);
  const hub = await restOk(deployment, owner!.key, 'create_hub', { name: 'Read across workers' });
  const settings = async (op: string, args: unknown) => {
    const reply = await fetch(`${deployment.url}/api/settings/${op}`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: deployment.url }, body: JSON.stringify(args) });
    if (reply.status !== 200) throw new Error(`settings ${op}: ${reply.status} ${await reply.text()}`);
    return (await reply.json()) as any;
  };
  const trials: ReadTrial[] = [];
  for (const [i, member] of members.entries()) {
    const kind = i % 2 === 0 ? 'removed' : 'revoked';
    await restOk(deployment, member.key, 'join_hub', { hub: hub.slug });
    await restOk(deployment, owner!.key, 'moderate', { hub: hub.slug, action: 'let_in', who: member.id });
    const read = () => freshCall(deployment, member.key, 'open_hub', { hub: hub.slug });
    for (let warm = 0; warm < 4; warm++) {
      const reply = await read();
      if (reply.status !== 200) throw new Error(`open_hub before the ${kind === 'removed' ? 'removal' : 'revocation'}: ${reply.status}`);
    }
    if (kind === 'removed') {
      const removed = await freshCall(deployment, owner!.key, 'moderate', { hub: hub.slug, action: 'remove', who: member.id });
      if (removed.status !== 200) throw new Error(`moderate remove: ${removed.status} ${JSON.stringify(removed.body)}`);
    } else {
      const { credentials } = await settings('credentials', {});
      const credential = credentials.find((c: { participant_id: string }) => c.participant_id === member.id);
      if (!credential) throw new Error('the agent key is not among the person’s connections');
      await settings('revoke', { credential_id: credential.id });
    }
    const answered = performance.now();
    let lastAllowed = 0;
    let refusedFrom = 0;
    let refusedInRow = 0;
    while (refusedInRow < 4) {
      if (performance.now() - answered > 30_000) throw new Error(`a ${kind} member still read the hub 30 s later`);
      const t = performance.now() - answered;
      const reply = await read();
      if (reply.status === 200) {
        lastAllowed = t;
        refusedInRow = 0;
      } else {
        if (refusedInRow++ === 0) refusedFrom = t;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    trials.push({ kind, lastAllowedMs: lastAllowed, refusedFromMs: refusedFrom });
  }
  return trials;
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
const pct = (share: number) => `${Math.round(share * 100)}%`;
/** A part left out of this run (BENCH_WORKERS_PARTS). */
const notMeasured = (part: string) => [`${part} Not measured in this run.`, ''];

function durableReport(durable: Durable | null, options: Options): string[] {
  const d = options.durable;
  const n = options.workers;
  const about = `**Durable edits.** ${d.writers} people, each signed in with ${d.agentsEach} agents in a hub of their own, one closed-loop writer per person sending \`edit_pad\` through REST over ${d.padsEach} of their pads (as in section 9's "${d.writers} people" load), on each deployment; beside them the bare endpoint of section 9 (\`node:http\`, the live change, one INSERT: one server process on a third database), driven the same way over ${int(d.writers * d.padsEach)} pads. Each warms up with ${int(d.warmup)} edits, then ${int(d.edits)} are measured in ${d.rounds} rounds, the three taking turns in an order drawn afresh each round. "Machine busy" is the share of both cores' time not idle over each side's measured stretches (/proc/stat): with it near 100%, the machine has no core left to give. CPU per edit is over the measured stretches: the server's (every process of the deployment) and Postgres' (all its processes, from /proc). Target: WORKERS=${n} at least ${d.targetRatio}x one instance's edits a second.`;
  if (!durable) return notMeasured(about);
  const row = (name: string, side: Durable['one'], busyCalls: string) => [name, int(side.rate), ms(side.p50), ms(side.p99), spread(side.roundRates), pct(side.cpuBusy), ms(side.serverCpu), ms(side.postgresCpu), ratio(side.rate, durable.one.rate), ratio(side.rate, durable.bare.rate), busyCalls];
  return [
    about,
    '',
    table(
      ['Deployment', 'Edits a second', 'p50', 'p99', 'Rounds (edits a second)', 'Machine busy', 'Server CPU per edit', 'Postgres CPU per edit', `/ WORKERS=1 (>= ${d.targetRatio}x)`, '/ bare', '`busy` answers'],
      [row(`WORKERS=${n}`, durable.many, int(durable.busy.many)), row('WORKERS=1', durable.one, int(durable.busy.one)), row('Bare endpoint (one process)', durable.bare, 'n/a')],
    ),
    '',
    `- WORKERS=${n} wrote at ${ratio(durable.many.rate, durable.one.rate)} one instance's rate: ${atLeast(durable.many.rate / durable.one.rate, d.targetRatio)}.`,
    '',
  ];
}

function liveReport(live: Live | null, options: Options): string[] {
  const l = options.live;
  const n = options.workers;
  const about = `**Live editors.** ${int(l.editors)} Node \`HocuspocusProvider\`s over ${int(l.editors / l.perPad)} pads, ${l.perPad} to a pad, each on a WebSocket of its own, connect (${l.connecting} at a time) to one deployment or to bare Hocuspocus (section 11's relay: one process, no extension); one editor of each pad types, ${int(l.rate)} keystrokes a second over all pads, and a keystroke's delivery runs until each other editor of its pad has it (${l.perPad - 1} samples each). On WORKERS=${n} a pad's editors sit on both workers, so most deliveries cross Redis. Six runs (WORKERS=${n}, WORKERS=1, bare, bare, WORKERS=1, WORKERS=${n}), each ${l.warmupSeconds} s of warm-up and ${l.seconds} s measured; each row is its two runs together. Target: WORKERS=${n}'s delivery p99 no worse than bare Hocuspocus'.`;
  if (!live) return notMeasured(about);
  const row = (name: string, f: Run) => [name, int(f.delivery.n), int(f.missed), ms(f.delivery.p50), ms(f.delivery.p99), ms(f.delivery.max), ms(f.connect.p50), ms(f.connect.p99), ms(f.cpuPerKeystroke)];
  return [
    about,
    '',
    table(['Server', 'Deliveries', 'Missed', 'Delivery p50', 'p99', 'max', 'Connect p50', 'p99', 'CPU per keystroke'], [row(`WORKERS=${n}`, live.many), row('WORKERS=1', live.one), row('bare Hocuspocus (one process)', live.bare)]),
    '',
    `- Delivery p99, WORKERS=${n} / bare: ${ratio(live.many.delivery.p99, live.bare.delivery.p99)} (target <= 1x): ${verdict(live.many.delivery.p99, live.bare.delivery.p99)}.`,
    '',
  ];
}

function stormReport(storms: Figures['storms'], options: Options): string[] {
  const s = options.storm;
  const n = options.workers;
  const about = `**Reconnect storm.** On each deployment, ${int(s.background)} editors over ${int(s.background / s.perPad)} pads (${s.perPad} to a pad) type ${int(s.rate)} keystrokes a second as above: ${s.warmupSeconds} s of warm-up, ${s.seconds} s calm, then ${int(s.editors)} more editors connect to one other pad, ${s.perSecond} a second, each started on time whether or not those before it have synced, with the typing going on. "Calm" is the deliveries of keystrokes typed before the storm; "storm" of those typed from its first connection until its last has synced; the deployment's CPU time a second over each (1,000 is one core). Target (WORKERS=${n}): the storm's delivery p99 at most ${s.targetRatio}x the calm's.`;
  if (!storms) return notMeasured(about);
  const row = (name: string, f: Storm, judged: boolean) => [
    name,
    int(f.calm.n),
    ms(f.calm.p99),
    int(f.storm.n),
    ms(f.storm.p99),
    ratio(f.storm.p99, f.calm.p99),
    judged ? verdict(f.storm.p99, s.targetRatio * f.calm.p99) : '(reference)',
    int(f.missed),
    `${int(f.connects.n)} in ${f.stormSeconds.toFixed(1)} s`,
    int(f.refused),
    ms(f.connects.p50),
    ms(f.connects.p99),
    int(f.cpu.calm),
    int(f.cpu.storm),
  ];
  return [
    about,
    '',
    table(
      ['Deployment', 'Calm deliveries', 'Calm p99', 'Storm deliveries', 'Storm p99', 'Storm / calm', `Target <= ${s.targetRatio}x`, 'Missed', 'Storm editors synced', 'Not synced in 10 s', 'Their connect p50', 'p99', 'Server CPU ms/s, calm', 'in the storm'],
      [row(`WORKERS=${n}`, storms.many, true), row('WORKERS=1', storms.one, false)],
    ),
    '',
  ];
}

function readsReport(reads: ReadTrial[] | null, options: Options): string[] {
  const about = `**Reads across workers.** On WORKERS=${options.workers}, ${options.reads.trials} members of a hub are removed by its owner (\`moderate\` \`remove\`) and ${options.reads.trials} agents' keys revoked by their person (Settings \`revoke\`), one at a time, each through whichever worker takes the call. Before each, the member reads the hub (\`open_hub\`) on four fresh connections, two on each worker, so both hold what it read; from the answer, it reads again on a fresh connection every 20 ms until four in a row are refused (\`not_found\`, or \`401\`). Target: nothing read on any worker ${int(options.reads.withinMs)} ms after the answer.`;
  if (!reads) return notMeasured(about);
  const worst = (kind: ReadTrial['kind'], of: (t: ReadTrial) => number) => Math.max(...reads.filter((t) => t.kind === kind).map(of));
  const row = (kind: ReadTrial['kind'], what: string) => [what, int(reads.filter((t) => t.kind === kind).length), ms(worst(kind, (t) => t.lastAllowedMs)), ms(worst(kind, (t) => t.refusedFromMs)), `<= ${int(options.reads.withinMs)} ms`, verdict(worst(kind, (t) => t.refusedFromMs), options.reads.withinMs)];
  return [about, '', table(['Change', 'Trials', 'Last read let through (worst)', 'Refused from (worst)', 'Target', 'Result'], [row('removed', 'Member removed'), row('revoked', 'Key revoked')]), ''];
}

function report(figures: Figures | null, options: Options, skipped: string | null): string {
  const n = options.workers;
  const title = `## 12. Several workers: \`npm start\` with WORKERS=${n} beside one instance (Postgres and Redis)`;
  if (!figures) return [title, '', `Not measured in this run: ${skipped}`, ''].join('\n');
  return [
    title,
    '',
    `Two deployments of \`npm start\` (\`api/main.ts\`) run side by side, each on a fresh Postgres database and the local Redis, at the production limits: WORKERS=${n} (node:cluster, ${n} worker processes on one port; node:cluster hands each new connection to the next worker) and WORKERS=1, one instance of the same deployment. The benchmark's clients run in one process of their own on the same ${n}-core machine as both deployments, Postgres and Redis. CPU time is the deployment's (primary and workers, user + system, from /proc).`,
    '',
    ...durableReport(figures.durable, options),
    ...liveReport(figures.live, options),
    ...stormReport(figures.storms, options),
    ...readsReport(figures.reads, options),
    `Only this section: \`BENCH_ONLY=workers BENCH_STORES=postgres npm run bench\`.`,
    '',
  ].join('\n');
}
