import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeGuest } from '../../server/core/identity/guests.ts';
import { appTool, poke, registerAgent, request, rest, signIn, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/** SPEC part 2 "Guest people" and part 4 `POST /api/jump-in`: guests in public threads that take guests. */

const jumpIn = (server: Reachable, body: unknown, headers: Record<string, string> = {}) =>
  request(`${server.url}/api/jump-in`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const cookieOf = (reply: { headers: Headers }) => reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))?.split(';')[0];

describe.each(stores())('Guests on %s', (store) => {
  let server: TestServer;
  let owner: { cookie: string; id: string };
  let hub: { hub_id: string; slug: string };
  let open: string;
  let closed: string;
  let privateThread: string;

  const thread = async (title: string, slug = hub.slug) =>
    (await appTool(server, owner.cookie, 'start_thread', { hub: slug, title, body: 'Welcome.' })).body.data.thread_id as string;

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    owner = await signIn(server, 'Oscar Owner', 'oscar@example.test');
    hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Town square' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    open = await thread('Open to all');
    closed = await thread('Members only');
    const opened = await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: open, accepts_guests: true });
    expect(opened.status, opened.text).toBe(200);
    expect(opened.body.data).toEqual({ thread_id: open, accepts_guests: true, open_to_guests: true });
    const privateHub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Back room' })).body.data;
    privateThread = await thread('Secret', privateHub.slug);
    await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: privateThread, accepts_guests: true });
  });
  afterAll(() => server?.close());

  it('lets only the owner and helpers open a thread to guests', async () => {
    const member = await signIn(server, 'Mia Member', 'mia@example.test');
    await appTool(server, member.cookie, 'join_hub', { hub: hub.slug });
    const refused = await appTool(server, member.cookie, 'ui_thread_guests', { thread_id: closed, accepts_guests: true });
    expect(refused.status).toBe(403);
    const front = await request(`${server.url}/t/${closed}?format=md`);
    expect(front.text).toContain('accepts_guests: false');
  });

  it('makes a ppl_ guest with a 30-day session who posts with 20 writes a day', async () => {
    const reply = await jumpIn(server, { thread: open, name: 'Robin' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({
      participant: { id: expect.stringMatching(/^ppl_/), name: 'Robin', kind: 'human' },
      thread_id: open,
      path: `/t/${open}`,
      allowance: { limit: 20, remaining: 20, per: 'day' },
    });
    const setCookie = reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(setCookie).toMatch(/httponly/i);
    const cookie = cookieOf(reply)!;
    const posted = await appTool(server, cookie, 'post_reply', { thread_id: open, body: 'Robin was here.' });
    expect(posted.status, posted.text).toBe(200);
    expect(posted.body.data.allowance).toMatchObject({ limit: 20, remaining: 19 });
    const reacted = await appTool(server, cookie, 'react', { post_id: posted.body.data.post_id, reaction: 'heart' });
    expect(reacted.status, reacted.text).toBe(200);
    const read = await appTool(server, owner.cookie, 'open_thread', { thread_id: open });
    expect(read.body.view.posts.at(-1)).toMatchObject({ author: { id: reply.body.participant.id, name: 'Robin' }, body: 'Robin was here.' });
    // Posting is for the thread it jumped into: another public thread, even one taking guests, is not.
    expect((await appTool(server, cookie, 'post_reply', { thread_id: closed, body: 'Sneaking in.' })).status).toBe(403);
    const elsewhere = await thread('Another open one');
    await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: elsewhere, accepts_guests: true });
    expect((await appTool(server, cookie, 'post_reply', { thread_id: elsewhere, body: 'Hi.' })).status).toBe(403);
    // A guest brings no agent.
    const agent = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1', cookie },
      body: JSON.stringify({ name: 'Robin bot' }),
    });
    expect(agent.status).toBe(403);
    // Nor does a guest join hubs by themselves, public or not.
    expect((await appTool(server, cookie, 'join_hub', { hub: hub.slug })).status).toBe(403);
    expect((await appTool(server, cookie, 'join_hub', { hub: 'no-such-hub' })).status).toBe(403);
    // Nor makes one.
    const hubMade = await appTool(server, cookie, 'create_hub', { name: 'Guest hub' });
    expect(hubMade.status).toBe(403);
    expect(hubMade.body.message).toContain('/signin');
    for (const [op, body] of [['link-code', {}], ['link-agent', { token: 'svcc_whatever' }]] as const) {
      const linking = await request(`${server.url}/api/settings/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1', cookie },
        body: JSON.stringify(body),
      });
      expect(linking.status, op).toBe(403);
    }
  });

  it('at the daily limit answers limit_reached with sign_in_url and saves nothing', async () => {
    const reply = await jumpIn(server, { thread: open, name: 'Busy Bee' });
    const id = reply.body.participant.id;
    const cookie = cookieOf(reply)!;
    await poke(server, sql.unsafe`
      INSERT INTO counted_writes (pool, participant_id, tool) SELECT ${`guest:${id}`}, ${id}, 'post_reply' FROM generate_series(1, 20)`);
    const refused = await appTool(server, cookie, 'post_reply', { thread_id: open, body: 'One too many.' });
    expect(refused.status).toBe(200);
    expect(refused.body.data).toMatchObject({ limit_reached: true, sign_in_url: `${server.core.config.baseUrl}/signin` });
    const count = await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM posts WHERE author_id = ${id}`);
    expect(Number(count)).toBe(0);
  });

  it('holds a name per thread: 409 when someone there uses it', async () => {
    expect((await jumpIn(server, { thread: open, name: 'Sam' })).status).toBe(201);
    const taken = await jumpIn(server, { thread: open, name: '  sAM ' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('conflict');
    const poster = await jumpIn(server, { thread: open, name: 'oscar owner' });
    expect(poster.status).toBe(409);
    const elsewhere = await thread('Second open thread');
    await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: elsewhere, accepts_guests: true });
    expect((await jumpIn(server, { thread: elsewhere, name: 'Sam' })).status).toBe(201);
  });

  it('refuses threads that take no guests (403), private and missing ones (404)', async () => {
    const refused = await jumpIn(server, { thread: closed, name: 'Casey' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(refused.headers.getSetCookie()).toEqual([]);
    const hidden = await jumpIn(server, { thread: privateThread, name: 'Casey' });
    const missing = await jumpIn(server, { thread: 'thr_nothing', name: 'Casey' });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body).toEqual(missing.body);
  });

  it('gives an agent in a browser an agent id and, over JSON, its key', async () => {
    const reply = await jumpIn(server, { thread: open, name: 'Browser Bot', agent: '1' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.participant).toMatchObject({ id: expect.stringMatching(/^agt_/), kind: 'agent', name: 'Browser Bot' });
    expect(reply.body.agent_key).toMatch(/^svca_/);
    expect(reply.body.link_url).toContain('/link#svcc_');
    const posted = await rest(server, reply.body.agent_key, 'post_reply', { thread_id: open, body: 'Beep.' });
    expect(posted.status, posted.text).toBe(200);
    expect(posted.body.data.allowance.remaining).toBe(19);
    const viaCookie = await appTool(server, cookieOf(reply)!, 'post_reply', { thread_id: open, body: 'Boop.' });
    expect(viaCookie.body.data.allowance.remaining).toBe(18);
  });

  it('takes a plain form from anywhere but another site, and lets a signed-in person in as themselves', async () => {
    const form = (headers: Record<string, string>, name: string) =>
      request(`${server.url}/api/jump-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ thread: open, name }).toString(),
        redirect: 'manual',
      });
    const crossSite = await form({ origin: 'https://evil.example' }, 'Eve');
    expect(crossSite.status).toBe(403);
    const ours = await form({ origin: server.url }, 'Formal');
    expect(ours.status).toBe(303);
    expect(ours.headers.get('location')).toBe(`/t/${open}`);
    const person = await signIn(server, 'Pat Person', 'pat@example.test');
    const signedIn = await jumpIn(server, { thread: open, name: 'ignored' }, { cookie: person.cookie });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.participant).toMatchObject({ id: person.id, name: 'Pat Person' });
    expect(signedIn.headers.getSetCookie()).toEqual([]);
    expect((await appTool(server, person.cookie, 'post_reply', { thread_id: open, body: 'Pat here.' })).status).toBe(200);
  });

  it('takes 300 guests an hour into one thread', async () => {
    const busy = await thread('Busy thread');
    await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: busy, accepts_guests: true });
    await poke(server, sql.unsafe`
      INSERT INTO guest_names (scope_id, name_key, participant_id) SELECT ${busy}, 'guest ' || i, ${owner.id} FROM generate_series(1, 299) i`);
    expect((await jumpIn(server, { thread: busy, name: 'Number 300' })).status).toBe(201);
    const refused = await jumpIn(server, { thread: busy, name: 'Number 301' });
    expect(refused.status).toBe(429);
    expect(refused.body.retry_after_seconds).toBeGreaterThan(3_000);
  });

  it('refuses a body over 2 KB', async () => {
    const reply = await jumpIn(server, { thread: open, name: 'Big', padding: 'x'.repeat(2_100) });
    expect(reply.status).toBe(413);
  });

  it('jumps into a public hub that takes guests: posts in its threads that take guests', async () => {
    // A public hub takes no guests until its owner says so.
    const refused = await jumpIn(server, { hub: hub.slug, name: 'Hub Hopper' });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toContain('does not take guests');
    const opened = await appTool(server, owner.cookie, 'set_hub_visibility', { hub: hub.slug, audience: 'public', accepts_guests: true });
    expect(opened.body.data).toMatchObject({ status: 'unchanged', accepts_guests: true });
    const reply = await jumpIn(server, { hub: hub.slug, name: 'Hub Hopper' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ hub: { id: hub.hub_id, slug: hub.slug }, path: `/h/${hub.slug}` });
    const cookie = cookieOf(reply)!;
    expect((await appTool(server, cookie, 'post_reply', { thread_id: open, body: 'Hopped.' })).status).toBe(200);
    expect((await appTool(server, cookie, 'post_reply', { thread_id: closed, body: 'Hopped.' })).status).toBe(403);
  });

  it('merges a guest into an account: posts, seats and names move, the guest session ends', async () => {
    const reply = await jumpIn(server, { thread: open, name: 'Future Member' });
    const guestId = reply.body.participant.id;
    const cookie = cookieOf(reply)!;
    await appTool(server, cookie, 'post_reply', { thread_id: open, body: 'Before I signed in.' });
    const before = await server.core.db.pool.oneFirst(sql.unsafe`SELECT version FROM threads WHERE id = ${open}`);
    const human = await signIn(server, 'Future Member', 'future@example.test');
    const merged = await server.core.db.write((tx) => mergeGuest(tx, guestId, human.id));
    expect(merged.posts).toBe(1);
    expect(merged.threads).toEqual([open]);
    const pool = server.core.db.pool;
    expect(Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM posts WHERE author_id = ${guestId}`))).toBe(0);
    expect(Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM posts WHERE author_id = ${human.id} AND thread_id = ${open}`))).toBe(1);
    expect(await pool.oneFirst(sql.unsafe`SELECT participant_id FROM guest_names WHERE scope_id = ${open} AND name_key = 'future member'`)).toBe(human.id);
    expect(Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM credentials WHERE participant_id = ${guestId} AND revoked_at IS NULL`))).toBe(0);
    expect(Number(await pool.oneFirst(sql.unsafe`SELECT version FROM threads WHERE id = ${open}`))).toBeGreaterThan(Number(before));
    // The account now posts where the guest did.
    expect((await appTool(server, human.cookie, 'post_reply', { thread_id: open, body: 'Signed in now.' })).status).toBe(200);
    await expect(mergeGuest(server.core.db.pool, human.id, guestId)).rejects.toThrow();
  });

  it('merges invite seats too', async () => {
    const privateHub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Invite only' })).body.data;
    const secret = await thread('Invited thread', privateHub.slug);
    const token = (await appTool(server, owner.cookie, 'invite', { to: secret })).body.data.url.split('#')[1];
    const guest = await request(`${server.url}/api/invite/join-guest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1' },
      body: JSON.stringify({ token, name: 'Invitee' }),
    });
    const human = await signIn(server, 'Invitee', 'invitee@example.test');
    expect((await appTool(server, human.cookie, 'open_thread', { thread_id: secret })).status).toBe(404);
    await server.core.db.write((tx) => mergeGuest(tx, guest.body.participant.id, human.id));
    expect((await appTool(server, human.cookie, 'open_thread', { thread_id: secret })).status).toBe(200);
  });

  it('with a registered agent, jumps in through the same door', async () => {
    // An agent key is no session: the jump-in makes a new guest rather than using the key.
    const agent = await registerAgent(server, 'Keyholder');
    const reply = await jumpIn(server, { thread: open, name: 'Keyholder guest' }, { authorization: `Bearer ${agent.key}` });
    expect(reply.status).toBe(201);
    expect(reply.body.participant.id).toMatch(/^ppl_/);
  });
});

describe.each(stores())('Guest joins per address, on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
  });
  afterAll(() => server?.close());

  it('counts jump-in and join-guest together: the 91st in an hour is 429', async () => {
    const joinGuest = () =>
      request(`${server.url}/api/invite/join-guest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1' },
        body: JSON.stringify({ token: 'svci_nothing', name: 'Someone' }),
      });
    const replies = [];
    for (let i = 0; i < 60; i++) replies.push(await joinGuest());
    for (let i = 0; i < 30; i++) replies.push(await jumpIn(server, { thread: 'thr_nothing', name: 'Someone' }));
    expect(replies.every((r) => r.status === 404)).toBe(true);
    const refused = await jumpIn(server, { thread: 'thr_nothing', name: 'Someone' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit')).toMatch(/^"ip";r=0;t=\d+$/);
    expect((await joinGuest()).status).toBe(429);
  });
});

describe.each(stores())('Guests switched off, on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1', SVC_GUEST_AGENTS: '0' });
  });
  afterAll(() => server?.close());

  it('answers 503 paused to jump-in', async () => {
    const owner = await signIn(server, 'Off Owner', 'off@example.test');
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Quiet' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    const thread = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'T', body: 'B' })).body.data.thread_id;
    const opened = await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: thread, accepts_guests: true });
    expect(opened.body.data.open_to_guests).toBe(false);
    const reply = await jumpIn(server, { thread, name: 'Nobody' });
    expect(reply.status).toBe(503);
    expect(reply.body.error).toBe('paused');
    expect(reply.headers.getSetCookie()).toEqual([]);
  });
});
