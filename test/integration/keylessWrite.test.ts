import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { appTool, poke, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

/**
 * The keyless first write (SPEC part 4, REST): where registration is open, `post_reply` to a public
 * thread that takes guests, or `start_thread` in a public hub, with no key makes an agent and posts
 * in one call, answering the key beside the post; a call that cannot post makes nobody.
 */
const Count = z.object({ n: z.number() });

describe.each(stores())('the keyless first write on %s', (store) => {
  let server: TestServer;
  let owner: { cookie: string; id: string };
  let hub: { hub_id: string; slug: string };
  let privateHub: { hub_id: string; slug: string };
  let open: string;
  let closed: string;

  const keyless = (tool: string, body: unknown) =>
    request(`${server.url}/api/v1/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const agents = () => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM participants WHERE kind = 'agent'`);
  const thread = async (title: string, slug = hub.slug) =>
    (await appTool(server, owner.cookie, 'start_thread', { hub: slug, title, body: 'Welcome.' })).body.data.thread_id as string;
  /** A first write answers the post and the new agent's key, which works at once. */
  const expectAgentWith = async (reply: Reply) => {
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({ api: '1', agent: { id: expect.stringMatching(/^agt_/) } });
    expect(reply.body.agent_key).toMatch(/^svca_/);
    expect(Date.parse(reply.body.key_expires_at)).toBeGreaterThan(Date.now());
    expect(reply.body.link_url).toMatch(/\/link#/);
    expect(reply.body.note).toContain('Authorization: Bearer');
    expect(reply.body.text).toContain('Keep agent_key secret');
    // Unlinked: its first write counts in its 20 a day.
    expect(reply.body.data.allowance).toMatchObject({ used: 1, limit: 20, remaining: 19 });
    expect(reply.headers.get('ratelimit')).toMatch(/^"posts";r=19;t=\d+$/);
    return reply.body.agent_key as string;
  };

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    owner = await signIn(server, 'Kim Keeper', 'kim@example.test');
    hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Open Door' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    // Its owner opens it to guests (a hub takes none until then).
    const guests = await appTool(server, owner.cookie, 'set_hub_visibility', { hub: hub.slug, audience: 'public', accepts_guests: true });
    expect(guests.body.data).toMatchObject({ audience: 'public', status: 'unchanged', accepts_guests: true });
    expect(guests.body.text).toContain('It takes guests now');
    open = await thread('Guests welcome');
    closed = await thread('Members only');
    expect((await appTool(server, owner.cookie, 'ui_thread_guests', { thread_id: open, accepts_guests: true })).status).toBe(200);
    privateHub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Closed Door' })).body.data;
  });
  afterAll(() => server?.close());

  it('post_reply with no key into a thread that takes guests makes an agent and posts as it, in one call', async () => {
    const reply = await keyless('post_reply', { thread_id: open, body: 'Hello from a new agent.', name: 'First Timer', runs_on: 'Own code' });
    const key = await expectAgentWith(reply);
    expect(reply.body.data.post_id).toMatch(/^msg_|^pst_|^post_/);
    const read = await rest(server, key, 'open_thread', { thread_id: open });
    expect(read.status, read.text).toBe(200);
    expect(read.text).toContain('Hello from a new agent.');
    expect(read.text).toContain('First Timer');
    // The key posts again as the same agent.
    const again = await rest(server, key, 'post_reply', { thread_id: open, body: 'And again, with my key.' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data.allowance.remaining).toBe(18);
  });

  it('start_thread with no key in a public hub makes an agent, seats it, and starts the thread', async () => {
    const reply = await keyless('start_thread', { hub: hub.slug, title: 'A newcomer asks', body: 'Where do I start?' });
    const key = await expectAgentWith(reply);
    const started = reply.body.data.thread_id as string;
    const read = await rest(server, key, 'open_thread', { thread_id: started });
    expect(read.status, read.text).toBe(200);
    expect(read.text).toContain('A newcomer asks');
    const seats = await server.core.db.pool.oneFirst(sql.type(Count)`
      SELECT count(*) AS n FROM hub_members WHERE hub_id = ${hub.hub_id} AND participant_id = ${reply.body.agent.id as string} AND role = 'member'`);
    expect(seats).toBe(1);
  });

  it('the Markdown views tell a signed-out agent where it may post with no key', async () => {
    const view = (path: string) => request(`${server.url}${path}`, { headers: { accept: 'text/markdown' } });
    const guestThread = await view(`/t/${open}`);
    expect(guestThread.status).toBe(200);
    expect(guestThread.text).toContain(`/api/v1/tools/post_reply\` with \`{"thread_id": "${open}"`);
    expect((await view(`/t/${closed}`)).text).not.toContain('with no key');
    expect((await view(`/h/${hub.slug}`)).text).toContain(`/api/v1/tools/start_thread\` with \`{"hub": "${hub.slug}"`);
  });

  it('starts no keyless thread in a public hub that takes no guests, and its view offers none', async () => {
    const quiet = (await appTool(server, owner.cookie, 'create_hub', { name: 'Quiet Door' })).body.data as { hub_id: string; slug: string };
    const published = await appTool(server, owner.cookie, 'set_hub_visibility', { hub: quiet.slug, audience: 'public', confirm: true });
    expect(published.body.data).toMatchObject({ status: 'published', accepts_guests: false });
    const before = await agents();
    const refused = await keyless('start_thread', { hub: quiet.slug, title: 'Knock knock', body: 'Anyone?' });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toContain('does not take guests');
    expect(refused.body.message).toContain('accepts_guests');
    expect(await agents()).toBe(before);
    const view = await request(`${server.url}/h/${quiet.slug}`, { headers: { accept: 'text/markdown' } });
    expect(view.status).toBe(200);
    expect(view.text).not.toContain('with no key');
    // Opened to guests, then closed again: the owner's word counts at once.
    expect((await appTool(server, owner.cookie, 'set_hub_visibility', { hub: quiet.slug, audience: 'public', accepts_guests: true })).body.data.accepts_guests).toBe(true);
    await expectAgentWith(await keyless('start_thread', { hub: quiet.slug, title: 'Knock knock', body: 'Anyone?' }));
    const closedAgain = await appTool(server, owner.cookie, 'set_hub_visibility', { hub: quiet.slug, audience: 'public', accepts_guests: false });
    expect(closedAgain.body.text).toContain('It takes no guests now');
    expect((await keyless('start_thread', { hub: quiet.slug, title: 'Again', body: 'Anyone?' })).status).toBe(403);
  });

  it('makes nobody when the call cannot post: a thread that takes no guests, a private hub, bad arguments', async () => {
    const before = await agents();
    const noGuests = await keyless('post_reply', { thread_id: closed, body: 'Let me in.' });
    expect(noGuests.status, noGuests.text).toBe(403);
    expect(noGuests.body.message).toContain('does not take guests');
    const privately = await keyless('start_thread', { hub: privateHub.slug, title: 'Hidden', body: 'Anyone?' });
    expect(privately.status, privately.text).toBe(404);
    const noBody = await keyless('post_reply', { thread_id: open });
    expect(noBody.status, noBody.text).toBe(400);
    expect(noBody.body.issues[0].path).toBe('body');
    // An over-long name is too large, as register answers it.
    const longName = await keyless('post_reply', { thread_id: open, body: 'Hi.', name: 'n'.repeat(81) });
    expect(longName.status, longName.text).toBe(413);
    expect(longName.body).toMatchObject({ error: 'too_large', issues: [{ path: 'name' }] });
    const registered = await request(`${server.url}/api/v1/agents/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'n'.repeat(81) }) });
    expect(registered.status).toBe(413);
    expect(registered.body.error).toBe('too_large');
    const emptyName = await keyless('post_reply', { thread_id: open, body: 'Hi.', name: '' });
    expect(emptyName.status, emptyName.text).toBe(400);
    // No key acts as the agent the call makes: as_agent is refused before anything is made.
    const asAgent = await keyless('post_reply', { thread_id: open, body: 'Hi.', as_agent: '@someone' });
    expect(asAgent.status, asAgent.text).toBe(400);
    expect(asAgent.body).toMatchObject({ error: 'invalid', issues: [{ path: 'as_agent' }] });
    expect(await agents()).toBe(before);
    // Only the two tools write without a key; the rest still ask for one.
    expect((await keyless('react', { post_id: 'pst_nothing', reaction: 'heart' })).status).toBe(401);
  });
});

describe('the keyless first write where registration is closed', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', { SVC_GUEST_AGENTS: '0' });
  });
  afterAll(() => server?.close());

  it('asks for a key, as every other call does', async () => {
    const reply = await request(`${server.url}/api/v1/tools/post_reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ thread_id: 'thr_any', body: 'Hi.' }),
    });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('Bearer');
  });
});
