import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor } from '../support/agentDoors.ts';
import { mcpClient, registerAgent, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

const DOORS: AgentDoor[] = ['rest', 'mcp'];
let serial = 0;
/** Text of exactly `length` characters, unlike any other (same texts are paced). */
const textOf = (length: number, fill = 'x') => {
  const head = `${++serial}-${Date.now()}-`;
  return (head + fill.repeat(length)).slice(0, length);
};
/** A JSON object body of exactly `bytes` bytes. */
const bodyOf = (bytes: number, field = 'padding') => {
  const shell = JSON.stringify({ [field]: '' });
  return JSON.stringify({ [field]: 'a'.repeat(bytes - shell.length) });
};

/** SPEC part 8 "Sizes": each limit at its boundary, N accepted and N + 1 refused `413 too_large`, through REST and MCP. */
describe.each(stores())('sizes on %s', (store) => {
  let server: TestServer;
  let doors: ReturnType<typeof agentDoors>;

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  /** An agent of its own with a hub and a thread, so no test's writes pace another's. */
  async function desk(name: string) {
    const agent = await registerAgent(server, name);
    const hub = (await rest(server, agent.key, 'create_hub', { name: `${name} desk` })).body.data.slug as string;
    const thread = (await rest(server, agent.key, 'start_thread', { hub, title: 'Sizes', body: 'Start.' })).body.data.thread_id as string;
    return { agent, hub, thread };
  }

  async function accepted(door: AgentDoor, agent: { key: string }, tool: string, args: Record<string, unknown>) {
    const answer = await doors.call(door, agent, tool, args);
    expect(answer.ok, `${tool} through ${door}: ${answer.text}`).toBe(true);
    return answer.body;
  }

  /** Refused as a size: 413 too_large over REST, an isError result with the same body over MCP, naming the field. */
  async function refused(door: AgentDoor, agent: { key: string }, tool: string, args: Record<string, unknown>, path: string, code = 'too_large') {
    if (door === 'rest') {
      const reply = await rest(server, agent.key, tool, args);
      expect(reply.status, reply.text).toBe(code === 'too_large' ? 413 : 400);
      expect(reply.body.error).toBe(code);
      expect(reply.body.issues?.[0]?.path).toBe(path);
      return;
    }
    const answer = await doors.call(door, agent, tool, args);
    expect(answer.ok, answer.text).toBe(false);
    expect(answer.body.error).toBe(code);
    expect(answer.body.issues?.[0]?.path).toBe(path);
  }

  it.each(DOORS)('titles take 200 characters, posts 20,000 (%s)', async (door) => {
    const { agent, hub, thread } = await desk(`Titles ${door}`);
    await accepted(door, agent, 'start_thread', { hub, title: textOf(200, 'T'), body: 'Fits.' });
    await refused(door, agent, 'start_thread', { hub, title: textOf(201, 'T'), body: 'Title too long.' }, 'title');
    await accepted(door, agent, 'create_task', { thread_id: thread, title: textOf(200, 'K') });
    await refused(door, agent, 'create_task', { thread_id: thread, title: textOf(201, 'K') }, 'title');
    await accepted(door, agent, 'post_reply', { thread_id: thread, body: textOf(20_000) });
    await refused(door, agent, 'post_reply', { thread_id: thread, body: textOf(20_001) }, 'body');
  });

  it.each(DOORS)('a pad holds 60,000 characters; edit_pad takes 200 edits and 200 inserts a call (%s)', async (door) => {
    const { agent, hub } = await desk(`Pads ${door}`);
    await accepted(door, agent, 'create_pad', { hub, title: 'Full', text: textOf(60_000, 'p') });
    await refused(door, agent, 'create_pad', { hub, title: 'Over', text: textOf(60_001, 'p') }, 'text');

    const paragraphs = Array.from({ length: 200 }, (_, i) => `Paragraph ${i}.`).join('\n\n');
    const pad = (await accepted(door, agent, 'create_pad', { hub, title: 'Two hundred', text: paragraphs })).pad_id as string;
    const read = await rest(server, agent.key, 'open_pad', { pad_id: pad, mode: 'full' });
    const blocks = read.body.data.blocks as string[];
    expect(blocks).toHaveLength(200);
    const edits = blocks.map((block_id, i) => ({ block_id, text: `Paragraph ${i}, edited.` }));
    await refused(door, agent, 'edit_pad', { pad_id: pad, base_version: 1, edits: [...edits, edits[0]] }, 'edits');
    const edited = await accepted(door, agent, 'edit_pad', { pad_id: pad, base_version: 1, edits });
    expect(edited.changed).toHaveLength(200);
    const inserts = Array.from({ length: 200 }, (_, i) => ({ after: 'start', text: `New ${i}.` }));
    await refused(door, agent, 'edit_pad', { pad_id: pad, base_version: 2, inserts: [...inserts, inserts[0]] }, 'inserts');
    await accepted(door, agent, 'edit_pad', { pad_id: pad, base_version: 2, inserts });
  });

  it.each(DOORS)('an idempotency key is 8 to 200 characters: shorter is invalid, longer too_large (%s)', async (door) => {
    const { agent, thread } = await desk(`Keys ${door}`);
    await accepted(door, agent, 'post_reply', { thread_id: thread, body: 'Eight.', idempotency_key: textOf(8, 'k') });
    await refused(door, agent, 'post_reply', { thread_id: thread, body: 'Seven.', idempotency_key: textOf(7, 'k') }, 'idempotency_key', 'invalid');
    await accepted(door, agent, 'post_reply', { thread_id: thread, body: 'Two hundred.', idempotency_key: textOf(200, 'k') });
    await refused(door, agent, 'post_reply', { thread_id: thread, body: 'Two hundred and one.', idempotency_key: textOf(201, 'k') }, 'idempotency_key');
  });

  it.each(DOORS)('an invite lasts up to 14 days with 1 to 1,000 uses (%s)', async (door) => {
    const { agent, hub } = await desk(`Invites ${door}`);
    await accepted(door, agent, 'invite', { to: hub, uses: 1_000, days: 14 });
    await refused(door, agent, 'invite', { to: hub, uses: 1_001 }, 'uses');
    await refused(door, agent, 'invite', { to: hub, days: 15 }, 'days');
    await refused(door, agent, 'invite', { to: hub, uses: 0 }, 'uses', 'invalid');
  });

  it('a display name is 80 characters: registering, adding an agent, signing in and joining as a guest', async () => {
    const tooLarge = (reply: Reply) => {
      expect(reply.status, reply.text).toBe(413);
      expect(reply.body).toMatchObject({ error: 'too_large', issues: [{ path: 'name' }] });
    };
    const register = (name: string) =>
      request(`${server.url}/api/v1/agents/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    expect((await register(textOf(80, 'n'))).status).toBe(201);
    tooLarge(await register(textOf(81, 'n')));

    const person = await signIn(server, textOf(80, 'P'), `sizes-${serial}@example.com`);
    const signInReply = await request(`${server.url}/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1' },
      body: JSON.stringify({ name: textOf(81, 'P'), email: 'too-long-name@example.com' }),
    });
    tooLarge(signInReply);

    const settings = (name: string) =>
      request(`${server.url}/api/settings/create-agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
        body: JSON.stringify({ name }),
      });
    expect((await settings(textOf(80, 'a'))).status).toBe(201);
    tooLarge(await settings(textOf(81, 'a')));

    const { agent, hub } = await desk('Guest host');
    const url = (await rest(server, agent.key, 'invite', { to: hub, uses: 5 })).body.data.url as string;
    const token = url.split('#')[1]!;
    const joinGuest = (name: string) =>
      request(`${server.url}/api/invite/join-guest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url },
        body: JSON.stringify({ token, name }),
      });
    tooLarge(await joinGuest(textOf(81, 'g')));
    expect((await joinGuest(textOf(80, 'g'))).status).toBe(200);
  });

  it('request bodies: each route reads its limit and refuses one byte more with 413 too_large', async () => {
    const agent = await registerAgent(server, 'Body sender');
    const person = await signIn(server, 'Body person', 'body-person@example.com');
    const app = { cookie: person.cookie, 'x-svc': '1', origin: server.url };
    const routes: [string, number, Record<string, string>][] = [
      ['/api/v1/tools/open_hub', 512 * 1024, { authorization: `Bearer ${agent.key}` }],
      ['/api/tools/open_hub', 512 * 1024, app],
      ['/api/settings/credentials', 16 * 1024, app],
      ['/api/v1/agents/register', 8 * 1024, {}],
      ['/api/jump-in', 2 * 1024, { origin: server.url }],
      ['/api/invite/join-guest', 2 * 1024, { 'x-svc': '1', origin: server.url }],
      ['/api/invite-preview', 2 * 1024, { 'x-svc': '1', origin: server.url }],
      ['/api/verify-email', 2 * 1024, { 'x-svc': '1', origin: server.url }],
    ];
    for (const [path, limit, headers] of routes) {
      const post = (bytes: number) => request(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: bodyOf(bytes) });
      const atLimit = await post(limit);
      expect(atLimit.status, `${path} at ${limit} bytes: ${atLimit.text.slice(0, 200)}`).not.toBe(413);
      expect(atLimit.status, `${path} at ${limit} bytes`).toBeLessThan(500);
      const over = await post(limit + 1);
      expect(over.status, `${path} at ${limit + 1} bytes`).toBe(413);
      expect(over.body.error).toBe('too_large');
    }
  });

  it('an MCP request of 400,000 bytes is answered, one byte more is 413 too_large', async () => {
    const { agent, thread } = await desk('MCP sender');
    const call = (bytes: number) => {
      const shell = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_thread', arguments: { thread_id: thread, padding: '' } } });
      const padding = 'a'.repeat(bytes - shell.length);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_thread', arguments: { thread_id: thread, padding } } });
      expect(Buffer.byteLength(body)).toBe(bytes);
      return request(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}` },
        body,
      });
    };
    const atLimit = await call(400_000);
    expect(atLimit.status, atLimit.text.slice(0, 300)).toBe(200);
    expect(atLimit.body.result.isError).toBeFalsy();
    expect(atLimit.body.result.structuredContent.thread_id).toBe(thread);
    const over = await call(400_001);
    expect(over.status).toBe(413);
    expect(over.body.error).toBe('too_large');
  });

  it('an MCP result stays under 110,000 characters: a full pad, and a thread of long posts', async () => {
    const { agent, hub, thread } = await desk('Long reader');
    const pad = (await rest(server, agent.key, 'create_pad', { hub, title: 'Long', text: Array.from({ length: 60 }, () => textOf(999, 'w')).join('\n\n').slice(0, 60_000) })).body.data.pad_id;
    for (let i = 0; i < 8; i++) {
      const reply = await rest(server, agent.key, 'post_reply', { thread_id: thread, body: textOf(20_000, 'z') });
      expect(reply.status, reply.text).toBe(200);
    }
    const client = await mcpClient(server, agent.key);
    try {
      for (const [name, args] of [['open_pad', { pad_id: pad, mode: 'full' }], ['open_thread', { thread_id: thread }]] as const) {
        const result = await client.callTool({ name, arguments: args });
        expect(result.isError, name).toBeFalsy();
        expect(JSON.stringify(result).length, name).toBeLessThan(110_000);
      }
    } finally {
      await client.close();
    }
  });
});
