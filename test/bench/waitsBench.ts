import pg from 'pg';
import { sql } from 'slonik';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { forStore, latencies, manyAgents, seededServer, type Latencies } from './seeded.ts';
import { restOk } from './setup.ts';
import { registerAgent, type TestServer } from '../support/server.ts';
import { int, ms, progress, table, verdict } from './stats.ts';

type Options = { waits: number; rounds: number; targetP99: number };
/** The pool's size on Postgres (server/db/database.ts). */
const POOL_SIZE = 10;
const PER_AGENT = 4;

type Round = { fromSend: number[]; fromAnswer: number[]; unanswered: number; maxOpen: number | null; maxBusy: number | null; samples: number };
type Figures = { fromSend: Latencies; fromAnswer: Latencies; unanswered: number; maxOpen: number | null; maxBusy: number | null; samples: number; rounds: number };

/**
 * `waits` concurrent `wait_for_changes` on one thread, 4 from each of `waits / 4` agents, over REST
 * to the real server in a process of its own; once all are open (the server says so), one post to the
 * thread. Each answer's time is when its head reaches the client (its body is read and checked after), taken from the moment the post was sent (before it committed: an
 * upper bound) and from the moment the post's own answer came back (after it committed: a lower
 * bound). Meanwhile pg_stat_activity is sampled for the server's connections to its database.
 */
export function waitsBench(options: Options): Benchmark {
  return perStore(
    'waits: 1,000 concurrent wait_for_changes',
    async ({ store, label }) => {
      progress(`${label}: ${options.waits / PER_AGENT} agents, each with ${PER_AGENT} waits`);
      const world = await seededServer(store, { SVC_PUBLIC_THREADS: '1' }, (seeder) => seed(seeder, options.waits / PER_AGENT));
      const watcher = world.databaseUrl ? await connectionWatcher(world.databaseUrl) : null;
      try {
        const { keys, threadId, posterKey } = world.seeded;
        const version = async () => String((await restOk(world.server, posterKey, 'open_thread', { thread_id: threadId })).version);
        const round = async (n: number, i: number): Promise<Round> => {
          const have = await version();
          watcher?.start();
          const started: Promise<number>[] = [];
          for (let w = 0; w < n; w++) {
            started.push(
              (async () => {
                const response = await fetch(`${world.server.url}/api/v1/tools/wait_for_changes`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[w % keys.length]}` },
                  body: JSON.stringify({ thread_id: threadId, version: have, timeout_seconds: 25 }),
                });
                // The answer is here once its head is; its body is read (and checked) after.
                const at = performance.now();
                const body = (await response.json()) as { data?: { changed?: boolean } };
                return response.status === 200 && body.data?.changed === true ? at : NaN;
              })(),
            );
          }
          // All filed on the server, so the post must wake every one.
          while ((await world.server.openWaits()) < n) await new Promise((resolve) => setTimeout(resolve, 20));
          const sent = performance.now();
          await restOk(world.server, posterKey, 'post_reply', { thread_id: threadId, body: `Round ${i}: here is the news.` });
          const answered = performance.now();
          const times = await Promise.all(started);
          const seen = (await watcher?.stop()) ?? null;
          const ok = times.filter((t) => Number.isFinite(t));
          return {
            fromSend: ok.map((t) => t - sent),
            fromAnswer: ok.map((t) => t - answered),
            unanswered: n - ok.length,
            maxOpen: seen?.maxOpen ?? null,
            maxBusy: seen?.maxBusy ?? null,
            samples: seen?.samples ?? 0,
          };
        };
        progress(`${label}: a warm-up round, then ${options.rounds} rounds of ${int(options.waits)} waits`);
        await round(options.waits, 0);
        const rounds: Round[] = [];
        for (let i = 1; i <= options.rounds; i++) rounds.push(await round(options.waits, i));
        const max = (values: (number | null)[]) => (values.some((v) => v === null) ? null : Math.max(...(values as number[])));
        const figures: Figures = {
          fromSend: latencies(rounds.flatMap((r) => r.fromSend)),
          fromAnswer: latencies(rounds.flatMap((r) => r.fromAnswer)),
          unanswered: rounds.reduce((sum, r) => sum + r.unanswered, 0),
          maxOpen: max(rounds.map((r) => r.maxOpen)),
          maxBusy: max(rounds.map((r) => r.maxBusy)),
          samples: rounds.reduce((sum, r) => sum + r.samples, 0),
          rounds: rounds.length,
        };
        progress(`${label}: p99 ${ms(figures.fromSend.p99)} from the post sent, ${figures.unanswered} unanswered, at most ${figures.maxOpen ?? 'n/a'} connections (${figures.maxBusy ?? 'n/a'} busy)`);
        return figures;
      } finally {
        await watcher?.close();
        await world.close();
      }
    },
    (results) => report(results, options),
  );
}

/** The agents that wait, a poster, and a public thread (public: no seat to give 250 agents). */
async function seed(server: TestServer, agents: number) {
  const poster = await registerAgent(server, 'Poster');
  const hub = await restOk(server, poster.key, 'create_hub', { name: 'Waiting room' });
  await server.core.db.writeStatement((conn) => conn.query(sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`));
  const thread = await restOk(server, poster.key, 'start_thread', { hub: hub.slug, title: 'News soon', body: 'Wait here.' });
  const keys = (await manyAgents(server, agents)).map((agent) => agent.key);
  return { keys, threadId: thread.thread_id as string, posterKey: poster.key };
}

const SAMPLE_MS = 5;

/**
 * Samples pg_stat_activity, every 5 ms on one connection of its own, for the server's connections to
 * its database: all of them (the pool's, idle or not) and those running something, leaving out the
 * change feed's LISTEN connection, which is not the pool's.
 */
async function connectionWatcher(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const database = new URL(url).pathname.slice(1);
  let running: Promise<void> | null = null;
  let stopping = false;
  let seen = { maxOpen: 0, maxBusy: 0, samples: 0 };
  return {
    start() {
      stopping = false;
      seen = { maxOpen: 0, maxBusy: 0, samples: 0 };
      running = (async () => {
        while (!stopping) {
          const { rows } = await client.query<{ open: number; busy: number }>(
            `SELECT count(*)::int AS open, count(*) FILTER (WHERE state IS DISTINCT FROM 'idle')::int AS busy
             FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> 'dotpad change feed'`,
            [database],
          );
          seen.maxOpen = Math.max(seen.maxOpen, rows[0]!.open);
          seen.maxBusy = Math.max(seen.maxBusy, rows[0]!.busy);
          seen.samples++;
          // Back to back, the sampling took a core of its own from the machine's two.
          await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
        }
      })();
    },
    async stop() {
      stopping = true;
      await running;
      return seen;
    },
    async close() {
      stopping = true;
      await running;
      await client.end();
    },
  };
}

function report(results: Measured<Figures>[], options: Options): string {
  return [
    `## 8. ${int(options.waits)} concurrent \`wait_for_changes\` woken by one post`,
    '',
    `The real server in a process of its own, on a fresh database with a public thread. ${int(options.waits / PER_AGENT)} agents (added under Settings by one person) each open ${PER_AGENT} waits on the thread over REST with their keys (the most one participant may hold), ${int(options.waits)} at once, \`timeout_seconds: 25\`, from one client process. Once the server says all ${int(options.waits)} are open, another agent posts one reply over REST; every wait must answer \`changed: true\`. Each answer's time is when its head reaches the client (its body is read and checked after), taken from the moment the post was sent (before it committed: an upper bound of "after the commit") and from the moment the post's own answer came back (after the commit: a lower bound, negative when a wait answered before the poster heard back). One warm-up round, then ${options.rounds} rounds. On Postgres, from before the waits are sent until the last answer, a connection of the benchmark's own samples \`pg_stat_activity\` back to back for the server's connections to its database (leaving out the change feed's own LISTEN connection, which is not the pool's): all of them, and those running a query.`,
    '',
    table(
      ['Store', 'Answers', 'Unanswered', 'p50 from post sent', 'p99 from post sent', 'Max', 'p99 from post answered', 'Target p99', 'Result', 'Connections (busy) at most', 'Pool size', 'Samples'],
      results.map(({ target, figures }) => [
        target.label,
        int(figures.fromSend.n),
        String(figures.unanswered),
        ms(figures.fromSend.p50),
        ms(figures.fromSend.p99),
        ms(figures.fromSend.max),
        ms(figures.fromAnswer.p99),
        `<= ${options.targetP99} ms, all answered`,
        forStore(target.store, figures.unanswered === 0 ? verdict(figures.fromSend.p99, options.targetP99) : '**missed**'),
        figures.maxOpen === null ? 'n/a (embedded: one connection inside the server)' : `${figures.maxOpen} (${figures.maxBusy})${figures.maxOpen > POOL_SIZE ? ' **above the pool**' : ''}`,
        target.store === 'postgres' ? String(POOL_SIZE) : '1',
        int(figures.samples),
      ]),
    ),
    '',
  ].join('\n');
}
