import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentDoors } from '../support/agentDoors.ts';
import { appTool, poke, registerAgent, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

const Count = z.object({ n: z.number() });
/** The bound a tool's write waits for a connection here; short, so the suite does not wait on it long. */
const WRITE_WAIT_MS = 1_000;
const CRON_SECRET = 'cron-secret-for-the-brakes-0123456789';

/**
 * The brakes of SPEC parts 7 and 8: a crowded database turns writes away as `busy` while reads and
 * waits wait, /healthz tells of stalled writes; the operator's pauses (`503 paused`), a hub's agents
 * paused by its owner or helpers (`423 locked`) and a person pausing their own agent. Reading goes on.
 */
describe.each(stores())('brakes on %s', (store) => {
  let server: TestServer;
  let agent: { key: string; id: string };
  let threadId: string;
  let hubSlug: string;
  let doors: ReturnType<typeof agentDoors>;

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_WRITE_WAIT_MS: String(WRITE_WAIT_MS), CRON_SECRET });
    doors = agentDoors(server);
    agent = await registerAgent(server, 'Busy Bea');
    hubSlug = (await rest(server, agent.key, 'create_hub', { name: 'Crowded Desk' })).body.data.slug;
    threadId = (await rest(server, agent.key, 'start_thread', { hub: hubSlug, title: 'Queue', body: 'First.' })).body.data.thread_id;
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  /**
   * Takes every connection of the server's pool (PGlite has one, Postgres ten), as a crowd of slow
   * queries would; resolves once all are held, with the call that lets them go.
   */
  async function holdEveryConnection(): Promise<() => Promise<void>> {
    const pool = server.core.db.pool;
    const size = pool.configuration.maxPoolSize ?? 10;
    const { promise: gate, resolve: open } = Promise.withResolvers<void>();
    const { promise: allHeld, resolve: held } = Promise.withResolvers<void>();
    let holding = 0;
    const holders = Array.from({ length: size }, () =>
      pool.connect(async () => {
        if (++holding === size) held();
        await gate;
      }),
    );
    await allHeld;
    return async () => {
      open();
      await Promise.all(holders);
    };
  }

  const postsSaying = (body: string) => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM posts WHERE body = ${body}`);
  const threadVersion = async () => Number((await rest(server, agent.key, 'open_thread', { thread_id: threadId })).body.data.version);

  it('turns a write away as 503 busy with Retry-After while reads and waits wait; a retry with its idempotency_key has one effect', async () => {
    const have = await threadVersion();
    // Warm: the key's lookup is kept a few seconds, so the calls below reach the pipeline at once
    // (and the MCP client is connected before the pool is taken).
    expect((await doors.call('mcp', agent, 'open_thread', { thread_id: threadId })).ok).toBe(true);
    const release = await holdEveryConnection();
    let released = false;
    try {
      // A read kept in memory would answer at once; a search asks the database.
      const reading = rest(server, agent.key, 'search_dotpad', { q: 'Queue' });
      const waiting = rest(server, agent.key, 'wait_for_changes', { thread_id: threadId, version: have, timeout_seconds: 25 });
      const args = { thread_id: threadId, body: 'Made once, however often sent.', idempotency_key: 'busy-retry-0001' };
      const refused = await rest(server, agent.key, 'post_reply', args);
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body).toMatchObject({ error: 'busy' });
      expect(refused.body.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(refused.body.retry_after_seconds).toBeLessThanOrEqual(30);
      expect(refused.headers.get('retry-after')).toBe(String(refused.body.retry_after_seconds));
      expect(refused.body.message).toContain('idempotency_key');

      // The same through MCP: an isError result with the same body.
      const overMcp = await doors.call('mcp', agent, 'post_reply', { thread_id: threadId, body: 'Through MCP while crowded.' });
      expect(overMcp.ok).toBe(false);
      expect(overMcp.body).toMatchObject({ error: 'busy' });
      expect(overMcp.body.retry_after_seconds).toBeGreaterThanOrEqual(1);

      // The read and the wait, sent before the writes, are still waiting after both were turned away.
      const settled = await Promise.race([reading.then(() => 'read'), waiting.then(() => 'wait'), Promise.resolve('none')]);
      expect(settled).toBe('none');

      // A write turned away keeps its place in the line; once it has waited 5 s /healthz says writes stall.
      let health!: Reply;
      await expect.poll(async () => (health = await request(`${server.url}/healthz`)).body?.reason, { interval: 100 }).toBe('writes_stalled');
      expect(health.status).toBe(503);
      expect(health.headers.get('retry-after')).toBe('5');
      expect(health.body.waitMs).toBeGreaterThan(5_000);

      await release();
      released = true;
      const read = await reading;
      expect(read.status, read.text).toBe(200);
      expect(JSON.stringify(read.body.data)).toContain(threadId);

      // Nothing of the turned-away writes was made, even though their turn in the line came.
      await expect.poll(() => server.core.db.oldestWriteMs(), { interval: 20 }).toBe(0);
      expect(await postsSaying(args.body)).toBe(0);
      expect(await postsSaying('Through MCP while crowded.')).toBe(0);
      const made = await rest(server, agent.key, 'post_reply', args);
      expect(made.status, made.text).toBe(200);
      expect(made.body.data.replayed).toBeUndefined();
      const again = await rest(server, agent.key, 'post_reply', args);
      expect(again.body.data).toMatchObject({ replayed: true, post_id: made.body.data.post_id });
      expect(await postsSaying(args.body)).toBe(1);

      // The wait was answered by that post, not refused.
      const waited = await waiting;
      expect(waited.status, waited.text).toBe(200);
      expect(waited.body.data).toMatchObject({ thread_id: threadId, changed: true });
      expect((await request(`${server.url}/healthz`)).body).toEqual({ ok: true });
    } finally {
      if (!released) await release();
    }
  });

  it('turns a live pad edit away as busy before it goes live, and its retry with the idempotency_key has one effect', async () => {
    const pad = (await rest(server, agent.key, 'create_pad', { hub: hubSlug, title: 'Crowded pad', text: 'Before.' })).body.data;
    const [block] = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data.blocks as string[];
    const args = { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: block, text: 'After.' }], idempotency_key: 'busy-edit-0001' };
    const release = await holdEveryConnection();
    let released = false;
    try {
      const refused = await rest(server, agent.key, 'edit_pad', args);
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body).toMatchObject({ error: 'busy' });
      expect(refused.headers.get('retry-after')).toBe(String(refused.body.retry_after_seconds));
      await release();
      released = true;
      // Nothing of it was made, live or stored, even once connections came back.
      await expect.poll(() => server.core.db.oldestWriteMs(), { interval: 20 }).toBe(0);
      const unchanged = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body;
      expect(unchanged.data.version).toBe(pad.version);
      expect(unchanged.text).toContain('Before.');
      expect(unchanged.text).not.toContain('After.');
      const made = await rest(server, agent.key, 'edit_pad', args);
      expect(made.status, made.text).toBe(200);
      expect(made.body.data.version).toBe(pad.version + 1);
      const again = await rest(server, agent.key, 'edit_pad', args);
      expect(again.body.data).toMatchObject({ replayed: true, version: pad.version + 1 });
      expect((await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data.version).toBe(pad.version + 1);
    } finally {
      if (!released) await release();
    }
  });

  // Locks held by another session are Postgres's; the embedded store has one connection, tested above.
  if (store === 'postgres') it('a write held up by a lock past the bound is turned away as busy and leaves nothing; reads go on', async () => {
    const args = { thread_id: threadId, body: 'Behind the lock.', idempotency_key: 'behind-the-lock-0001' };
    // Another session takes the posts table for itself (as maintenance would); reading it still works.
    const holder = new pg.Client({ connectionString: server.core.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE posts IN EXCLUSIVE MODE');
      const refused = await rest(server, agent.key, 'post_reply', args);
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body.error).toBe('busy');
      expect(refused.headers.get('retry-after')).toBe(String(refused.body.retry_after_seconds));
      const read = await rest(server, agent.key, 'open_thread', { thread_id: threadId });
      expect(read.status, read.text).toBe(200);
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    const made = await rest(server, agent.key, 'post_reply', args);
    expect(made.status, made.text).toBe(200);
    expect(made.body.data.replayed).toBeUndefined();
    expect(await postsSaying(args.body)).toBe(1);
  });

  if (store === 'postgres') it('a live pad edit held up by a lock on the pads past the bound is turned away as busy and taken back from the live pad', async () => {
    const pad = (await rest(server, agent.key, 'create_pad', { hub: hubSlug, title: 'Locked pad', text: 'Before the lock.' })).body.data;
    const [block] = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data.blocks as string[];
    const holder = new pg.Client({ connectionString: server.core.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE pads IN EXCLUSIVE MODE');
      const refused = await rest(server, agent.key, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: block, text: 'Behind the lock.' }] });
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body.error).toBe('busy');
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    const read = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body;
    expect(read.data.version).toBe(pad.version);
    expect(read.text).toContain('Before the lock.');
    expect(read.text).not.toContain('Behind the lock.');
  });

  /** A person signed in, with an agent of their own added under Settings. */
  async function personWithAgent(name: string) {
    const email = `${name.toLowerCase().replace(/\W+/g, '-')}-${Date.now()}@example.com`;
    const person = await signIn(server, name, email);
    const made = await settingsOp(person.cookie, 'create-agent', { name: `${name}'s agent` });
    expect(made.status, made.text).toBe(201);
    return { ...person, email, agent: { key: made.body.agent_key as string, id: made.body.agent.id as string } };
  }
  const settingsOp = (cookie: string, op: string, body: unknown) =>
    request(`${server.url}/api/settings/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify(body),
    });
  const operator = (path: string, body: unknown, secret: string | null = CRON_SECRET) =>
    request(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
      body: JSON.stringify(body),
    });
  const seat = (hubId: string, who: string, role = 'member') =>
    poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${who}, ${role})`);
  const expectRefused = (reply: Reply, status: number, error: string) => {
    expect(reply.status, reply.text).toBe(status);
    expect(reply.body.error).toBe(error);
  };

  it('the operator pauses posting, guest posting, sign-ups and guest registration behind CRON_SECRET; every pause lifts', async () => {
    expect((await operator('/internal/pause', { what: 'posting' }, null)).status).toBe(401);
    expect((await operator('/internal/pause', { what: 'posting' }, 'not-the-secret-at-all-0000')).status).toBe(401);
    expectRefused(await operator('/internal/pause', { what: 'everything' }), 400, 'invalid');

    const owner = await personWithAgent('Opal Owner');
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Paused Plaza' })).body.data;
    await seat(hub.hub_id, owner.agent.id);
    const thread = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Before the pause', body: 'Open.' })).body.data.thread_id;

    const paused = await operator('/internal/pause', { what: 'posting', note: 'incident 42' });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body.paused).toEqual([expect.objectContaining({ what: 'posting', note: 'incident 42' })]);
    const byAgent = await rest(server, owner.agent.key, 'post_reply', { thread_id: thread, body: 'While paused.' });
    expectRefused(byAgent, 503, 'paused');
    expect(byAgent.body.paused).toBe('posting');
    const overMcp = await doors.call('mcp', owner.agent, 'start_thread', { hub: hub.slug, title: 'Paused?', body: 'Yes.' });
    expect(overMcp.body).toMatchObject({ error: 'paused', paused: 'posting' });
    // A person writing in the web app reads what happened: the message says so.
    const byPerson = await appTool(server, owner.cookie, 'post_reply', { thread_id: thread, body: 'Me too?' });
    expectRefused(byPerson, 503, 'paused');
    expect(byPerson.body.message).toContain('Posting is paused');
    // Reading goes on.
    expect((await rest(server, owner.agent.key, 'open_thread', { thread_id: thread })).status).toBe(200);
    expect((await request(`${server.url}/internal/pauses`, { headers: { authorization: `Bearer ${CRON_SECRET}` } })).body.paused).toHaveLength(1);
    expect((await operator('/internal/unpause', { what: 'posting' })).body.paused).toEqual([]);
    expect((await rest(server, owner.agent.key, 'post_reply', { thread_id: thread, body: 'After the pause.' })).status).toBe(200);

    // Guest posting: agents nobody linked (and guest people) stop; linked agents and people go on.
    const stranger = await registerAgent(server, 'Stray Sam', { unlinked: true });
    await seat(hub.hub_id, stranger.id);
    await operator('/internal/pause', { what: 'guest_posting' });
    const guestPost = await rest(server, stranger.key, 'post_reply', { thread_id: thread, body: 'A guest writes.' });
    expectRefused(guestPost, 503, 'paused');
    expect(guestPost.body.paused).toBe('guest_posting');
    expect((await rest(server, owner.agent.key, 'post_reply', { thread_id: thread, body: 'A linked agent writes.' })).status).toBe(200);
    await operator('/internal/unpause', { what: 'guest_posting' });
    expect((await rest(server, stranger.key, 'post_reply', { thread_id: thread, body: 'The guest again.' })).status).toBe(200);

    // Sign-ups: no agent registers itself and no new person signs up; those who have accounts sign in.
    await operator('/internal/pause', { what: 'signups' });
    const register = await request(`${server.url}/api/v1/agents/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Late Lou' }) });
    expectRefused(register, 503, 'paused');
    await expect(signIn(server, 'New Nell', 'new-nell@example.com')).rejects.toThrow(/503/);
    expect((await signIn(server, 'Opal Owner', owner.email)).id).toBe(owner.id);
    expect((await settingsOp(owner.cookie, 'create-agent', { name: 'Added while paused' })).status).toBe(201);
    await operator('/internal/unpause', { what: 'signups' });
    expect((await signIn(server, 'New Nell', 'new-nell@example.com')).id).toMatch(/^hum_/);

    // Guest registration: nobody joins as a guest by invite.
    const token = ((await appTool(server, owner.cookie, 'invite', { to: hub.slug, uses: 5 })).body.data.url as string).split('#')[1]!;
    const join = () =>
      request(`${server.url}/api/invite/join-guest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url },
        body: JSON.stringify({ token, name: 'Guest Gus' }),
      });
    await operator('/internal/pause', { what: 'guest_registration' });
    expectRefused(await join(), 503, 'paused');
    await operator('/internal/unpause', { what: 'guest_registration' });
    expect((await join()).status).toBe(200);
  });

  it.each(['rest', 'mcp'] as const)('owners and helpers pause a hub’s agents: their writes there are 423 locked, the owner’s and helpers’ agents and people write on (%s)', async (door) => {
    const owner = await personWithAgent(`Hana Host ${door}`);
    const helper = await personWithAgent(`Hal Helper ${door}`);
    const visitor = await personWithAgent(`Vic Visitor ${door}`);
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: `Quiet Room ${door}` })).body.data;
    await seat(hub.hub_id, owner.agent.id);
    await seat(hub.hub_id, helper.id, 'helper');
    // The helper's agent is a helper itself; the owner's is a member whose human owns the hub.
    await seat(hub.hub_id, helper.agent.id, 'helper');
    await seat(hub.hub_id, visitor.id);
    await seat(hub.hub_id, visitor.agent.id);
    const thread = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Quiet please', body: 'Open.' })).body.data.thread_id;

    // A member's agent may not pause the hub's agents.
    const notAllowed = await doors.call(door, visitor.agent, 'moderate', { hub: hub.slug, action: 'pause_agents' });
    expect(notAllowed.body.error).toBe('forbidden');
    expect((await doors.call(door, owner.agent, 'moderate', { hub: hub.slug, action: 'pause_agents' })).body.error).toBe('forbidden');
    const paused = await doors.call(door, helper.agent, 'moderate', { hub: hub.slug, action: 'pause_agents' });
    expect(paused.body).toMatchObject({ slug: hub.slug, agents_paused: true, changed: true });
    expect((await appTool(server, helper.cookie, 'moderate', { hub: hub.slug, action: 'pause_agents' })).body.data).toMatchObject({ agents_paused: true, changed: false });

    const locked = await doors.call(door, visitor.agent, 'post_reply', { thread_id: thread, body: 'Still here?' });
    expect(locked.ok).toBe(false);
    expect(locked.body).toMatchObject({ error: 'locked', paused: 'hub_agents', hub: hub.slug });
    expect(locked.text).toContain('unpause_agents');
    if (door === 'rest') expect((await rest(server, visitor.agent.key, 'post_reply', { thread_id: thread, body: 'Status?' })).status).toBe(423);
    expect((await doors.call(door, visitor.agent, 'open_thread', { thread_id: thread })).ok).toBe(true);
    expect((await doors.call(door, owner.agent, 'post_reply', { thread_id: thread, body: 'The owner’s agent writes on.' })).ok).toBe(true);
    expect((await doors.call(door, helper.agent, 'post_reply', { thread_id: thread, body: 'The helper’s agent writes on.' })).ok).toBe(true);
    expect((await appTool(server, visitor.cookie, 'post_reply', { thread_id: thread, body: 'People write on.' })).status).toBe(200);
    // Elsewhere the visitor's agent writes as before.
    const own = (await rest(server, visitor.agent.key, 'create_hub', { name: `Own corner ${door}` })).body.data.slug;
    expect((await doors.call(door, visitor.agent, 'start_thread', { hub: own, title: 'Mine', body: 'Free here.' })).ok).toBe(true);

    const unpaused = await appTool(server, owner.cookie, 'moderate', { hub: hub.slug, action: 'unpause_agents' });
    expect(unpaused.body.data).toMatchObject({ agents_paused: false, changed: true });
    expect((await doors.call(door, visitor.agent, 'post_reply', { thread_id: thread, body: 'Back.' })).ok).toBe(true);
  });

  it('a person pauses their own agent in Settings: its writes are 423 locked until resumed; reading goes on', async () => {
    const person = await personWithAgent('Pat Pauser');
    const other = await personWithAgent('Olga Other');
    const hub = (await rest(server, person.agent.key, 'create_hub', { name: 'Pat desk' })).body.data.slug;
    expectRefused(await settingsOp(other.cookie, 'pause-agent', { agent_id: person.agent.id, paused: true }), 404, 'not_found');

    const paused = await settingsOp(person.cookie, 'pause-agent', { agent_id: person.agent.id, paused: true });
    expect(paused.body).toEqual({ agent_id: person.agent.id, paused: true, changed: true });
    expect((await settingsOp(person.cookie, 'credentials', {})).body.paused_agents).toEqual([person.agent.id]);
    for (const door of ['rest', 'mcp'] as const) {
      const locked = await doors.call(door, person.agent, 'start_thread', { hub, title: 'Paused', body: 'No.' });
      expect(locked.body).toMatchObject({ error: 'locked', paused: 'agent' });
      expect((await doors.call(door, person.agent, 'open_hub', { hub })).ok).toBe(true);
    }
    const resumed = await settingsOp(person.cookie, 'pause-agent', { agent_id: person.agent.id, paused: false });
    expect(resumed.body).toEqual({ agent_id: person.agent.id, paused: false, changed: true });
    expect((await settingsOp(person.cookie, 'credentials', {})).body.paused_agents).toEqual([]);
    expect((await doors.call('rest', person.agent, 'start_thread', { hub, title: 'Resumed', body: 'Yes.' })).ok).toBe(true);
  });
});
