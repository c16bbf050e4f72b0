import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelTools } from '../../api/tools/registry.ts';
import { mcpClient, registerAgent, request, startTestServer, stores, type TestServer } from '../support/server.ts';
import { UNDESCRIBED } from '../../api/toolReference.ts';

/** What all 39 model tools of the spec may cost an agent in tools/list, in characters of JSON. */
const LISTING_BUDGET = 25_000;
const SPEC_TOOLS = 39;
/** What each tool still to come may take on average, so that all 39 fit. */
const PER_TOOL_TO_COME = 550;

/**
 * The room the listing leaves for what is still to come: the tools the spec names beyond these, and
 * `idempotency_key` (as the keyed tools list it) on every write a retry could repeat that does not take
 * it yet (an idempotent write needs none).
 */
function roomToCome(tools: { name: string; inputSchema: { properties?: Record<string, unknown> } }[]): number {
  const key = tools.map((tool) => tool.inputSchema.properties?.idempotency_key).find(Boolean);
  const perKey = JSON.stringify({ idempotency_key: key }).length - 1;
  const unkeyedWrites = modelTools.filter((tool) => !tool.readOnly && !tool.idempotent && !tool.keyed).length;
  return PER_TOOL_TO_COME * (SPEC_TOOLS - tools.length) + perKey * unkeyedWrites;
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** MCP at /mcp through the SDK's own client, and raw HTTP for what a client library hides. */
describe.each(stores())('MCP on %s', (store) => {
  let server: TestServer;
  let agent: { key: string; id: string };

  beforeAll(async () => {
    server = await startTestServer(store);
    agent = await registerAgent(server, 'MCP Bot');
  });
  afterAll(() => server?.close());

  it('introduces itself as svc 0.1.0 and lists the model tools with annotations', async () => {
    const client = await mcpClient(server, agent.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'svc', version: '0.1.0' });
    const { tools } = await client.listTools();
    // Every model tool of the registry, and the app-only ones not.
    expect(tools.map((t) => t.name).sort()).toEqual(modelTools.map((t) => t.name).sort());
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_hub', 'open_thread', 'edit_pad', 'wait_for_changes']));
    expect(tools.map((t) => t.name)).not.toContain('ui_my_hubs');
    const openThread = tools.find((t) => t.name === 'open_thread')!;
    expect(openThread.annotations).toEqual({ title: 'Open a thread', readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    const react = tools.find((t) => t.name === 'react')!;
    expect(react.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true, idempotentHint: true });
    // Agents pay for every character: the listing leaves room for the tools and keys still to come.
    const size = JSON.stringify(tools).length;
    expect(size).toBeLessThanOrEqual(LISTING_BUDGET - roomToCome(tools));
    // An agent key's listing carries no output schemas.
    expect(tools.every((t) => t.outputSchema === undefined)).toBe(true);
    for (const tool of tools) {
      for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description ?? UNDESCRIBED[field], `${tool.name}.${field}`).toBeTruthy();
      }
    }
    await client.close();
  });

  it('lists no bounds on the ids an agent passes back, and the tool still checks them as OpenAPI says', async () => {
    const client = await mcpClient(server, agent.key);
    const { tools } = await client.listTools();
    const listed = tools.find((t) => t.name === 'open_thread')!.inputSchema.properties!;
    expect(listed.thread_id).toEqual({ type: 'string', description: 'Thread id (thr_…).' });
    expect(listed.before_seq).toEqual({ type: 'integer', description: expect.any(String) });
    // Texts an agent writes keep their maximum.
    expect(tools.find((t) => t.name === 'post_reply')!.inputSchema.properties!.body).toMatchObject({ maxLength: 20_000 });
    const openapi = (await request(`${server.url}/openapi.json`)).body;
    const published = openapi.paths['/api/v1/tools/open_thread'].post.requestBody.content['application/json'].schema.properties;
    expect(published.thread_id).toMatchObject({ minLength: 1, maxLength: 100 });
    const long = await client.callTool({ name: 'open_thread', arguments: { thread_id: `thr_${'x'.repeat(100)}` } });
    expect(long.isError).toBe(true);
    expect(long.structuredContent).toMatchObject({ error: 'too_large' });
    await client.close();
  });

  it('answers a tool call with framed text, structured content and svc/api', async () => {
    const client = await mcpClient(server, agent.key);
    const hub = await client.callTool({ name: 'create_hub', arguments: { name: 'MCP Hub' } });
    expect(hub.isError).toBeFalsy();
    expect(hub._meta).toEqual({ 'svc/api': '1' });
    const hubData = hub.structuredContent as { slug: string };
    const thread = await client.callTool({ name: 'start_thread', arguments: { hub: hubData.slug, title: 'Over MCP', body: 'Hello ~~~ world' } });
    const threadId = (thread.structuredContent as { thread_id: string }).thread_id;
    const open = await client.callTool({ name: 'open_thread', arguments: { thread_id: threadId } });
    const text = (open.content as { type: string; text: string }[])[0]!.text;
    expect(text.startsWith('Text inside ~~~markdown fences')).toBe(true);
    expect(text).toContain('~~~~markdown\nHello ~~~ world\n~~~~');
    expect(JSON.stringify(open.structuredContent)).not.toContain('Hello');
    await client.close();
  });

  it('reports errors as isError results with the same code REST gives', async () => {
    const client = await mcpClient(server, agent.key);
    const missing = await client.callTool({ name: 'open_thread', arguments: { thread_id: 'thr_missing' } });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ error: 'not_found' });
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(unknown.structuredContent).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    const app = await client.callTool({ name: 'ui_my_hubs', arguments: {} });
    expect(app.structuredContent).toMatchObject({ error: 'not_found' });
    const misnamed = await client.callTool({ name: 'post_reply', arguments: { thread: 'thr_x', body: 'hi' } });
    expect(misnamed.isError).toBe(true);
    const text = (misnamed.content as { text: string }[])[0]!.text;
    expect(text.startsWith('Input validation error')).toBe(true);
    expect(misnamed.structuredContent).toMatchObject({ error: 'invalid', issues: [{ path: 'thread_id' }] });
    expect(text).toContain('"thread"');
    expect(text).toContain('"thread_id"');
    await client.close();
  });

  it('refuses a missing key with the OAuth challenge, and a bad key with invalid_token', async () => {
    const none = await request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_token');
    expect(none.body.error_description).toEqual(expect.any(String));
    const challenge = none.headers.get('www-authenticate')!;
    expect(challenge).toContain(`resource_metadata="${server.core.config.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).toContain('scope="svc:read svc:write"');
    expect(challenge).not.toContain('error=');

    const bad = await request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer svca_nottherightkey' },
      body: JSON.stringify(initialize),
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(bad.body.error).toBe('invalid_token');
  });

  it('answers a client that accepts only JSON, with one JSON body', async () => {
    const reply = await request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${agent.key}` },
      body: JSON.stringify(initialize),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(reply.body.result.serverInfo).toMatchObject({ name: 'svc', version: '0.1.0' });
    expect(reply.headers.get('mcp-session-id')).toBeNull();
  });

  it('serves CORS for any origin, without frame or CSP headers', async () => {
    const preflight = await request(`${server.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://host.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
    expect(preflight.headers.get('access-control-expose-headers')).toBe('WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version');
    expect(preflight.headers.get('x-frame-options')).toBeNull();
    expect(preflight.headers.get('content-security-policy')).toBeNull();
  });

  it('shows a browser a short HTML page', async () => {
    const page = await request(`${server.url}/mcp`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('MCP');
  });

  it('refuses a request body over 400,000 bytes', async () => {
    const big = { ...initialize, params: { ...initialize.params, padding: 'x'.repeat(400_001) } };
    const reply = await request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}` },
      body: JSON.stringify(big),
    });
    expect(reply.status).toBe(413);
    expect(reply.body.error).toBe('too_large');
  });

  it('speaks stateless streamable HTTP: batches, notifications, versions and malformed messages', async () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      request(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    // A batch gets its answers in request order, the notification in it unanswered.
    const batch = await post([
      { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 7, method: 'ping' },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.map((answer: { id: unknown }) => answer.id)).toEqual(['b', 7]);
    expect(batch.body[0].result.tools.length).toBeGreaterThan(0);
    expect(batch.body[1].result).toEqual({});
    // Nothing to answer: 202 and no body.
    const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    // An unknown method is a JSON-RPC error answer, not an HTTP one.
    const unknown = await post({ jsonrpc: '2.0', id: 3, method: 'resources/teleport' });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ id: 3, error: { code: -32601 } });
    // Refused before any handler runs.
    const version = await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
    expect(version.body.error.message).toContain('1999-01-01');
    const notJsonRpc = await post({ id: 5, method: 'ping' });
    expect(notJsonRpc.status).toBe(400);
    expect(notJsonRpc.body).toMatchObject({ id: null, error: { code: -32700 } });
    const notJson = await post('{"jsonrpc":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe(-32700);
    const form = await post({ jsonrpc: '2.0', id: 6, method: 'ping' }, { 'content-type': 'text/plain' });
    expect(form.status).toBe(415);
  });

  it('answers tools/call with missing or malformed params as Invalid params (-32602)', async () => {
    const call = (id: number, params?: unknown) =>
      request(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', ...(params === undefined ? {} : { params }) }),
      });
    const cases: [unknown, string][] = [
      [undefined, 'params must be an object'],
      ['open_hub', 'params must be an object'],
      [{ arguments: { hub: 'x' } }, 'name must be'],
    ];
    for (const [i, [params, says]] of cases.entries()) {
      const reply = await call(i + 1, params);
      expect(reply.status, JSON.stringify(params)).toBe(200);
      expect(reply.body, JSON.stringify(params)).toMatchObject({ jsonrpc: '2.0', id: i + 1, error: { code: -32602 } });
      expect(reply.body.error.message).toContain(says);
      // A sentence, not zod's issues.
      expect(reply.body.error.message).not.toContain('"code"');
    }
  });

  it('answers tools/call whose arguments are no object as an isError result, as every other input failure', async () => {
    for (const [i, args] of [['x'], 'open_hub', 7, true].entries()) {
      const reply = await request(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'open_hub', arguments: args } }),
      });
      expect(reply.status, JSON.stringify(args)).toBe(200);
      expect(reply.body.result, JSON.stringify(args)).toMatchObject({ isError: true, structuredContent: { error: 'invalid', issues: [{ path: '' }] } });
      expect(reply.body.result.content[0].text).toContain('Input validation error: the arguments must be a JSON object');
    }
  });

  it('refuses GET and DELETE with 405: there is no stream to hold and no session to end', async () => {
    for (const method of ['GET', 'DELETE']) {
      const reply = await request(`${server.url}/mcp`, { method, headers: { accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}` } });
      expect(reply.status, method).toBe(405);
      expect(reply.headers.get('allow')).toBe('POST, OPTIONS');
      expect(reply.body.error.code).toBe(-32000);
    }
  });

  it('answers each caller as itself when concurrent posts reuse one request id', async () => {
    const other = await registerAgent(server, 'Other Bot');
    const client = await mcpClient(server, agent.key);
    const hub = await client.callTool({ name: 'create_hub', arguments: { name: 'Only mine' } });
    const slug = (hub.structuredContent as { slug: string }).slug;
    await client.close();
    const openHub = (key: string) =>
      request(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_hub', arguments: { hub: slug } } }),
      });
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => openHub(i % 2 ? other.key : agent.key)));
    for (const [i, reply] of replies.entries()) {
      expect(reply.body.id).toBe(1);
      // The hub is private to its owner: the other agent is told it does not exist.
      if (i % 2) expect(reply.body.result).toMatchObject({ isError: true, structuredContent: { error: 'not_found' } });
      else expect(reply.body.result.structuredContent.seat).toEqual({ role: 'owner' });
    }
  });

  it('keeps concurrent calls apart', async () => {
    const client = await mcpClient(server, agent.key);
    const hub = await client.callTool({ name: 'create_hub', arguments: { name: 'Concurrency' } });
    const slug = (hub.structuredContent as { slug: string }).slug;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.callTool({ name: 'start_thread', arguments: { hub: slug, title: `T${i}`, body: `b${i}` } })),
    );
    expect(results.filter((r) => r.isError)).toHaveLength(0);
    expect(new Set(results.map((r) => (r.structuredContent as { thread_id: string }).thread_id)).size).toBe(20);
    await client.close();
  });
});
