import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../api/tools/registry.ts';
import { invoke } from '../../api/tools/invoke.ts';
import { authenticateBearer } from '../../server/core/identity/credentials.ts';
import { appTool, mcpClient, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * The settings operations (audience `settings`) are the web app's alone: served on
 * `POST /api/settings/:op` to a signed-in browser, never listed or served on `/mcp`, `/api/v1` or the
 * app's tool door, whatever the credential; and that door serves nothing else.
 */
const SETTINGS = tools.filter((tool) => tool.audience === 'settings').map((tool) => tool.name);

describe.each(stores())('Settings operations stay on their own door on %s', (store) => {
  let server: TestServer;
  let person: { cookie: string; id: string };
  let agent: { id: string; key: string };
  let session: string;

  const settings = (op: string, body: unknown, headers: Record<string, string> = { cookie: person.cookie }) =>
    request(`${server.url}/api/settings/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, ...headers },
      body: JSON.stringify(body),
    });
  const agentKeys = async () => (await settings('credentials', {})).body.credentials.filter((c: { kind: string }) => c.kind === 'agent_key');

  beforeAll(async () => {
    server = await startTestServer(store);
    person = await signIn(server, 'Sam Settings', `sam-${store}@example.test`);
    session = person.cookie.split('=')[1]!;
    const made = await settings('create-agent', { name: 'Sam bot' });
    expect(made.status).toBe(201);
    agent = { id: made.body.agent.id, key: made.body.agent_key };
  });
  afterAll(() => server?.close());

  it('the registry holds them, and their own door serves them to the session', async () => {
    expect(SETTINGS).toEqual(expect.arrayContaining(['credentials', 'revoke', 'create-agent', 'new-agent-key', 'delete-account', 'verify-email']));
    expect((await settings('credentials', {})).status).toBe(200);
    expect(await agentKeys()).toHaveLength(1);
  });

  it('are listed nowhere an agent looks: MCP tools/list, GET /api/v1/tools, /openapi.json', async () => {
    const client = await mcpClient(server, agent.key);
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    await client.close();
    expect(listed.length).toBeGreaterThan(30);
    const restListed = (await request(`${server.url}/api/v1/tools`, { headers: { authorization: `Bearer ${agent.key}` } })).body.tools.map((t: { name: string }) => t.name);
    // The REST list leaves out verify for a key with no seat in a Checked hub (SPEC part 4).
    expect(restListed.toSorted()).toEqual(listed.filter((name) => name !== 'verify').toSorted());
    const openapi = JSON.stringify(Object.keys((await request(`${server.url}/openapi.json`)).body.paths));
    for (const name of SETTINGS) {
      expect(listed, name).not.toContain(name);
      expect(restListed, name).not.toContain(name);
      expect(openapi, name).not.toContain(`/${name}"`);
    }
  });

  it('are unknown on /mcp and /api/v1/tools/<name> to an agent key, and change nothing', async () => {
    const client = await mcpClient(server, agent.key);
    for (const [name, args] of [
      ['new-agent-key', { agent_id: agent.id }],
      ['delete-account', { confirm_handle: '@sam-settings' }],
      ['credentials', {}],
    ] as const) {
      const called = await client.callTool({ name, arguments: args });
      expect(called.isError, name).toBe(true);
      expect(called.structuredContent, name).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
      const viaRest = await rest(server, agent.key, name, args);
      expect(viaRest.status, name).toBe(404);
      expect(viaRest.body, name).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    }
    await client.close();
    // No key was made and the account is still there.
    expect(await agentKeys()).toHaveLength(1);
  });

  it('are not callable with a session on /mcp, /api/v1 or the app’s tool door', async () => {
    // A session sent as a Bearer token is refused at the door, before any tool is looked up.
    const mcp = await request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${session}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'new-agent-key', arguments: { agent_id: agent.id } } }),
    });
    expect(mcp.status).toBe(401);
    expect((await rest(server, session, 'new-agent-key', { agent_id: agent.id })).status).toBe(401);
    // /api/v1 never reads the cookie.
    const withCookie = await request(`${server.url}/api/v1/tools/new-agent-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: person.cookie },
      body: JSON.stringify({ agent_id: agent.id }),
    });
    expect(withCookie.status).toBe(401);
    // The app's door serves model and app tools, not settings operations.
    const viaApp = await appTool(server, person.cookie, 'new-agent-key', { agent_id: agent.id });
    expect(viaApp.status).toBe(404);
    expect(viaApp.body).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    expect(await agentKeys()).toHaveLength(1);
  });

  it('the settings door serves nothing else, and no one but a session', async () => {
    const modelTool = await settings('open_hub', { hub: 'anything' });
    expect(modelTool.status).toBe(404);
    expect(modelTool.body).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    expect((await settings('no-such-op', {})).status).toBe(404);
    const byKey = await settings('new-agent-key', { agent_id: agent.id }, { authorization: `Bearer ${agent.key}` });
    expect(byKey.status).toBe(401);
    // The pipeline itself refuses any caller but a web session, whichever door a later credential comes by.
    const agentActor = await authenticateBearer(server.core, agent.key);
    await expect(invoke(server.core, agentActor, 'new-agent-key', { agent_id: agent.id }, 'settings')).rejects.toMatchObject({ code: 'not_found', message: 'Unknown tool.' });
    await expect(invoke(server.core, agentActor, 'credentials', {}, 'settings')).rejects.toMatchObject({ code: 'not_found' });
    expect(await agentKeys()).toHaveLength(1);
  });
});
