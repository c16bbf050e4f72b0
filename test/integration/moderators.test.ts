import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import { sql } from 'slonik';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUSPENDED } from '../../server/core/identity/standing.ts';
import { appTool, instancePair, liveCredentials, mcpClient, openProvider, poke, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';
import { authenticateBearer } from '../../server/core/identity/credentials.ts';

/**
 * Platform moderators (issue 20, item 17; SPEC part 4 "Web app only" `suspend`, `guest-pause`; part 5
 * "Bearer check"): people SVC_MODERATORS names, signed in with that address confirmed. A suspended
 * account is refused on every door (REST, MCP, Markdown, the web app and Settings, /sync, signing in),
 * and so are the keys of the agents linked to it; lifting the suspension lets the same credentials in.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const databaseUrl = process.env.TEST_DATABASE_URL;

const settingsOf = (server: TestServer) => (cookie: string, op: string, body: unknown = {}) =>
  request(`${server.url}/api/settings/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, cookie },
    body: JSON.stringify(body),
  });

/** A pad over /sync as the web app opens it: no token, the session cookie on the upgrade request. */
function openWithCookie(server: TestServer, padId: string, cookie: string) {
  const WithCookie = class extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { cookie } });
    }
  };
  let denied: string | null = null;
  let synced = false;
  const socket = new HocuspocusProviderWebsocket({ url: `${server.url.replace('http', 'ws')}/sync`, WebSocketPolyfill: WithCookie });
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name: padId,
    document: new Y.Doc(),
    onAuthenticationFailed: ({ reason }) => (denied = reason),
    onSynced: () => (synced = true),
  });
  provider.attach();
  return {
    state: () => (denied !== null ? `denied: ${denied}` : synced ? 'synced' : 'waiting'),
    close() {
      provider.destroy();
      socket.destroy();
    },
  };
}

const jumpIn = (server: TestServer, body: unknown) =>
  request(`${server.url}/api/jump-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(stores())('platform moderators on %s', (store) => {
  let server: TestServer;
  let moderator: { cookie: string; id: string };
  let sue: { cookie: string; id: string };
  let sueAgent: { key: string; id: string; handle: string };
  let hub: { hub_id: string; slug: string };
  let padId: string;
  let openThread: string;

  const settings = (cookie: string, op: string, body: unknown = {}) => settingsOf(server)(cookie, op, body);
  const devSignIn = (name: string, email: string) =>
    request(`${server.url}/signin`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc': '1' }, body: JSON.stringify({ name, email }) });
  const mcpStatus = async (key: string) =>
    request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_MODERATORS: 'Mod+desk@Example.test, other-mod@example.test', SVC_PUBLIC_THREADS: '1' });
    moderator = await signIn(server, 'Mona Moderator', 'mod@example.test');
    sue = await signIn(server, 'Sue Suspect', 'sue@example.test');
    const made = await settings(sue.cookie, 'create-agent', { name: 'Sue bot' });
    sueAgent = { key: made.body.agent_key, id: made.body.agent.id, handle: made.body.agent.handle };
    hub = (await appTool(server, sue.cookie, 'create_hub', { name: 'Sue hub' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    padId = (await appTool(server, sue.cookie, 'create_pad', { hub: hub.slug, title: 'Sue pad', text: 'Hello.' })).body.data.pad_id;
    openThread = (await appTool(server, sue.cookie, 'start_thread', { hub: hub.slug, title: 'Guests welcome', body: 'Hi.' })).body.data.thread_id;
    await appTool(server, sue.cookie, 'ui_thread_guests', { thread_id: openThread, accepts_guests: true });
  });
  afterAll(() => server?.close());

  it('only a person the configuration names, with the address confirmed, is a moderator; others are refused and nothing changes', async () => {
    const overview = await settings(sue.cookie, 'credentials');
    expect(overview.body.moderator).toBe(false);
    expect(overview.body.moderation).toBeUndefined();
    for (const [op, body] of [['suspend', { who: sueAgent.handle, suspended: true }], ['guest-pause', { paused: true }]] as const) {
      const refused = await settings(sue.cookie, op, body);
      expect([refused.status, refused.body.error], op).toEqual([403, 'forbidden']);
      expect(refused.body.message, op).toContain('SVC_MODERATORS');
    }
    // The named address, signed in by the development form, is not confirmed yet: refused alike.
    expect((await settings(moderator.cookie, 'suspend', { who: sue.id, suspended: true })).status).toBe(403);
    expect((await settings(moderator.cookie, 'credentials')).body.moderator).toBe(false);
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = ${moderator.id}`);
    const now = await settings(moderator.cookie, 'credentials');
    expect(now.body).toMatchObject({ moderator: true, moderation: { suspended: [], paused: [] } });
    expect((await rest(server, sueAgent.key, 'open_pad', { pad_id: padId })).status).toBe(200);
    expect((await jumpIn(server, { thread: openThread, name: 'Early guest' })).status).toBe(201);
  });

  it('the operations are unknown on MCP and REST', async () => {
    const client = await mcpClient(server, sueAgent.key);
    const called = await client.callTool({ name: 'suspend', arguments: { who: sue.id, suspended: true } });
    expect(called.structuredContent).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('guest-pause');
    await client.close();
    expect((await rest(server, sueAgent.key, 'guest-pause', { paused: true })).status).toBe(404);
  });

  it('a suspended person and their agents are refused on every door, live connections closed; lifting it lets them in again', async () => {
    const bySession = openWithCookie(server, padId, sue.cookie);
    await expect.poll(() => bySession.state()).toBe('synced');
    bySession.close();
    const live = await openProvider(server, padId, sueAgent.key);
    await live.synced;
    let closed = 0;
    live.provider.on('close', () => closed++);
    const agentCredential = (await authenticateBearer(server.core, sueAgent.key)).credentialId;
    expect(liveCredentials(server)).toContain(agentCredential);

    const suspended = await settings(moderator.cookie, 'suspend', { who: '@sue-suspect', suspended: true, note: 'Spam.' });
    expect(suspended.status, suspended.text).toBe(200);
    expect(suspended.body).toEqual({ participant_id: sue.id, handle: '@sue-suspect', kind: 'human', suspended: true, changed: true, agents: 1 });
    // Closed by the suspension itself.
    expect(liveCredentials(server)).not.toContain(agentCredential);
    await expect.poll(() => closed).toBeGreaterThan(0);
    live.close();

    // REST and MCP: 401 with the challenge, as a bad key is.
    const viaRest = await rest(server, sueAgent.key, 'open_pad', { pad_id: padId });
    expect([viaRest.status, viaRest.body]).toEqual([401, { error: 'unauthenticated', message: SUSPENDED }]);
    expect(viaRest.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const viaMcp = await mcpStatus(sueAgent.key);
    expect(viaMcp.status).toBe(401);
    expect(viaMcp.body).toMatchObject({ error: 'invalid_token', error_description: SUSPENDED });
    // Markdown with the key, and the export: 401, never read as signed out.
    expect((await request(`${server.url}/h/${hub.slug}?format=md`, { headers: { authorization: `Bearer ${sueAgent.key}` } })).status).toBe(401);
    expect((await request(`${server.url}/api/export/${padId}`, { headers: { authorization: `Bearer ${sueAgent.key}` } })).status).toBe(401);
    // The web app and Settings: 401 saying why.
    for (const reply of [await appTool(server, sue.cookie, 'show_dotpad', {}), await settings(sue.cookie, 'credentials')]) {
      expect([reply.status, reply.body.error, reply.body.message]).toEqual([401, 'unauthenticated', SUSPENDED]);
    }
    // Signing in again is refused.
    const again = await devSignIn('Sue Suspect', 'sue@example.test');
    expect([again.status, again.body.message]).toEqual([403, SUSPENDED]);
    // /sync: the key and the session are refused.
    const byKey = await openProvider(server, padId, sueAgent.key);
    await expect.poll(() => byKey.denied()).toBeTruthy();
    byKey.close();
    const bySessionNow = openWithCookie(server, padId, sue.cookie);
    await expect.poll(() => bySessionNow.state()).toMatch(/^denied: /);
    bySessionNow.close();
    // The moderators see it listed.
    expect((await settings(moderator.cookie, 'credentials')).body.moderation.suspended).toEqual([
      expect.objectContaining({ id: sue.id, handle: '@sue-suspect', kind: 'human', note: 'Spam.' }),
    ]);

    const lifted = await settings(moderator.cookie, 'suspend', { who: sue.id, suspended: false });
    expect(lifted.body).toMatchObject({ suspended: false, changed: true });
    expect((await rest(server, sueAgent.key, 'open_pad', { pad_id: padId })).status).toBe(200);
    expect((await appTool(server, sue.cookie, 'show_dotpad', {})).status).toBe(200);
    expect((await devSignIn('Sue Suspect', 'sue@example.test')).status).toBe(200);
  });

  it('suspends an agent alone by its handle; a moderator cannot be suspended, and nobody unknown', async () => {
    const loner = await registerAgent(server, 'Loner', { unlinked: true });
    expect((await settings(moderator.cookie, 'suspend', { who: loner.handle, suspended: true })).body).toMatchObject({ participant_id: loner.id, kind: 'agent', agents: 0 });
    expect((await rest(server, loner.key, 'show_dotpad', {})).status).toBe(401);
    // Sue and her agent are not touched by it.
    expect((await rest(server, sueAgent.key, 'show_dotpad', {})).status).toBe(200);

    const self = await settings(moderator.cookie, 'suspend', { who: moderator.id, suspended: true });
    expect([self.status, self.body.error]).toEqual([403, 'forbidden']);
    expect(self.body.message).toContain('SVC_MODERATORS');
    const nobody = await settings(moderator.cookie, 'suspend', { who: '@nobody-here', suspended: true });
    expect([nobody.status, nobody.body.error]).toEqual([404, 'not_found']);
    expect((await settings(moderator.cookie, 'credentials')).body.moderation.suspended.map((s: { id: string }) => s.id)).toEqual([loner.id]);
  });

  it('a suspended account reads unverified: its links show as their host, and come back once it is lifted', async () => {
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now(), created_at = now() - interval '2 days' WHERE id = ${sue.id}`);
    await appTool(server, sue.cookie, 'post_reply', { thread_id: openThread, body: 'The list: https://books.example/list' });
    const read = async () => (await request(`${server.url}/t/${openThread}?format=md`)).text;
    expect(await read()).toContain('https://books.example/list');
    // Pages show an author's reach as of the thread's last change (choices.md): a reply moves it on.
    await appTool(server, moderator.cookie, 'join_hub', { hub: hub.slug });
    const reply = (body: string) => appTool(server, moderator.cookie, 'post_reply', { thread_id: openThread, body });
    await settings(moderator.cookie, 'suspend', { who: sue.id, suspended: true });
    await reply('Noted.');
    expect(await read()).toContain('The list: [link to books.example]');
    await settings(moderator.cookie, 'suspend', { who: sue.id, suspended: false });
    await reply('Lifted.');
    expect(await read()).toContain('The list: https://books.example/list');
  });

  it('guest-pause pauses guests joining, guest posting, or both, and lets them go on', async () => {
    const guest = await jumpIn(server, { thread: openThread, name: 'Gale' });
    const guestCookie = guest.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!.split(';')[0]!;

    const joins = await settings(moderator.cookie, 'guest-pause', { paused: true, what: 'registration', note: 'A wave of spam.' });
    expect(joins.status, joins.text).toBe(200);
    expect(joins.body.paused.map((p: { what: string }) => p.what)).toEqual(['guest_registration']);
    const refused = await jumpIn(server, { thread: openThread, name: 'Late guest' });
    expect([refused.status, refused.body.error]).toEqual([503, 'paused']);
    // Guests already in still post.
    expect((await appTool(server, guestCookie, 'post_reply', { thread_id: openThread, body: 'Still here.' })).status).toBe(200);

    const both = await settings(moderator.cookie, 'guest-pause', { paused: true });
    expect(both.body.paused.map((p: { what: string }) => p.what)).toEqual(['guest_posting', 'guest_registration']);
    const quiet = await appTool(server, guestCookie, 'post_reply', { thread_id: openThread, body: 'Hello?' });
    expect([quiet.status, quiet.body.error]).toEqual([503, 'paused']);
    // People with accounts post on.
    expect((await appTool(server, sue.cookie, 'post_reply', { thread_id: openThread, body: 'Members go on.' })).status).toBe(200);
    expect((await settings(moderator.cookie, 'credentials')).body.moderation.paused).toHaveLength(2);

    const resumed = await settings(moderator.cookie, 'guest-pause', { paused: false });
    expect(resumed.body).toEqual({ paused: [] });
    expect((await appTool(server, guestCookie, 'post_reply', { thread_id: openThread, body: 'Back.' })).status).toBe(200);
    expect((await jumpIn(server, { thread: openThread, name: 'Later guest' })).status).toBe(201);
  });
});

describe.skipIf(!redisUrl || !databaseUrl)('a suspension across instances', () => {
  const closers: (() => void | Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('made through A, is heard by B on the change feed: B refuses the key at once and closes its live connection; lifting it lets the key in on B', async () => {
    const [a, b] = await instancePair(redisUrl!, closers, { SVC_MODERATORS: 'mod@example.test' });
    const moderator = await signIn(a, 'Mona Moderator', 'mod@example.test');
    await poke(a, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = ${moderator.id}`);
    const pat = await signIn(a, 'Pat', 'pat@example.test');
    const made = await settingsOf(a)(pat.cookie, 'create-agent', { name: 'Pat bot' });
    const key = made.body.agent_key as string;
    const hub = await rest(a, key, 'create_hub', { name: 'Pat hub' });
    const padId = (await rest(a, key, 'create_pad', { hub: hub.body.data.slug, title: 'Live', text: 'Live text.' })).body.data.pad_id as string;
    // B holds the key's lookup and a live connection made with it.
    expect((await rest(b, key, 'open_pad', { pad_id: padId })).status).toBe(200);
    const live = await openProvider(b, padId, key);
    closers.push(() => live.close());
    await live.synced;
    let closed = 0;
    live.provider.on('close', () => closed++);
    const credentialId = (await authenticateBearer(a.core, key)).credentialId;
    const heard: string[] = [];
    b.core.db.watchChanges({ changed: () => {}, hearing: () => {}, credentialEnded: (id) => heard.push(id) });

    expect((await settingsOf(a)(moderator.cookie, 'suspend', { who: pat.id, suspended: true })).status).toBe(200);
    await expect.poll(() => heard).toContain(credentialId);
    expect((await rest(b, key, 'open_pad', { pad_id: padId })).status).toBe(401);
    await expect.poll(() => closed).toBeGreaterThan(0);

    heard.length = 0;
    expect((await settingsOf(a)(moderator.cookie, 'suspend', { who: pat.id, suspended: false })).status).toBe(200);
    await expect.poll(() => heard).toContain(credentialId);
    expect((await rest(b, key, 'open_pad', { pad_id: padId })).status).toBe(200);
  });
});
