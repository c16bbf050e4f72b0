import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTool, mcpClient, poke, registerAgent, request, rest, signIn, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/** SPEC parts 2, 4, 7 and 8: invite links, their preview, joining by them as a guest, an agent or a person. */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const tokenOf = (url: string) => url.slice(url.indexOf('#') + 1);

const web = (server: Reachable, path: string, body: unknown, cookie?: string) =>
  request(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
const preview = (server: Reachable, token: string) => web(server, '/api/invite-preview', { token });
const joinGuest = (server: Reachable, token: string, name: string, cookie?: string) => web(server, '/api/invite/join-guest', { token, name }, cookie);
const acceptInvite = (server: Reachable, cookie: string, token: string) => web(server, '/api/settings/accept-invite', { token }, cookie);
const register = (server: Reachable, body: unknown) =>
  request(`${server.url}/api/v1/agents/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const cookieOf = (reply: { headers: Headers }) => reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))?.split(';')[0];

describe.each(stores())('Invites on %s', (store) => {
  let server: TestServer;
  let owner: { cookie: string; id: string };
  let hub: { hub_id: string; slug: string };
  let threadId: string;
  let otherThreadId: string;
  let padId: string;
  let helper: { key: string; id: string };
  let member: { key: string; id: string };

  /** An invite made by the owner in the web app. */
  const invite = async (to: string, extra: Record<string, unknown> = {}) => {
    const reply = await appTool(server, owner.cookie, 'invite', { to, ...extra });
    expect(reply.status, reply.text).toBe(200);
    return { token: tokenOf(reply.body.data.url) as string, data: reply.body.data };
  };

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await signIn(server, 'Olive Owner', 'olive@example.test');
    hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Private works' })).body.data;
    threadId = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Plans for spring', body: 'First post.' })).body.data.thread_id;
    otherThreadId = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Staff only', body: 'Hidden.' })).body.data.thread_id;
    padId = (await appTool(server, owner.cookie, 'create_pad', { thread_id: threadId, title: 'Spring notes', text: 'Hello.' })).body.data.pad_id;
    helper = await registerAgent(server, 'Helper');
    member = await registerAgent(server, 'Member');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${helper.id}, 'helper'), (${hub.hub_id}, ${member.id}, 'member')`);
  });
  afterAll(() => server?.close());

  describe('the invite tool', () => {
    it('gives the owner a link whose svci_ token is only in the fragment, and keeps only its SHA-256', async () => {
      const { token, data } = await invite(threadId, { uses: 3, days: 2 });
      expect(data.url).toMatch(new RegExp(`^${server.core.config.baseUrl}/invite#svci_[A-Za-z0-9_-]{43}$`));
      expect(data).toMatchObject({ kind: 'thread', scope_id: threadId, hub_id: hub.hub_id, uses: 3 });
      const days = (Date.parse(data.expires_at) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(1.99);
      expect(days).toBeLessThanOrEqual(2);
      const rows: any[] = [...(await server.core.db.pool.any(sql.unsafe`SELECT * FROM invites WHERE id = ${data.invite_id}`))];
      expect(rows).toHaveLength(1);
      expect(rows[0]!.secret_hash).toBe(sha256(token));
      expect(JSON.stringify(rows)).not.toContain(token.slice(5));
    });

    it('defaults to one use and seven days', async () => {
      const { data } = await invite(hub.slug);
      expect(data.uses).toBe(1);
      expect(Math.round((Date.parse(data.expires_at) - Date.now()) / 86_400_000)).toBe(7);
    });

    it('is open to helpers over REST and MCP, refused to members and unseen by strangers', async () => {
      const byHelper = await rest(server, helper.key, 'invite', { to: padId });
      expect(byHelper.status, byHelper.text).toBe(200);
      expect(byHelper.body.data.kind).toBe('pad');
      const client = await mcpClient(server, helper.key);
      try {
        const overMcp = (await client.callTool({ name: 'invite', arguments: { to: hub.hub_id, uses: 2 } })) as any;
        expect(overMcp.isError).toBeFalsy();
        expect(overMcp.structuredContent.url).toContain('/invite#svci_');
      } finally {
        await client.close();
      }
      const byMember = await rest(server, member.key, 'invite', { to: threadId });
      expect(byMember.status).toBe(403);
      expect(byMember.body.error).toBe('forbidden');
      const stranger = await registerAgent(server, 'Stranger');
      const byStranger = await rest(server, stranger.key, 'invite', { to: hub.slug });
      expect(byStranger.status).toBe(404);
      // Over an invite's sizes (SPEC part 8 "Sizes") is 413 too_large.
      const tooMany = await rest(server, helper.key, 'invite', { to: hub.slug, uses: 1001 });
      expect(tooMany.status).toBe(413);
      const tooLong = await rest(server, helper.key, 'invite', { to: hub.slug, days: 15 });
      expect(tooLong.status).toBe(413);
    });
  });

  describe('preview', () => {
    it('says what the invite is for without taking a use', async () => {
      const { token, data } = await invite(threadId);
      const reply = await preview(server, token);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ title: 'Plans for spring', kind: 'thread', role: 'member', invitedBy: 'Olive Owner', guestJoin: true });
      await preview(server, token);
      const used = await server.core.db.pool.oneFirst(sql.unsafe`SELECT used FROM invites WHERE id = ${data.invite_id}`);
      expect(used).toBe(0);
    });

    it('needs x-svc: 1', async () => {
      const { token } = await invite(threadId);
      const reply = await request(`${server.url}/api/invite-preview`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      expect(reply.status).toBe(403);
    });
  });

  describe('joining as a guest', () => {
    it('makes a ppl_ guest with a 30-day session and a seat in that thread alone', async () => {
      const { token } = await invite(threadId);
      const reply = await joinGuest(server, token, 'Gwen Guest');
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({
        participant: { id: expect.stringMatching(/^ppl_/), name: 'Gwen Guest', handle: expect.any(String), kind: 'human' },
        scopeId: threadId,
        kind: 'thread',
        path: `/t/${threadId}`,
      });
      const setCookie = reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
      const maxAge = Number(/max-age=(\d+)/i.exec(setCookie)?.[1] ?? (Date.parse(/expires=([^;]+)/i.exec(setCookie)![1]!) - Date.now()) / 1000);
      expect(maxAge).toBeGreaterThan(29 * 86_400);
      const cookie = cookieOf(reply)!;
      const posted = await appTool(server, cookie, 'post_reply', { thread_id: threadId, body: 'Hello from a guest.' });
      expect(posted.status, posted.text).toBe(200);
      expect(posted.body.data.allowance).toMatchObject({ limit: 20, remaining: 19 });
      expect((await appTool(server, cookie, 'open_pad', { pad_id: padId })).status).toBe(200);
      expect((await appTool(server, cookie, 'open_thread', { thread_id: otherThreadId })).status).toBe(404);
      expect((await appTool(server, cookie, 'open_hub', { hub: hub.slug })).status).toBe(404);
    });

    it('answers 409 to someone signed in', async () => {
      const { token, data } = await invite(threadId);
      const reply = await joinGuest(server, token, 'Already Here', owner.cookie);
      expect(reply.status).toBe(409);
      expect(reply.body.error).toBe('conflict');
      expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT used FROM invites WHERE id = ${data.invite_id}`)).toBe(0);
    });
  });

  describe('registering with an invite', () => {
    it('joins the hub as a member with 20 writes a day, and answers scope_id', async () => {
      const { token } = await invite(hub.slug);
      const reply = await register(server, { name: 'Invited Bot', invite: token });
      expect(reply.status, reply.text).toBe(201);
      expect(reply.body).toMatchObject({ scope_id: hub.hub_id, allowance: { limit: 20, remaining: 20, per: 'day' }, agent_key: expect.stringMatching(/^svca_/) });
      expect(reply.body.next[0]).toMatchObject({ call: 'open_hub', body: { hub: hub.slug } });
      const opened = await rest(server, reply.body.agent_key, 'open_hub', { hub: hub.slug });
      expect(opened.status).toBe(200);
      expect(opened.body.data.seat).toEqual({ role: 'member' });
      const started = await rest(server, reply.body.agent_key, 'start_thread', { hub: hub.slug, title: 'From the bot', body: 'Hi.' });
      expect(started.status).toBe(200);
      expect(started.body.data.allowance.remaining).toBe(19);
    });

    it('with a thread invite reaches that thread and its pads, and nothing else of the hub', async () => {
      const { token } = await invite(threadId);
      const reply = await register(server, { name: 'Thread Bot', invite: token });
      expect(reply.status).toBe(201);
      expect(reply.body.scope_id).toBe(threadId);
      const key = reply.body.agent_key;
      expect((await rest(server, key, 'post_reply', { thread_id: threadId, body: 'Thread bot here.' })).status).toBe(200);
      expect((await rest(server, key, 'open_pad', { pad_id: padId })).status).toBe(200);
      expect((await rest(server, key, 'open_thread', { thread_id: otherThreadId })).status).toBe(404);
      expect((await rest(server, key, 'open_hub', { hub: hub.slug })).status).toBe(404);
      expect((await rest(server, key, 'start_thread', { hub: hub.slug, title: 'x', body: 'y' })).status).toBe(404);
      const markdown = await request(`${server.url}/t/${threadId}?format=md`, { headers: { authorization: `Bearer ${key}` } });
      expect(markdown.status).toBe(200);
    });

    it('refuses invite together with hub as invalid, and makes nothing', async () => {
      const { token, data } = await invite(hub.slug);
      const reply = await register(server, { name: 'Both', invite: token, hub: hub.slug });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid');
      expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT used FROM invites WHERE id = ${data.invite_id}`)).toBe(0);
    });

    it('lets exactly `uses` of many concurrent joins through', async () => {
      const { token, data } = await invite(hub.slug, { uses: 3 });
      const before = await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM participants`);
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => register(server, { name: `Racer ${i}`, invite: token })));
      expect(replies.filter((r) => r.status === 201)).toHaveLength(3);
      expect(replies.filter((r) => r.status === 404)).toHaveLength(7);
      expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT used FROM invites WHERE id = ${data.invite_id}`)).toBe(3);
      // A refused join made no agent.
      expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM participants`)).toBe(Number(before) + 3);
    });
  });

  describe('an agent with a key joining with join_hub', () => {
    it('takes the seat an invite gives, over REST and MCP; a second call uses nothing', async () => {
      const agent = await registerAgent(server, 'Keyed Joiner');
      const { token, data } = await invite(threadId, { uses: 2 });
      const joined = await rest(server, agent.key, 'join_hub', { invite: token });
      expect(joined.status, joined.text).toBe(200);
      expect(joined.body.data).toMatchObject({ status: 'joined', kind: 'thread', scope_id: threadId, role: 'member' });
      expect(joined.body.text).toContain(`open_thread with thread_id "${threadId}"`);
      expect((await rest(server, agent.key, 'open_thread', { thread_id: threadId })).status).toBe(200);
      expect((await rest(server, agent.key, 'join_hub', { invite: token })).body.data.status).toBe('member');
      expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT used FROM invites WHERE id = ${data.invite_id}`)).toBe(1);
      const hubInvite = await invite(hub.slug);
      const client = await mcpClient(server, agent.key);
      try {
        const overMcp = (await client.callTool({ name: 'join_hub', arguments: { invite: hubInvite.token } })) as any;
        expect(overMcp.isError).toBeFalsy();
        expect(overMcp.structuredContent).toMatchObject({ status: 'joined', kind: 'hub', scope_id: hub.hub_id });
      } finally {
        await client.close();
      }
      expect((await rest(server, agent.key, 'open_hub', { hub: hub.slug })).body.data.seat).toEqual({ role: 'member' });
      const both = await rest(server, agent.key, 'join_hub', { invite: hubInvite.token, hub: hub.slug });
      expect(both.status).toBe(400);
      expect((await rest(server, agent.key, 'join_hub', {})).status).toBe(400);
    });
  });

  describe('a signed-in person accepting', () => {
    it('joins once; accepting again takes no use', async () => {
      const person = await signIn(server, 'Paula', 'paula@example.test');
      const { token, data } = await invite(hub.slug, { uses: 2 });
      const first = await acceptInvite(server, person.cookie, token);
      expect(first.status, first.text).toBe(200);
      expect(first.body).toMatchObject({ status: 'joined', kind: 'hub', scope_id: hub.hub_id, path: `/h/${hub.slug}` });
      const again = await acceptInvite(server, person.cookie, token);
      expect(again.body.status).toBe('member');
      expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT used FROM invites WHERE id = ${data.invite_id}`)).toBe(1);
      expect((await appTool(server, person.cookie, 'open_hub', { hub: hub.slug })).body.data.seat).toEqual({ role: 'member' });
    });

    it('lists the invites one made, and withdraws one', async () => {
      const { token, data } = await invite(padId);
      const listed = await web(server, '/api/settings/invites', {}, owner.cookie);
      expect(listed.status).toBe(200);
      expect(listed.body.invites.find((i: any) => i.id === data.invite_id)).toMatchObject({ kind: 'pad', scope_id: padId, title: 'Spring notes', path: `/p/${padId}`, state: 'live' });
      const revoked = await web(server, '/api/settings/revoke-invite', { invite_id: data.invite_id }, owner.cookie);
      expect(revoked.status).toBe(200);
      expect((await preview(server, token)).status).toBe(404);
      const byOther = await web(server, '/api/settings/revoke-invite', { invite_id: data.invite_id }, (await signIn(server, 'Nosy', 'nosy@example.test')).cookie);
      expect(byOther.status).toBe(404);
    });
  });

  it('withdraws the invites of a deleted account, and drops the seats invites gave it', async () => {
    const dee = await signIn(server, 'Dee', 'dee@example.test');
    const deeHub = (await appTool(server, dee.cookie, 'create_hub', { name: 'Dee hub' })).body.data;
    const deeToken = tokenOf((await appTool(server, dee.cookie, 'invite', { to: deeHub.slug })).body.data.url);
    expect((await preview(server, deeToken)).status).toBe(200);
    const seat = await invite(threadId);
    expect((await acceptInvite(server, dee.cookie, seat.token)).body.status).toBe('joined');
    const handle = (await request(`${server.url}/api/me`, { headers: { cookie: dee.cookie } })).body.participant.handle;
    const deleted = await web(server, '/api/settings/delete-account', { confirm_handle: handle }, dee.cookie);
    expect(deleted.status, deleted.text).toBe(200);
    expect((await preview(server, deeToken)).status).toBe(404);
    expect(Number(await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*) FROM item_members WHERE participant_id = ${dee.id}`))).toBe(0);
  });

  it('answers every token failure with the same 404 body, on every door', async () => {
    const usedUp = await invite(threadId);
    expect((await register(server, { name: 'Uses it', invite: usedUp.token })).status).toBe(201);
    const expired = await invite(threadId);
    await poke(server, sql.unsafe`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = ${expired.data.invite_id}`);
    const revoked = await invite(threadId);
    await web(server, '/api/settings/revoke-invite', { invite_id: revoked.data.invite_id }, owner.cookie);
    const person = await signIn(server, 'Tess', 'tess@example.test');
    const agent = await registerAgent(server, 'Tester');
    const bodies: unknown[] = [];
    for (const token of ['svci_' + 'A'.repeat(43), 'not-a-token', usedUp.token, expired.token, revoked.token]) {
      for (const reply of [
        await preview(server, token),
        await joinGuest(server, token, 'Someone'),
        await register(server, { name: 'Someone', invite: token }),
        await acceptInvite(server, person.cookie, token),
        await rest(server, agent.key, 'join_hub', { invite: token }),
      ]) {
        expect(reply.status).toBe(404);
        bodies.push(reply.body);
      }
    }
    expect(bodies[0]).toMatchObject({ error: 'not_found' });
    for (const body of bodies) expect(body).toEqual(bodies[0]);
  });

  it('explains joining by invite as Markdown at /invite', async () => {
    for (const reply of [await request(`${server.url}/invite?format=md`), await request(`${server.url}/invite`, { headers: { accept: 'text/markdown' } })]) {
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toContain('text/markdown');
      expect(reply.text).toContain(`POST ${server.core.config.baseUrl}/api/v1/agents/register`);
      expect(reply.text).toContain('"invite": "svci_…"');
      expect(reply.text).toContain('404');
    }
  });
});

describe.each(stores())('Invites where registration is closed, on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store, { SVC_GUEST_AGENTS: '0' });
  });
  afterAll(() => server?.close());

  it('still registers an agent that brings an invite, and nobody without one', async () => {
    const owner = await signIn(server, 'Closed Owner', 'closed@example.test');
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Closed house' })).body.data;
    const token = tokenOf((await appTool(server, owner.cookie, 'invite', { to: hub.slug })).body.data.url);
    const closed = await register(server, { name: 'Walk-in' });
    expect(closed.status).toBe(403);
    expect(closed.body.error).toBe('registration_not_open');
    const reply = await register(server, { name: 'Invited', invite: token });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.scope_id).toBe(hub.hub_id);
    expect((await rest(server, reply.body.agent_key, 'open_hub', { hub: hub.slug })).body.data.seat).toEqual({ role: 'member' });
    const previewed = await preview(server, tokenOf((await appTool(server, owner.cookie, 'invite', { to: hub.slug })).body.data.url));
    expect(previewed.body.guestJoin).toBe(false);
    const asGuest = await joinGuest(server, token, 'Nobody');
    expect(asGuest.status).toBe(503);
    expect(asGuest.body.error).toBe('paused');
  });
});

describe.each(stores())('Invite previews per address, on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  it('turns away the 61st preview from one address in a minute', async () => {
    const replies = [];
    for (let i = 0; i < 61; i++) replies.push(await preview(server, 'svci_nothing'));
    expect(replies.slice(0, 60).every((r) => r.status === 404)).toBe(true);
    const last = replies[60]!;
    expect(last.status).toBe(429);
    expect(last.headers.get('ratelimit')).toMatch(/^"ip";r=0;t=\d+$/);
    expect(last.body.retry_after_seconds).toBeGreaterThan(0);
  });
});
