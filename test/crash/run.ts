/**
 * `npm run crash`: kill -9 the real server in the middle of concurrent writes, start it again on the
 * same store, and check that every acknowledged write is there exactly once and no version went back.
 * CRASH_CYCLES cycles (default 5) on each store: embedded PGlite, and Postgres when it answers
 * (required with CI=true). CRASH_SEED repeats a run's kill moments and writers' choices;
 * CRASH_TYPING_GRACE_MS (default 1000) is how old acknowledged live typing must be to be owed.
 * Everything talks to 127.0.0.1 only. The last line is `crash: N passed, M failed`, counting cycles.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { durableStore, type Store } from '../support/server.ts';
import { checkCycle } from './checkCycle.ts';
import { Known, newCycleLog } from './ledger.ts';
import { seeded, type Random } from './seeded.ts';
import { freePort, logTail, spawnServer } from './spawnServer.ts';
import { enlist, stageCycle, type StoreRun } from './stageCycle.ts';
import { runWriters } from './writers.ts';

const CYCLES = Number(process.env.CRASH_CYCLES ?? 5);
const SEED = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : Math.floor(Math.random() * 2 ** 31);
const GRACE_MS = Number(process.env.CRASH_TYPING_GRACE_MS ?? 1_000);
/** The kill comes this long into the load (after the quiet stretch, on cycles with one), drawn from the seed. */
const KILL_AFTER_MS = [300, 3_000] as const;
/**
 * On even cycles the editors stop this long before the kill. An API edit saves pending live typing
 * with its own version, and live typing is versioned every 2 s; past both, typing acknowledged more
 * than the grace before the kill is owed to the live path alone (appended within ~100 ms).
 */
const QUIET_MS = [2_200, 3_000] as const;
const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

type Outcome = { store: Store; cycle: number; passed: boolean; lines: string[] };
/** Every cycle's outcome so far, so that even a runner that fails outright reports a real count. */
const outcomes: Outcome[] = [];
let planned = CYCLES;

const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether Postgres answers; a short timeout so a missing server is quick to tell. */
async function postgresAnswers(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** One cycle on a running server: stage, write concurrently, kill -9 at the seeded moment, restart, check. */
async function crashCycle(store: StoreRun, cycle: number, random: Random): Promise<Outcome> {
  const log = newCycleLog();
  const stage = await stageCycle(store, cycle);
  log.typing = stage.typing;
  // Even cycles end with the typist alone (editors stopped), so its typing is saved by the live path only.
  const pick = random.fork(`kill ${store.label} ${cycle}`);
  const quiet = cycle % 2 === 0 ? pick.int(...QUIET_MS) : 0;
  const killAfter = quiet + pick.int(...KILL_AFTER_MS);
  const stop = new AbortController();
  const editorsStop = new AbortController();
  const writers = runWriters(stage, log, store.known, random.fork(`writers ${store.label} ${cycle}`), { all: stop.signal, editors: editorsStop.signal }).catch((error: Error) => {
    log.anomalies.push(`a writer failed: ${error.message}`);
  });
  if (quiet) setTimeout(() => editorsStop.abort(), killAfter - quiet);
  await sleep(killAfter);
  log.killedAt = performance.now();
  stop.abort();
  await store.server.kill();
  // Answers already written to the sockets before the kill are still read: they are acknowledgements.
  await sleep(100);
  // The typist's editor goes with the crash: reconnecting would hand the server back its own lost typing.
  stage.typist.close();
  await writers;
  const restarting = performance.now();
  store.server = await spawnServer({ env: store.env, port: store.port, logFile: store.logFile, label: `${store.label} cycle ${cycle}: restart after kill -9` });
  const restartMs = Math.round(performance.now() - restarting);
  const checked = await checkCycle(store, stage, log, GRACE_MS);
  const passed = checked.violations.length === 0;
  const when = `killed ${killAfter} ms into the load${quiet ? ` (editors stopped ${quiet} ms before)` : ''}, up again in ${restartMs} ms`;
  return { store: store.label, cycle, passed, lines: [`${when}; ${checked.figures}`, ...checked.violations] };
}

/** The cycles on one store, each outcome added to `outcomes` as it comes. */
async function crashStore(label: Store, random: Random, runDir: string): Promise<void> {
  const mine = () => outcomes.filter((o) => o.store === label);
  const durable = await durableStore(label);
  const logFile = join(runDir, `${label}.log`);
  const port = await freePort();
  const spawn = (why: string) => spawnServer({ env: durable.env, port, logFile, label: `${label}: ${why}` });
  let store: StoreRun | null = null;
  try {
    const server = await spawn('first start');
    const crew = await enlist(server.url);
    store = { label, env: durable.env, port, logFile, server, ...crew, run: `crash-${SEED}-${label}`, pad: null, known: new Known() };
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      try {
        if (!store.server.running()) store.server = await spawn(`start for cycle ${cycle}`);
        outcomes.push(await crashCycle(store, cycle, random));
      } catch (error) {
        const alive = store.server.running() ? '' : `\n  the server's log ends:\n${logTail(logFile).replace(/^/gm, '    ')}`;
        outcomes.push({ store: label, cycle, passed: false, lines: [`could not run or check the cycle: ${(error as Error).message}${alive}`] });
      }
      const last = outcomes.at(-1)!;
      say(`${label} cycle ${cycle}: ${last.passed ? 'passed' : 'FAILED'}; ${last.lines[0]}`);
      for (const line of last.lines.slice(1)) say(`  - ${line}`);
    }
  } catch (error) {
    for (let cycle = mine().length + 1; cycle <= CYCLES; cycle++) outcomes.push({ store: label, cycle, passed: false, lines: [`not run: ${(error as Error).message}`] });
    say(`${label}: could not start: ${(error as Error).message}`);
  } finally {
    await store?.server.stop();
    if (mine().every((o) => o.passed)) await durable.drop();
    else say(`${label}: the store is kept for inspection: ${JSON.stringify(durable.env)}`);
  }
}

async function main(): Promise<number> {
  if (!Number.isInteger(CYCLES) || CYCLES < 1) throw new Error(`CRASH_CYCLES must be a whole number of at least 1, not ${process.env.CRASH_CYCLES}`);
  if (!Number.isInteger(SEED)) throw new Error(`CRASH_SEED must be a whole number, not ${process.env.CRASH_SEED}`);
  process.env.TEST_DATABASE_URL ??= DEFAULT_POSTGRES;
  const postgres = await postgresAnswers(process.env.TEST_DATABASE_URL);
  const required = process.env.CI === 'true';
  const stores: Store[] = postgres === null || required ? ['pglite', 'postgres'] : ['pglite'];
  if (postgres !== null) say(`crash: Postgres at ${process.env.TEST_DATABASE_URL} does not answer (${postgres}); ${required ? 'CI=true needs it' : 'PGlite only'}`);
  planned = CYCLES * stores.length;
  const random = seeded(SEED);
  const runDir = mkdtempSync(join(tmpdir(), 'dotpad-crash-'));
  say(`crash: seed ${SEED} (CRASH_SEED=${SEED} repeats it), ${CYCLES} cycle${CYCLES === 1 ? '' : 's'} on ${stores.join(' and ')}, server logs in ${runDir}`);
  const started = performance.now();
  for (const store of stores) {
    if (store === 'postgres' && postgres !== null) {
      for (let cycle = 1; cycle <= CYCLES; cycle++) outcomes.push({ store, cycle, passed: false, lines: [`not run: Postgres does not answer (${postgres})`] });
    } else {
      await crashStore(store, random, runDir);
    }
  }
  const passed = outcomes.filter((o) => o.passed).length;
  const failed = outcomes.length - passed;
  say('');
  say(`crash: seed ${SEED}, ${Math.round((performance.now() - started) / 1000)} s`);
  for (const store of stores) {
    const mine = outcomes.filter((o) => o.store === store);
    say(`  ${store}: ${mine.filter((o) => o.passed).length} of ${mine.length} cycles passed`);
    for (const outcome of mine.filter((o) => !o.passed)) {
      const findings = outcome.lines.slice(1).length ? outcome.lines.slice(1) : outcome.lines;
      say(`    cycle ${outcome.cycle}: ${findings[0]}${findings.length > 1 ? ` (and ${findings.length - 1} more above)` : ''}`);
    }
  }
  if (failed === 0) rmSync(runDir, { recursive: true, force: true });
  else say(`  server logs kept in ${runDir}`);
  say(`crash: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    say(`crash: the runner failed: ${(error as Error).stack ?? error}`);
    const passed = outcomes.filter((o) => o.passed).length;
    say(`crash: ${passed} passed, ${Math.max(planned - passed, 1)} failed`);
    process.exit(1);
  },
);
