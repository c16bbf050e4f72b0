import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTool, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer, rawRequest, poke } from '../support/server.ts';

/** SPEC part 4 "Web app only" and part 5 "Web sign-in": the development sign-in, sessions and the app's tool door. */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const signInRequest = (url: string, body: unknown, headers: Record<string, string> = { 'x-svc': '1' }) =>
  request(`${url}/signin`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe.each(stores())('Web app on %s', (store) => {
  let server: TestServer;

  const toolCall = (tool: string, args: unknown, headers: Record<string, string>) =>
    request(`${server.url}/api/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(args) });
  const me = (cookie: string) => request(`${server.url}/api/me`, { headers: { cookie } });

  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  describe('development sign-in', () => {
    it('sets an HttpOnly svc_session cookie holding a svcs_ token, and names the person', async () => {
      const reply = await signInRequest(server.url, { name: 'Ada', email: 'ada@example.test' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ participant: { id: expect.any(String), name: 'Ada', handle: '@ada', kind: 'human' } });
      const cookies = reply.headers.getSetCookie().filter((c) => c.startsWith('svc_session='));
      expect(cookies).toHaveLength(1);
      const cookie = cookies[0]!;
      expect(cookie).toMatch(/^svc_session=svcs_[A-Za-z0-9_-]{43};/);
      expect(cookie).toMatch(/;\s*httponly/i);
      expect(cookie).toMatch(/;\s*samesite=lax/i);
      expect(cookie).toMatch(/;\s*path=\//i);
    });

    it('signs the same email into the same person, and another email into another', async () => {
      const first = await signIn(server, 'Grace', 'grace@example.test');
      const again = await signIn(server, 'Grace H', 'grace@example.test');
      const upper = await signIn(server, 'Grace', 'GRACE@example.test');
      const other = await signIn(server, 'Grace', 'grace2@example.test');
      expect(again.id).toBe(first.id);
      expect(upper.id).toBe(first.id);
      expect(other.id).not.toBe(first.id);
      expect(again.cookie).not.toBe(first.cookie);
    });

    it('refuses a sign-in without x-svc: 1', async () => {
      const reply = await signInRequest(server.url, { name: 'Mallory', email: 'mallory@example.test' }, {});
      expect(reply.status).toBe(403);
      expect(reply.body.error).toBe('forbidden');
      expect(reply.headers.getSetCookie()).toEqual([]);
    });

    it('takes the plain sign-in form from our own pages only', async () => {
      const form = (origin: string) =>
        request(`${server.url}/signin`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: new URLSearchParams({ name: 'Form User', email: 'form@example.test' }).toString(),
          redirect: 'manual',
        });
      const foreign = await form('https://evil.example');
      expect(foreign.status).toBe(403);
      expect(foreign.headers.getSetCookie()).toEqual([]);
      const ours = await form(server.url);
      expect(ours.status).toBe(302);
      expect(ours.headers.getSetCookie().some((c) => c.startsWith('svc_session=svcs_'))).toBe(true);
    });
  });

  describe('GET /api/me', () => {
    it('names the signed-in person', async () => {
      const person = await signIn(server, 'Linus', 'linus@example.test');
      const reply = await me(person.cookie);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ participant: { id: person.id, name: 'Linus', handle: '@linus', kind: 'human', email: 'linus@example.test', verified: false } });
    });

    it('answers 401 without a session, or with a made-up one', async () => {
      expect((await request(`${server.url}/api/me`)).status).toBe(401);
      const reply = await me('svc_session=svcs_made-up');
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('unauthenticated');
    });
  });

  describe('POST /api/tools/:name', () => {
    let person: { cookie: string; id: string };
    beforeAll(async () => {
      person = await signIn(server, 'Barbara', 'barbara@example.test');
    });

    it('runs a model tool and answers {text, data, view, api}', async () => {
      const made = await appTool(server, person.cookie, 'create_hub', { name: 'Workshop' });
      expect(made.status).toBe(200);
      expect(Object.keys(made.body).sort()).toEqual(['api', 'data', 'text', 'view']);
      expect(made.body.api).toBe('1');
      expect(made.body.data).toMatchObject({ hub_id: expect.stringMatching(/^hub_/), slug: 'workshop', audience: 'private', role: 'owner' });

      const opened = await appTool(server, person.cookie, 'open_hub', { hub: 'workshop' });
      expect(opened.status).toBe(200);
      expect(Object.keys(opened.body).sort()).toEqual(['api', 'data', 'text', 'view']);
      expect(opened.body.view.hub).toMatchObject({ slug: 'workshop', name: 'Workshop' });
      expect(opened.body.view.seat).toEqual({ role: 'owner' });
    });

    it('refuses a call without x-svc: 1 with 403', async () => {
      const reply = await toolCall('create_hub', { name: 'No marker' }, { cookie: person.cookie });
      expect(reply.status).toBe(403);
      expect(reply.body.error).toBe('forbidden');
    });

    it('refuses a call from a foreign Origin with 403, and takes our own', async () => {
      const foreign = await toolCall('create_hub', { name: 'Cross site' }, { cookie: person.cookie, 'x-svc': '1', origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect(foreign.body.error).toBe('forbidden');
      const own = await toolCall('create_hub', { name: 'Same site' }, { cookie: person.cookie, 'x-svc': '1', origin: server.url });
      expect(own.status).toBe(200);
    });

    it('never takes a Bearer key', async () => {
      const agent = await registerAgent(server, 'Door tester');
      const reply = await toolCall('create_hub', { name: 'By key' }, { authorization: `Bearer ${agent.key}`, 'x-svc': '1' });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('unauthenticated');
    });

    it('serves the app-only ui_my_hubs here, but not over /api/v1 to an agent key', async () => {
      const mine = await appTool(server, person.cookie, 'ui_my_hubs', {});
      expect(mine.status).toBe(200);
      expect(mine.body.data.hubs).toEqual(expect.arrayContaining([expect.objectContaining({ slug: 'workshop', role: 'owner' })]));

      const agent = await registerAgent(server, 'Curious');
      const reply = await rest(server, agent.key, 'ui_my_hubs', {});
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ error: 'not_found', message: 'Unknown tool.' });
    });
  });

  describe('sessions outside the web app', () => {
    it('never reads a session cookie on /api/v1: a cookie alone is 401', async () => {
      const person = await signIn(server, 'Edsger', 'edsger@example.test');
      const reply = await request(`${server.url}/api/v1/tools/create_hub`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: person.cookie },
        body: JSON.stringify({ name: 'Via cookie' }),
      });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('unauthenticated');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    });

    it('refuses a session token used as a Bearer key, saying sessions cannot be used there', async () => {
      const person = await signIn(server, 'Barbara L', 'barbara.l@example.test');
      const token = person.cookie.slice('svc_session='.length);
      const reply = await rest(server, token, 'create_hub', { name: 'Via session' });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('unauthenticated');
      expect(reply.body.message).toMatch(/session cannot be used here/i);
      expect(reply.headers.get('www-authenticate')).toMatch(/error="invalid_token", error_description="[^"]*session cannot be used here/i);
    });
  });

  it('signs out: the session is revoked and the cookie cleared', async () => {
    const person = await signIn(server, 'Frances', 'frances@example.test');
    expect((await me(person.cookie)).status).toBe(200);

    const reply = await request(`${server.url}/signout`, { method: 'POST', headers: { cookie: person.cookie, 'x-svc': '1' } });
    expect(reply.status).toBe(204);
    expect(reply.headers.getSetCookie()).toEqual([expect.stringMatching(/^svc_session=;/)]);

    expect((await me(person.cookie)).status).toBe(401);
    expect((await appTool(server, person.cookie, 'ui_my_hubs', {})).status).toBe(401);
    const token = person.cookie.slice('svc_session='.length);
    const revoked = await server.core.db.pool.oneFirst(sql.unsafe`
      SELECT revoked_at IS NOT NULL AS revoked FROM credentials WHERE secret_hash = ${sha256(token)}`);
    expect(revoked).toBe(true);
  });

  it('lets a person and an agent take part in the same thread', async () => {
    const person = await signIn(server, 'Margaret', 'margaret@example.test');
    const agent = await registerAgent(server, 'Helper bot');
    const made = await appTool(server, person.cookie, 'create_hub', { name: 'Launch room' });
    const { hub_id: hubId, slug } = made.body.data;
    const started = await appTool(server, person.cookie, 'start_thread', { hub: slug, title: 'Launch checklist', body: 'What is left?' });
    expect(started.status).toBe(200);
    const threadId = started.body.data.thread_id;

    // The hub is private: the agent's join is only a request, and it cannot post yet.
    const join = await rest(server, agent.key, 'join_hub', { hub: slug });
    expect(join.body.data.status).toBe('requested');
    expect((await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: 'Too early.' })).status).toBe(404);

    await poke(server, sql.unsafe`
      INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${agent.id}, 'member')`);
    const posted = await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: 'Only the release notes.' });
    expect(posted.status).toBe(200);

    const read = await appTool(server, person.cookie, 'open_thread', { thread_id: threadId });
    expect(read.status).toBe(200);
    expect(read.body.view.posts.map((p: any) => [p.seq, p.author.id, p.author.kind, p.body])).toEqual([
      [1, person.id, 'human', 'What is left?'],
      [2, agent.id, 'agent', 'Only the release notes.'],
    ]);
    expect(read.body.text).toContain('**Helper bot (agent)**');
  });

  describe('in production', () => {
    let production: TestServer;
    const HOST = 'dotpad.test';
    beforeAll(async () => {
      production = await startTestServer(store, { NODE_ENV: 'production', SVC_BASE_URL: `http://${HOST}` });
    });
    afterAll(() => production?.close());

    it('refuses the development sign-in and creates nobody', async () => {
      const reply = await rawRequest(`${production.url}/signin`, {
        method: 'POST',
        headers: { host: HOST, 'content-type': 'application/json', 'x-svc': '1' },
        body: JSON.stringify({ name: 'Ada', email: 'ada@example.test' }),
      });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ error: 'forbidden', message: expect.stringMatching(/production/) });
      expect(reply.headers['set-cookie']).toBeUndefined();
      expect(await production.core.db.pool.oneFirst(sql.unsafe`SELECT count(*) AS n FROM participants`)).toBe(0);
    });

    it('serves only the SVC_BASE_URL host', async () => {
      const reply = await signInRequest(production.url, { name: 'Ada', email: 'ada@example.test' });
      expect(reply.status).toBe(403);
      expect(reply.body.error).toBe('forbidden_host');
    });
  });
});
