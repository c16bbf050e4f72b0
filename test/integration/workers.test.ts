// @module-tag heavy
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { childrenOf, spawnWorkers, type ServerProcess } from '../crash/spawnServer.ts';
import { durableStore, openEditorsInTurn, registerAgent, request, rest, signIn, typeInto } from '../support/server.ts';

/**
 * `npm start` with WORKERS=2 (api/workers.ts): two processes on one port, each an instance on the same
 * Postgres and Redis. node:cluster hands each new connection to the next worker, so editors opened one
 * after another sit on both. Runs when TEST_REDIS_URL and TEST_DATABASE_URL name servers; in CI both
 * are required.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const databaseUrl = process.env.TEST_DATABASE_URL;
if (process.env.CI === 'true' && (!redisUrl || !databaseUrl)) {
  throw new Error('CI=true needs TEST_REDIS_URL and TEST_DATABASE_URL: the workers suite may not be skipped.');
}

/**
 * Which of `pids` holds the server's end (port `serverPort`) of the established TCP connection from
 * local port `clientPort`: the socket's inode in /proc/net/tcp{,6}, among each process's open files
 * (Linux).
 */
function holderOf(pids: readonly number[], serverPort: number, clientPort: number): number | undefined {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, remote, state, , , , , , node] = line.trim().split(/\s+/);
      if (state === '01' && local?.endsWith(hex(serverPort)) && remote?.endsWith(hex(clientPort))) inode = node;
    }
  }
  if (!inode || inode === '0') return undefined;
  const holds = (pid: number) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  };
  return pids.find(holds);
}

type Answer = { status: number; body: any; text: string };

/** One request on `socket`, a connection of its own: with no agent, Node sends `Connection: close`, and the connection ends with the answer. */
function requestOn(socket: Socket, url: string, init: { headers: Record<string, string>; body: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: init.headers, createConnection: () => socket }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let body: any = undefined;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode!, body, text });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * Requests to a chosen worker of a WORKERS server, each on a new TCP connection. node:cluster hands
 * each new connection to the next worker in turn, and every request on a connection goes to the worker
 * that took it (fetch keeps its connections alive, so its requests may all reach one worker). So a new
 * connection is opened, the worker holding its server end is read from /proc, and the connection is
 * used if that is the worker asked for, else closed unused: the next one goes to the other. What a
 * worker answers is then known to be that worker's answer, and a test that means both workers fails
 * with one.
 */
function workersOf(server: ServerProcess) {
  const port = Number(new URL(server.url).port);
  const workers = childrenOf(server.pid);

  /** A new connection, and the worker it was handed to (the primary accepts it and hands it on within milliseconds). */
  async function connection() {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let worker: number | undefined;
    await expect.poll(() => (worker = holderOf(workers, port, socket.localPort!)), { interval: 5, timeout: 10_000 }).toBeDefined();
    return { socket, worker: worker! };
  }

  /** A new connection that `worker` took; within 30 s, for a worker still starting takes none. */
  async function connectTo(worker: number): Promise<Socket> {
    let taken: Socket | undefined;
    await expect
      .poll(
        async () => {
          const opened = await connection();
          if (opened.worker === worker) taken = opened.socket;
          else opened.socket.destroy();
          return opened.worker;
        },
        { interval: 20, timeout: 30_000 },
      )
      .toBe(worker);
    return taken!;
  }

  /** A POST to `worker` on a connection of its own; resolves once the connection is there, with the answer still to come. */
  async function send(worker: number, path: string, headers: Record<string, string>, args: unknown): Promise<{ answer: Promise<Answer> }> {
    const socket = await connectTo(worker);
    return { answer: requestOn(socket, `${server.url}${path}`, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(args) }) };
  }

  return {
    workers,
    send,
    /** A REST tool call with a Bearer key, answered by `worker`. */
    tool: async (worker: number, key: string, tool: string, args: unknown) => (await send(worker, `/api/v1/tools/${tool}`, { authorization: `Bearer ${key}` }, args)).answer,
  };
}

/** The refusal of a fifth open wait of one participant (SPEC part 8 "Reads"). */
const waitsFull = (answer: Answer) => answer.body?.error === 'rate_limited' && /waits are open/.test(answer.body.message);

describe.skipIf(!redisUrl || !databaseUrl)('npm start with WORKERS', () => {
  const closers: (() => void | Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });
  /** `npm start` with WORKERS=2 on a fresh Postgres database and the local Redis; both gone after the suite. */
  const twoWorkers = async (): Promise<ServerProcess> => {
    const store = await durableStore('postgres');
    closers.push(() => store.drop());
    const server = await spawnWorkers({ ...store.env, REDIS_URL: redisUrl! }, 2);
    closers.push(() => server.stop());
    return server;
  };

  it('runs two workers on one port that share live pads both ways, and starts a killed one again', async () => {
    const server = await twoWorkers();
    expect(childrenOf(server.pid)).toHaveLength(2);

    const agent = await registerAgent(server, 'Worker Writer');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Workers' });
    const pad = await rest(server, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Shared', text: 'First.\n\nSecond.' });
    const padId = pad.body.data.pad_id as string;
    // Four editors, opened one after another: two on each worker.
    const editors = await openEditorsInTurn(server, padId, agent.key, 4, closers);
    const [first, second] = editors[0]!.blocks();

    // An edit through the API, on whichever worker takes it, reaches every editor.
    const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: first!.id, text: 'First, edited.' }] });
    expect(edited.body.data).toMatchObject({ version: 2, conflicts: [] });
    for (const editor of editors) await expect.poll(() => editor.text()).toBe('First, edited.\n\nSecond.');

    // Typing in the first editor reaches the others, on both workers.
    typeInto(editors[0]!.document, editors[0]!.fragment, second!.id, 0, 'Typed: ');
    for (const editor of editors.slice(1)) await expect.poll(() => editor.text()).toBe('First, edited.\n\nTyped: Second.');

    // A worker killed is started again in its place; the editors it held connect again, and an edit
    // made after reaches all four.
    const [victim] = childrenOf(server.pid);
    execFileSync('kill', ['-9', String(victim)]);
    await expect.poll(() => childrenOf(server.pid).filter((pid) => pid !== victim), { timeout: 20_000, interval: 200 }).toHaveLength(2);
    const opened = await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' });
    const after = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: opened.body.data.version, edits: [{ block_id: first!.id, text: 'First, after the kill.' }] });
    expect(after.status, after.text).toBe(200);
    for (const editor of editors) await expect.poll(() => editor.text(), { timeout: 20_000 }).toBe('First, after the kill.\n\nTyped: Second.');
  });

  it('wakes waits on both workers whichever takes the post, and refuses a removed member and a revoked key on both within 5 s', async () => {
    const server = await twoWorkers();
    const cluster = workersOf(server);
    expect(cluster.workers).toHaveLength(2);
    const [first, second] = cluster.workers as [number, number];

    // An owner's hub and thread; a person's two agents join it with an invite.
    const owner = await registerAgent(server, 'Hub Owner');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Across workers' })).body.data;
    const threadId = (await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Waited on', body: 'Anyone?' })).body.data.thread_id as string;
    const invite = (await rest(server, owner.key, 'invite', { to: hub.slug, uses: 2 })).body.data;
    const person = await signIn(server, 'Pat Person', `pat-${randomUUID()}@example.com`);
    const settings = { cookie: person.cookie, 'x-svc': '1', origin: server.url };
    const addAgent = async (name: string) => {
      const made = await request(`${server.url}/api/settings/create-agent`, { method: 'POST', headers: { 'content-type': 'application/json', ...settings }, body: JSON.stringify({ name }) });
      expect(made.status, made.text).toBe(201);
      return { key: made.body.agent_key as string, id: made.body.agent.id as string };
    };
    const [leaving, revoked] = [await addAgent('Leaving'), await addAgent('Revoked')];
    for (const member of [leaving, revoked]) expect((await rest(server, member.key, 'join_hub', { invite: invite.url.split('#')[1] })).status).toBe(200);

    // Wake-ups. Each member opens its 4 waits (the most it may) on one worker, each on a connection
    // of its own: `leaving` on the first worker, `revoked` on the second.
    const have = Number((await rest(server, owner.key, 'open_thread', { thread_id: threadId })).body.data.version);
    const waitFor = { thread_id: threadId, version: have, timeout_seconds: 25 };
    const holders = [
      [first, leaving.key],
      [second, revoked.key],
    ] as const;
    const waits: Promise<Answer>[] = [];
    for (const [worker, key] of holders) {
      for (let i = 0; i < 4; i++) {
        let sent = await cluster.send(worker, '/api/v1/tools/wait_for_changes', { authorization: `Bearer ${key}` }, waitFor);
        waits.push(
          (async () => {
            // Refused only while a probe below held one of the four for a moment: sent again.
            for (;;) {
              const answer = await sent.answer;
              if (!waitsFull(answer)) return answer;
              sent = await cluster.send(worker, '/api/v1/tools/wait_for_changes', { authorization: `Bearer ${key}` }, waitFor);
            }
          })(),
        );
        // Awaited below; marked handled now, so a failure before then is reported once, there.
        waits.at(-1)!.catch(() => {});
      }
    }
    // A fifth wait of the member on the same worker is refused once its four are counted, which is
    // when they are filed: only then is the post made, so it is the post that must wake them (a wait
    // filed after would answer at once, whether the post was heard or not). A probe asks about an older
    // version: let in, it is answered at once and holds nothing.
    for (const [worker, key] of holders) {
      await expect.poll(async () => waitsFull(await cluster.tool(worker, key, 'wait_for_changes', { ...waitFor, version: have - 1 })), { interval: 50 }).toBe(true);
    }
    // The post is taken by the first worker: the second worker's four waits are woken only by what it
    // hears from the first (the change feed), or they answer `changed: false` after 25 s.
    const posted = await cluster.tool(first, owner.key, 'post_reply', { thread_id: threadId, body: 'Heard on both workers?' });
    expect(posted.status, posted.text).toBe(200);
    for (const answer of await Promise.all(waits)) expect(answer.body?.data, answer.text).toMatchObject({ thread_id: threadId, changed: true, version: String(have + 1) });

    // Removal and revocation. Both members read the hub on both workers, each read on a connection of
    // its own, so each worker holds their key lookups and its kept reads of the hub.
    const openHub = (worker: number, key: string) => cluster.tool(worker, key, 'open_hub', { hub: hub.slug });
    for (const worker of [first, second, first, second]) {
      for (const key of [leaving.key, revoked.key]) expect((await openHub(worker, key)).status).toBe(200);
    }
    const credentials = await request(`${server.url}/api/settings/credentials`, { method: 'POST', headers: { 'content-type': 'application/json', ...settings }, body: '{}' });
    const credentialId = credentials.body.credentials.find((c: { participant_id: string; kind: string }) => c.participant_id === revoked.id && c.kind === 'agent_key').id as string;

    // Through the first worker, the owner removes `leaving` and the person revokes `revoked`'s key.
    const [removed, revocation] = await Promise.all([
      cluster.tool(first, owner.key, 'moderate', { hub: hub.slug, action: 'remove', who: leaving.id }),
      cluster.send(first, '/api/settings/revoke', settings, { credential_id: credentialId }).then((sent) => sent.answer),
    ]);
    expect(removed.body?.data?.changed, removed.text).toBe(true);
    expect(revocation.body?.status, revocation.text).toBe('revoked');
    // Within 5 s (SPEC part 5), four reads in a row of each, each on a new connection, two on each
    // worker, are refused.
    await expect
      .poll(
        async () => {
          const refusals: [string, number][] = [];
          for (const worker of [first, second, first, second]) refusals.push([(await openHub(worker, leaving.key)).body?.error, (await openHub(worker, revoked.key)).status]);
          return refusals;
        },
        { timeout: 5_000, interval: 50 },
      )
      .toEqual(Array(4).fill(['not_found', 401]));
  });

  it('refuses more than one worker on the embedded store, or without Redis, saying what to set', () => {
    const run = (env: Record<string, string>) => {
      const clean: Record<string, string | undefined> = { ...process.env };
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'SVC_DATA_DIR', 'WORKERS']) delete clean[name];
      return spawnSync(process.execPath, ['api/main.ts'], { env: { ...clean, SVC_DATA_DIR: 'memory://', PORT: '0', ...env }, encoding: 'utf8', timeout: 30_000 });
    };
    const embedded = run({ WORKERS: '2' });
    expect(embedded.status).not.toBe(0);
    expect(embedded.stderr).toContain('WORKERS: 2 processes need DATABASE_URL (Postgres) and REDIS_URL');
    const noRedis = run({ WORKERS: '2', DATABASE_URL: databaseUrl! });
    expect(noRedis.status).not.toBe(0);
    expect(noRedis.stderr).toContain('WORKERS: 2 processes need REDIS_URL');
  });
});
