/**
 * What the search, inbox and wait benchmarks share: a fresh database filled by a server in this
 * process (which can reach the store: PGlite lives inside its server), in bulk SQL where the tools'
 * own pace limits would take hours, then served by the real server in a process of its own.
 */
import { durableStore, request, signIn, startTestServer, type Reachable, type Store, type TestServer } from '../support/server.ts';
import { startServerProcess, type ServerProcess } from './setup.ts';
import { percentile } from './stats.ts';

export type Seeded<T> = { server: ServerProcess; seeded: T; databaseUrl: string | null; close(): Promise<void> };

/** Seeds a fresh database of `store` with `seed`, then serves it from a server process started with `env`. */
export async function seededServer<T>(store: Store, env: Record<string, string>, seed: (server: TestServer) => Promise<T>): Promise<Seeded<T>> {
  const database = await durableStore(store);
  const all = { ...database.env, ...env };
  try {
    const seeder = await startTestServer(store, all);
    let seeded: T;
    try {
      seeded = await seed(seeder);
    } finally {
      await seeder.close();
    }
    const server = await startServerProcess(all);
    return {
      server,
      seeded,
      databaseUrl: database.env.DATABASE_URL ?? null,
      async close() {
        await server.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

export type BenchAgent = { key: string; id: string };

/** A person signed in through the web: their session cookie and id. */
export type SignedIn = Awaited<ReturnType<typeof signIn>>;

/**
 * `n` agents added under Settings by one person (1,000 an hour per person), `person` or one signed in
 * here (sign-ins are limited per network: 30 per 10 minutes).
 */
export async function manyAgents(server: Reachable, n: number, person?: SignedIn): Promise<BenchAgent[]> {
  person ??= await signIn(server, 'Bench person', `bench-${n}-${Date.now()}@example.com`);
  const agents: BenchAgent[] = [];
  for (let i = 0; i < n; i++) {
    const reply = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: `Bench agent ${i + 1}` }),
    });
    if (reply.status !== 201) throw new Error(`create-agent failed: ${reply.status} ${reply.text}`);
    agents.push({ key: reply.body.agent_key, id: reply.body.agent.id });
  }
  return agents;
}

/** Nearest-rank percentiles of latencies, in milliseconds. */
export function latencies(samples: readonly number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}

export type Latencies = ReturnType<typeof latencies>;

/** A verdict where the target is set for Postgres: on the embedded store it is for reference. */
export const forStore = (store: Store, verdict: string) => (store === 'postgres' ? verdict : `${verdict} (reference: the target is for Postgres)`);
