/**
 * Load spread the way many users spread it, so that the server's capacity is measured and not its
 * limits (SPEC part 8): writes and agent reads rotate over enough agents and pads that no rolling
 * window per participant or per pad fills, and signed-out reads (and sign-ins) come from enough
 * loopback addresses (127.0.0.0/8, each client socket bound to its own) that no per-IP window fills.
 */
import http from 'node:http';
import { rawRequest, type Reachable } from '../support/server.ts';
import { manyAgents, type BenchAgent, type SignedIn } from './seeded.ts';
import { makePad, restOk } from './setup.ts';

/**
 * `n` agents of one person (`person`, or one signed in here) in a hub the first of them made, the
 * others let in (`join_hub`, then `moderate` action `let_in`), each with a pad of its own holding
 * `text`. One person's agents working among themselves: the hourly pool of a human's agents counts
 * only where someone else takes part.
 */
export async function spreadEditors(server: Reachable, n: number, title: string, text: string, person?: SignedIn) {
  const agents = await manyAgents(server, n, person);
  const hub = await restOk(server, agents[0]!.key, 'create_hub', { name: `${title} hub` });
  for (const agent of agents.slice(1)) {
    await restOk(server, agent.key, 'join_hub', { hub: hub.slug });
    await restOk(server, agents[0]!.key, 'moderate', { hub: hub.slug, action: 'let_in', who: agent.id });
  }
  const pads: { padId: string; version: number; agent: BenchAgent }[] = [];
  for (const [i, agent] of agents.entries()) pads.push({ ...(await makePad(server, agent.key, hub.slug, `${title} ${i + 1}`, text)), agent });
  return { agents, hubSlug: hub.slug as string, pads };
}

/** The `i`th loopback address past 127.10.0.0 (Linux answers on all of 127.0.0.0/8). */
export const loopbackAddress = (i: number) => `127.${10 + ((i >> 16) & 0xff)}.${(i >> 8) & 0xff}.${i & 0xff}`;

/** Requests one source address makes before its worker moves to an address not used before. */
export const REQUESTS_PER_ADDRESS = 100;

/** Loopback addresses taken by this process so far: none is taken twice, whichever stretch took it. */
let addressesTaken = 0;
export const loopbackAddressesTaken = () => addressesTaken;

/**
 * `people` people, each with `n` agents of their own working in a hub of their own as `spreadEditors`
 * seats them, so that nobody's hourly pool counts. Each person signs in from a loopback address
 * nobody used before: the sign-in form takes 30 a network per 10 minutes.
 */
export async function spreadPeople(server: Reachable, people: number, n: number, title: string, text: string) {
  const worlds = [];
  for (let i = 0; i < people; i++) {
    const name = `${title} person ${i + 1}`;
    const person = await signInFrom(server, name, `bench-person-${i + 1}-${Date.now()}@example.com`, loopbackAddress(addressesTaken++));
    worlds.push(await spreadEditors(server, n, name, text, person));
  }
  return worlds;
}

/** The development sign-in, its request sent from `localAddress` (a loopback address). */
async function signInFrom(server: Reachable, name: string, email: string, localAddress: string): Promise<SignedIn> {
  const reply = await rawRequest(`${server.url}/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1' },
    body: JSON.stringify({ name, email }),
    localAddress,
  });
  const cookie = reply.headers['set-cookie']?.find((c) => c.startsWith('svc_session='))?.split(';')[0];
  if (reply.status !== 200 || !cookie) throw new Error(`sign-in from ${localAddress} failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { cookie, id: reply.body.participant.id };
}

/**
 * `concurrency` workers of GETs, each on a kept-alive `node:http` socket bound to a loopback address
 * of its own; after REQUESTS_PER_ADDRESS requests a worker closes it and takes an address nobody used
 * before (a new connection every 100 requests), so every address stays under the per-IP window (120
 * a minute for signed-out reads) whatever the rate. Each answer must have the expected status; its
 * body is drained unread.
 */
export function spreadGets(url: string, headers: Record<string, string>, expectStatus: number, concurrency: number) {
  const target = new URL(url);
  const workers = Array.from({ length: concurrency }, () => {
    let agent: http.Agent | null = null;
    let localAddress = '';
    let used = 0;
    const get = () => {
      if (!agent || used === REQUESTS_PER_ADDRESS) {
        agent?.destroy();
        agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        localAddress = loopbackAddress(addressesTaken++);
        used = 0;
      }
      used++;
      const options = { agent, localAddress, hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers };
      return new Promise<void>((resolve, reject) => {
        const request = http.get(options, (response) => {
          response.resume();
          response.on('end', () => (response.statusCode === expectStatus ? resolve() : reject(new Error(`GET ${url} answered ${response.statusCode}, expected ${expectStatus}`))));
          response.on('error', reject);
        });
        request.on('error', reject);
      });
    };
    return { get, close: () => agent?.destroy() };
  });
  return { workers: workers.map((worker) => worker.get), close: () => workers.forEach((worker) => worker.close()) };
}

/**
 * `workers` closed-loop workers over `items`, each turning through its own share of them one call
 * at a time (worker w takes items w, w + workers, ...), so the calls fall evenly on every item.
 */
export function rotating<T>(items: readonly T[], workers: number, call: (item: T) => Promise<void>): (() => Promise<void>)[] {
  return Array.from({ length: workers }, (_, w) => {
    const share = items.filter((_, i) => i % workers === w);
    let turn = 0;
    return () => call(share[turn++ % share.length]!);
  });
}
