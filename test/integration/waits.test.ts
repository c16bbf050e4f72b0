import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'slonik';
import { deliver } from '../../server/core/inbox/inbox.ts';
import { agentDoors } from '../support/agentDoors.ts';
import { appTool, instancePair, poke, registerAgent, rest, signIn, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/**
 * wait_for_changes (SPEC part 6, part 8 "Reads"): a wait is answered by a change made through any
 * door and on any instance, holds no database connection while it waits, and a participant keeps at
 * most 4 open.
 */

type Agent = { key: string; id: string; handle: string };

const redisUrl = process.env.TEST_REDIS_URL;
if (process.env.CI === 'true' && !redisUrl) throw new Error('CI=true needs TEST_REDIS_URL: the waits across instances may not be skipped.');

describe.each(stores())('wait_for_changes on %s', (store) => {
  let server: TestServer;
  let person: { cookie: string; id: string };
  let waiter: Agent;
  let poster: Agent;
  let hub: { hub_id: string; slug: string };
  let doors: ReturnType<typeof agentDoors>;

  /** Seats agents in the person's hub, straight in the store (seating is the members suite's business). */
  const seat = (...agents: Agent[]) =>
    Promise.all(agents.map((agent) => poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${agent.id}, 'member')`)));

  async function newThread(title: string) {
    const started = await appTool(server, person.cookie, 'start_thread', { hub: hub.slug, title, body: 'Anyone?' });
    expect(started.status, started.text).toBe(200);
    return { id: started.body.data.thread_id as string, version: Number(started.body.data.version ?? 1) };
  }

  const threadVersion = async (threadId: string) => {
    const reply = await rest(server, waiter.key, 'open_thread', { thread_id: threadId });
    expect(reply.status, reply.text).toBe(200);
    return Number(reply.body.data.version);
  };

  /** Resolves once this many waits are open on the server: they are filed, so a change now must wake them. */
  const open = (on: Pick<TestServer, 'core'>, n: number) => expect.poll(() => on.core.waits.size, { interval: 20 }).toBe(n);

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
    person = await signIn(server, 'Pia Person', 'pia@example.com');
    hub = (await appTool(server, person.cookie, 'create_hub', { name: 'Waiting Room' })).body.data;
    [waiter, poster] = await Promise.all([registerAgent(server, 'Waiting Wanda'), registerAgent(server, 'Posting Paul')]);
    await seat(waiter, poster);
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  const posts: Record<'rest' | 'mcp' | 'web', (threadId: string, body: string) => Promise<unknown>> = {
    rest: async (threadId, body) => expect((await doors.call('rest', poster, 'post_reply', { thread_id: threadId, body })).ok).toBe(true),
    mcp: async (threadId, body) => expect((await doors.call('mcp', poster, 'post_reply', { thread_id: threadId, body })).ok).toBe(true),
    web: async (threadId, body) => expect((await appTool(server, person.cookie, 'post_reply', { thread_id: threadId, body })).status).toBe(200),
  };

  it.each(['rest', 'mcp', 'web'] as const)('a wait on a thread is answered by a post made through %s', async (door) => {
    const thread = await newThread(`Posted through ${door}`);
    const have = await threadVersion(thread.id);
    const waiting = rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id, version: have, timeout_seconds: 25 });
    await open(server, 1);
    await posts[door](thread.id, `Hello through ${door}.`);
    const answered = await waiting;
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body.data).toMatchObject({ thread_id: thread.id, changed: true });
    expect(Number(answered.body.data.version)).toBe(await threadVersion(thread.id));
    expect(Number(answered.body.data.version)).toBeGreaterThan(have);
    await open(server, 0);
  });

  it('a wait is answered at once when the version it has is already behind', async () => {
    const thread = await newThread('Behind');
    const answered = await rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id, version: 0, timeout_seconds: 25 });
    expect(answered.body.data).toMatchObject({ thread_id: thread.id, changed: true, version: String(await threadVersion(thread.id)) });
  });

  it('a wait needs a version with what it watches, and something to watch', async () => {
    const thread = await newThread('Nothing asked');
    const noVersion = await rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.issues[0].path).toBe('version');
    const nothing = await rest(server, waiter.key, 'wait_for_changes', { version: 1 });
    expect(nothing.status).toBe(400);
    expect(nothing.body.error).toBe('invalid');
  });

  it('the fifth wait of one participant is refused with rate_limited and retry_after_seconds; the four are answered by a change', async () => {
    const thread = await newThread('Four at most');
    const have = await threadVersion(thread.id);
    const four = [1, 2, 3, 4].map(() => rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id, version: have, timeout_seconds: 25 }));
    await open(server, 4);
    const fifth = await rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id, version: have, timeout_seconds: 25 });
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get('retry-after')).toBe('1');
    expect(fifth.body).toMatchObject({ error: 'rate_limited', retry_after_seconds: 1 });
    // Over MCP the same refusal, as a tool error.
    const overMcp = await doors.call('mcp', waiter, 'wait_for_changes', { thread_id: thread.id, version: have, timeout_seconds: 25 });
    expect(overMcp.ok).toBe(false);
    expect(overMcp.body).toMatchObject({ error: 'rate_limited', retry_after_seconds: 1 });
    // Someone else still may.
    const other = rest(server, poster.key, 'wait_for_changes', { thread_id: thread.id, version: have, timeout_seconds: 25 });
    await open(server, 5);
    await posts.web(thread.id, 'Wake up, all of you.');
    for (const answered of await Promise.all([...four, other])) expect(answered.body.data.changed).toBe(true);
    await open(server, 0);
  });

  it('a wait whose caller went away is let go at once, through REST, MCP and the web door, so a closed tab holds none of the four', async () => {
    const thread = await newThread('Gone away');
    const have = await threadVersion(thread.id);
    const args = { thread_id: thread.id, version: have, timeout_seconds: 25 };
    const leaving = new AbortController();
    const call = (url: string, headers: Record<string, string>, body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: leaving.signal }).catch(() => null);
    const agentHeaders = { authorization: `Bearer ${waiter.key}` };
    call(`${server.url}/api/v1/tools/wait_for_changes`, agentHeaders, args);
    call(`${server.url}/api/v1/tools/wait_for_changes`, agentHeaders, args);
    call(`${server.url}/mcp`, { ...agentHeaders, accept: 'application/json, text/event-stream' }, {
      jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait_for_changes', arguments: args },
    });
    call(`${server.url}/api/tools/wait_for_changes`, { cookie: person.cookie, 'x-svc': '1' }, args);
    await open(server, 4);
    leaving.abort();
    // All four are let go when their callers leave, long before their 25 seconds could run out (the
    // bound tells the two apart, with room for a slow machine); the agent may wait four times again.
    await expect.poll(() => server.core.waits.size, { timeout: 15_000, interval: 20 }).toBe(0);
    const again = [1, 2, 3, 4].map(() => rest(server, waiter.key, 'wait_for_changes', args));
    await open(server, 4);
    await posts.web(thread.id, 'Anyone still here?');
    for (const answered of await Promise.all(again)) expect(answered.body.data.changed).toBe(true);
  });

  describe('the inbox', () => {
    /** An item for the waiter from the poster about a thread of the hub, put in its inbox as the tools put them. */
    const notice = (threadId: string, summary: string) =>
      server.core.db.write((tx) => deliver(tx, [{ to: waiter.id, kind: 'mention', from: poster.id, thread_id: threadId, summary }]));
    const ackAll = async () => {
      const page = await rest(server, waiter.key, 'check_inbox', { limit: 200 });
      expect(page.status, page.text).toBe(200);
      if (page.body.data.items.length) await rest(server, waiter.key, 'check_inbox', { ack_up_to: page.body.data.next_cursor, limit: 1 });
      return page.body.data.next_cursor as string;
    };

    it('inbox: true alone waits for the next item and is answered by it', async () => {
      const thread = await newThread('Mind the inbox');
      await ackAll();
      const waiting = rest(server, waiter.key, 'wait_for_changes', { inbox: true, timeout_seconds: 25 });
      await open(server, 1);
      await notice(thread.id, 'You were mentioned.');
      const answered = await waiting;
      expect(answered.status, answered.text).toBe(200);
      expect(answered.body.data).toMatchObject({ inbox: true, changed: true });
      expect(answered.body.data.thread_id).toBeUndefined();
      expect(answered.body.text).toContain('check_inbox');
    });

    it('with inbox_cursor, only items after it answer; an unacked item without a cursor answers at once', async () => {
      const thread = await newThread('After the cursor');
      await ackAll();
      await notice(thread.id, 'An older item.');
      const unacked = await rest(server, waiter.key, 'wait_for_changes', { inbox: true, timeout_seconds: 25 });
      expect(unacked.body.data).toMatchObject({ inbox: true, changed: true });

      const cursor = (await rest(server, waiter.key, 'check_inbox', {})).body.data.next_cursor as string;
      const quiet = await rest(server, waiter.key, 'wait_for_changes', { inbox: true, inbox_cursor: cursor, timeout_seconds: 1 });
      expect(quiet.body.data).toMatchObject({ inbox: false, changed: false });

      const have = await threadVersion(thread.id);
      const waiting = rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id, version: have, inbox: true, inbox_cursor: cursor, timeout_seconds: 25 });
      await open(server, 1);
      // Another participant's item wakes nobody here.
      await server.core.db.write((tx) => deliver(tx, [{ to: poster.id, kind: 'mention', from: waiter.id, thread_id: thread.id, summary: 'Not yours.' }]));
      await notice(thread.id, 'A newer item.');
      const answered = await waiting;
      expect(answered.body.data).toMatchObject({ thread_id: thread.id, version: String(have), inbox: true, changed: true });
    });

    it('a thread and the inbox in one wait: the thread answers, the inbox says nothing came', async () => {
      const thread = await newThread('Either');
      const cursor = await ackAll();
      const have = await threadVersion(thread.id);
      const waiting = rest(server, waiter.key, 'wait_for_changes', { thread_id: thread.id, version: have, inbox: true, inbox_cursor: cursor, timeout_seconds: 25 });
      await open(server, 1);
      await posts.rest(thread.id, 'A post, no mention.');
      const answered = await waiting;
      expect(answered.body.data).toMatchObject({ thread_id: thread.id, changed: true, inbox: false });
    });
  });

  it('50 open waits hold no database connection; one post answers all those on its thread', async () => {
    const agents = await Promise.all(Array.from({ length: 13 }, (_, i) => registerAgent(server, `Patient ${i}`)));
    await seat(...agents);
    const thread = await newThread('Many waiting');
    const pad = (await appTool(server, person.cookie, 'create_pad', { hub: hub.slug, title: 'Quiet pad', text: 'Nobody edits this.' })).body.data;
    const have = await threadVersion(thread.id);
    const idle = server.core.db.pool.state().acquiredConnections;
    const activeBackends = store === 'postgres' ? await backendsInUse(server) : null;
    const baseline = activeBackends ? await activeBackends.count() : 0;

    const waits = Array.from({ length: 50 }, (_, i) =>
      rest(server, agents[i % agents.length]!.key, 'wait_for_changes', i < 40 ? { thread_id: thread.id, version: have, timeout_seconds: 25 } : { pad_id: pad.pad_id, version: pad.version, timeout_seconds: 25 }),
    );
    await open(server, 50);
    // A wait is counted once filed, before its first check has read the version: let those reads end.
    await expect.poll(() => server.core.db.pool.state().acquiredConnections, { interval: 20 }).toBe(idle);
    if (activeBackends) await expect.poll(() => activeBackends.count()).toBe(baseline);
    for (let sample = 0; sample < 20; sample++) {
      expect(server.core.db.pool.state().acquiredConnections).toBe(idle);
      if (activeBackends) expect(await activeBackends.count()).toBe(baseline);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await activeBackends?.close();

    await posts.rest(thread.id, 'Here it is.');
    await open(server, 10);
    // The pad's waits are still waiting: nothing changed there. Move it to answer them.
    const [block] = (await rest(server, waiter.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data.blocks as string[];
    expect((await appTool(server, person.cookie, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: block, text: 'Someone did.' }] })).status).toBe(200);
    const answers = await Promise.all(waits);
    expect(answers.map((answer) => answer.body.data.changed)).toEqual(Array(50).fill(true));
  });

  // Instances share one Postgres database (PGlite is one instance, and has no other to wake); CI requires Redis for them.
  if (store === 'postgres') describe.skipIf(!redisUrl)('across instances', { tags: ['heavy'] }, () => {
    const closers: (() => void | Promise<void>)[] = [];
    afterAll(async () => {
      for (const close of closers.reverse()) await close();
    });

    it('a wait on one instance is answered by a post and by a pad edit made on the other', async () => {
      const [a, b] = await instancePair(redisUrl!, closers);
      const agent = await registerAgent(a, 'Two Places');
      const madeHub = (await rest(a, agent.key, 'create_hub', { name: 'Both sides' })).body.data;
      const thread = (await rest(a, agent.key, 'start_thread', { hub: madeHub.slug, title: 'Across', body: 'From A.' })).body.data;
      const pad = (await rest(a, agent.key, 'create_pad', { hub: madeHub.slug, title: 'Across', text: 'From A.' })).body.data;
      const have = Number((await rest(a, agent.key, 'open_thread', { thread_id: thread.thread_id })).body.data.version);

      const onThread = rest(a, agent.key, 'wait_for_changes', { thread_id: thread.thread_id, version: have, timeout_seconds: 25 });
      const onPad = rest(a, agent.key, 'wait_for_changes', { pad_id: pad.pad_id, version: pad.version, timeout_seconds: 25 });
      await open(a, 2);
      expect((await rest(b, agent.key, 'post_reply', { thread_id: thread.thread_id, body: 'From B.' })).status).toBe(200);
      expect((await onThread).body.data).toMatchObject({ thread_id: thread.thread_id, changed: true, version: String(have + 1) });
      const [block] = (await rest(b, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data.blocks as string[];
      expect((await rest(b, agent.key, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: block, text: 'From B.' }] })).status).toBe(200);
      expect((await onPad).body.data).toMatchObject({ pad_id: pad.pad_id, changed: true, version: pad.version + 1 });
    });
  });
});

/** Backends of the server's database doing something now (pg_stat_activity), seen from a connection of the test's own. */
async function backendsInUse(server: Reachable & Pick<TestServer, 'core'>) {
  const url = process.env.TEST_DATABASE_URL!;
  const name = (await server.core.db.pool.oneFirst(sql.unsafe`SELECT current_database() AS name`)) as string;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    async count() {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state IS DISTINCT FROM 'idle'",
        [name],
      );
      return rows[0]!.n;
    },
    close: () => client.end(),
  };
}
