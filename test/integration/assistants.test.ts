import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { sql } from 'slonik';
import { z } from 'zod';
import { modelTools } from '../../api/tools/registry.ts';
import { assistantToken, UNKNOWN_APP_CALLBACK } from '../support/assistant.ts';
import { mcpClient, poke, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

const CallerRow = z.object({ caller: z.string().nullable(), author_id: z.string() });

type Meta = Record<string, unknown>;
type Called = { isError?: boolean; structuredContent?: any; _meta?: Meta; content?: unknown };

/**
 * An assistant host over OAuth (SPEC part 4 "What tools/list shows", "Click proof for app-only
 * tools"; part 5 "as_agent"): tokens minted through the real OAuth flow, calls through the MCP SDK's
 * client, rows checked after.
 */
describe.each(stores())('assistant hosts on %s', (store) => {
  let server: TestServer;
  let person: { cookie: string; id: string };
  let agent: { id: string; handle: string };
  let token: string;
  let host: Client;

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    person = await signIn(server, 'Ann', `ann-${randomUUID()}@example.com`);
    const made = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Scribe' }),
    });
    agent = { id: made.body.agent.id, handle: made.body.agent.handle };
    token = await assistantToken(server, person.cookie);
    host = await mcpClient(server, token);
    await host.listTools();
  });
  afterAll(async () => {
    await host?.close();
    await server?.close();
  });

  const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<Called>;
  const ok = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
    const result = await call(client, name, args);
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.structuredContent)}`);
    return result;
  };
  const post = (id: string) => server.core.db.pool.one(sql.type(CallerRow)`SELECT caller, author_id FROM posts WHERE id = ${id}`);
  const newHub = async (client: Client, args: Record<string, unknown> = {}) => (await ok(client, 'create_hub', { name: `Room ${randomUUID().slice(0, 6)}`, ...args })).structuredContent;

  it('lists the model tools with output schemas and as_agent, and the app-only ui_* tools; never the key-only or settings ones', async () => {
    const { tools } = await host.listTools();
    const model = tools.filter((tool) => !tool.name.startsWith('ui_'));
    // The spec's 35 once every model tool is built: all but the four for an agent's own key.
    expect(model.map((tool) => tool.name).sort()).toEqual(modelTools.filter((tool) => !tool.agentKeyOnly).map((tool) => tool.name).sort());
    for (const name of ['link', 'rotate_key', 'set_handle', 'mint_subagent', 'credentials', 'create-agent']) {
      expect(tools.some((tool) => tool.name === name), name).toBe(false);
      expect((await call(host, name)).structuredContent, name).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    }
    expect(model.every((tool) => tool.outputSchema?.type === 'object' && 'as_agent' in (tool.inputSchema.properties ?? {}))).toBe(true);
    expect(tools.find((tool) => tool.name === 'ui_view_session')?._meta).toEqual({ ui: { visibility: ['app'] } });
    expect(tools.find((tool) => tool.name === 'open_thread')?._meta).toMatchObject({ ui: { resourceUri: 'ui://svc/view-v1.html', visibility: ['model', 'app'] } });
    // The agent key's listing is far smaller: no output schemas, no ui_* tools.
    expect(JSON.stringify(tools).length).toBeGreaterThan(25_000);
  });

  it('answers as the person ("assistant"): results the output schemas accept, with the card view in _meta, and attribution saying so', async () => {
    const hub = await newHub(host);
    const started = await ok(host, 'start_thread', { hub: hub.slug, title: 'Plans', body: 'Written by the assistant.' });
    const { thread_id, post_id } = started.structuredContent;
    expect(await post(post_id)).toEqual({ caller: 'assistant', author_id: person.id });
    const read = await ok(host, 'open_thread', { thread_id });
    expect((read._meta!['svc/view'] as any).posts[0]).toMatchObject({ id: post_id, caller: 'assistant' });
    expect(read._meta!['svc/viewToken']).toBeUndefined();
    expect(JSON.stringify(read.content)).toContain('**Ann (by their assistant)**');
    const md = await request(`${server.url}/t/${thread_id}?format=md`, { headers: { cookie: person.cookie } });
    expect(md.text).toContain('**Ann (by their assistant)**');
    for (const name of ['show_dotpad', 'list_tasks', 'search_dotpad']) await ok(host, name, name === 'search_dotpad' ? { q: 'plans' } : {});
  });

  it('as_agent runs the call as the person\'s own agent, by handle, name, or id, recorded "<agent> via <host>"', async () => {
    const hub = await newHub(host, { as_agent: agent.handle });
    const started = await ok(host, 'start_thread', { hub: hub.slug, title: 'By the agent', body: 'Scribe here.', as_agent: 'Scribe' });
    expect(await post(started.structuredContent.post_id)).toEqual({ caller: 'via claude.ai', author_id: agent.id });
    const reply = await ok(host, 'post_reply', { thread_id: started.structuredContent.thread_id, body: 'Again.', as_agent: agent.id });
    expect(await post(reply.structuredContent.post_id)).toEqual({ caller: 'via claude.ai', author_id: agent.id });
    expect(reply.structuredContent.linked_to).toMatchObject({ id: person.id });
    const read = await ok(host, 'open_thread', { thread_id: started.structuredContent.thread_id, as_agent: agent.handle });
    expect(JSON.stringify(read.content)).toContain('Scribe (agent) (via claude.ai)');
    // The person holds no seat in the agent's hub: the agent's rights, not theirs.
    expect((await call(host, 'open_thread', { thread_id: started.structuredContent.thread_id })).structuredContent.error).toBe('not_found');
    // Someone else's agent, or no agent at all: 404 naming the person's own.
    const stranger = await signIn(server, 'Bob', `bob-${randomUUID()}@example.com`);
    const theirs = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: stranger.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Bobbot' }),
    });
    const refused = await call(host, 'show_dotpad', { as_agent: theirs.body.agent.handle });
    expect(refused.structuredContent).toMatchObject({ error: 'not_found' });
    expect(refused.structuredContent.message).toContain(`Your agents: ${agent.handle}`);
    // Over REST the OAuth token works the same.
    const viaRest = await rest(server, token, 'show_dotpad', { as_agent: 'nobody-here' });
    expect(viaRest.status).toBe(404);
  });

  it('click tokens: refused without one; bound to the credential, single use, 10 minutes; each app-only result brings the next', async () => {
    const hub = await newHub(host);
    const { thread_id } = (await ok(host, 'start_thread', { hub: hub.slug, title: 'Clicks', body: 'Start.' })).structuredContent;
    const bare = await call(host, 'ui_post_reply', { thread_id, body: 'No click.' });
    expect(bare.structuredContent.error).toBe('forbidden');
    expect(bare._meta!['svc/actOnWeb']).toBe(`${server.core.config.baseUrl}/t/${thread_id}`);

    const session = await ok(host, 'ui_view_session');
    expect(session.structuredContent).toMatchObject({ clicks: true, base_url: server.core.config.baseUrl });
    const first = session._meta!['svc/viewToken'] as string;
    expect(first).toMatch(/^svcw_/);
    const clicked = await ok(host, 'ui_post_reply', { thread_id, body: 'Clicked.', view_token: first });
    expect(await post(clicked.structuredContent.post_id)).toEqual({ caller: 'direct', author_id: person.id });
    const next = clicked._meta!['svc/viewToken'] as string;
    expect(next).toMatch(/^svcw_/);
    expect(next).not.toBe(first);

    // Spent once.
    expect((await call(host, 'ui_post_reply', { thread_id, body: 'Again.', view_token: first })).structuredContent.error).toBe('forbidden');
    // Another connection of the same person does not take this one's token.
    const other = await mcpClient(server, await assistantToken(server, person.cookie));
    expect((await call(other, 'ui_post_reply', { thread_id, body: 'Elsewhere.', view_token: next })).structuredContent.error).toBe('forbidden');
    await other.close();
    // Past its 10 minutes.
    await poke(server, sql.unsafe`UPDATE view_tokens SET expires_at = now() - interval '1 second' WHERE spent_at IS NULL`);
    const late = await call(host, 'ui_post_reply', { thread_id, body: 'Late.', view_token: next });
    expect(late.structuredContent.error).toBe('forbidden');
    expect(late.structuredContent.message).toMatch(/spent, expired or not this connection's/);
  });

  it("an unverified app's view gets no click tokens: its buttons are refused, pointing to the web", async () => {
    const app = await mcpClient(server, await assistantToken(server, person.cookie, { redirectUri: UNKNOWN_APP_CALLBACK, name: 'Some App' }));
    const session = await ok(app, 'ui_view_session');
    expect(session.structuredContent).toMatchObject({ clicks: false, act_on_web: `${server.core.config.baseUrl}/` });
    expect(session._meta!['svc/viewToken']).toBeUndefined();
    const hub = await newHub(app);
    const refused = await call(app, 'ui_invite', { to: hub.slug, view_token: 'svcw_made_up' });
    expect(refused.structuredContent.message).toMatch(/not a verified assistant host/);
    expect(refused._meta!['svc/actOnWeb']).toBe(`${server.core.config.baseUrl}/h/${hub.slug}`);
    await app.close();
  });

  it('approvals: an assistant without a click is refused with approveOnWeb; the same click in the view works; its decisions stay proposals', async () => {
    const hub = await newHub(host);
    const invite = await call(host, 'invite', { to: hub.slug });
    expect(invite.structuredContent.error).toBe('forbidden');
    expect(invite._meta!['svc/approveOnWeb']).toBe(`${server.core.config.baseUrl}/h/${hub.slug}`);
    const publish = await call(host, 'set_hub_visibility', { hub: hub.slug, audience: 'public', confirm: true });
    expect(publish.structuredContent).toMatchObject({ error: 'forbidden', approve_on_web: `${server.core.config.baseUrl}/h/${hub.slug}` });
    expect(publish.structuredContent.message).toMatch(/An assistant cannot set_hub_visibility on its own: the person approves it with a click/);
    // A preview decides nothing.
    await ok(host, 'set_hub_visibility', { hub: hub.slug, audience: 'public' });
    const viewToken = (await ok(host, 'ui_view_session'))._meta!['svc/viewToken'];
    const clicked = await ok(host, 'ui_invite', { to: hub.slug, view_token: viewToken });
    expect(clicked.structuredContent.url).toMatch(/\/invite#svci_/);

    const { pad_id, version } = (await ok(host, 'create_pad', { hub: hub.slug, title: 'Plan', text: 'One.' })).structuredContent;
    const edited = await ok(host, 'edit_pad', { pad_id, base_version: version, text: 'One.\n\nTwo.', decision: 'Two it is.' });
    expect(JSON.stringify(edited.content)).toContain('as a proposed decision');
    const proposed = await server.core.db.pool.oneFirst(sql.type(z.object({ proposed: z.boolean() }))`SELECT proposed FROM decisions WHERE id = ${edited.structuredContent.decision_id}`);
    expect(proposed).toBe(true);
  });
});

describe.each(stores())('SVC_HOST_APPROVALS=off on %s', (store) => {
  let server: TestServer;
  let host: Client;

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_HOST_APPROVALS: 'off' });
    const person = await signIn(server, 'Cy', `cy-${randomUUID()}@example.com`);
    host = await mcpClient(server, await assistantToken(server, person.cookie));
  });
  afterAll(async () => {
    await host?.close();
    await server?.close();
  });

  it('refuses approvals inside the host even when clicked, and pad edits over OAuth, pointing to the web', async () => {
    const hub = (await host.callTool({ name: 'create_hub', arguments: { name: 'Off' } })).structuredContent as any;
    const viewToken = ((await host.callTool({ name: 'ui_view_session', arguments: {} }))._meta as Meta)['svc/viewToken'];
    const clicked = (await host.callTool({ name: 'ui_invite', arguments: { to: hub.slug, view_token: viewToken } })) as Called;
    expect(clicked.structuredContent.error).toBe('forbidden');
    expect(clicked._meta!['svc/approveOnWeb']).toBe(`${server.core.config.baseUrl}/h/${hub.slug}`);
    const pad = (await host.callTool({ name: 'create_pad', arguments: { hub: hub.slug, title: 'P', text: 'A.' } })).structuredContent as any;
    const edit = (await host.callTool({ name: 'edit_pad', arguments: { pad_id: pad.pad_id, base_version: pad.version, text: 'B.' } })) as Called;
    expect(edit.structuredContent.error).toBe('forbidden');
    expect(edit.structuredContent.message).toMatch(/suggest the change with edit_pad and "propose": true/);
  });
});
