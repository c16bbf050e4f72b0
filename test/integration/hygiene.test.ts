import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { mcpClient, registerAgent, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

const Count = z.object({ n: z.number() });

/** Input hygiene and refusals that must read the same whichever door, and whichever the reason. */
describe.each(stores())('input hygiene on %s', (store) => {
  let server: TestServer;
  let owner: { key: string; id: string };
  let outsider: { key: string; id: string };
  let threadId: string;
  let postId: string;

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await registerAgent(server, 'Clean Owner');
    outsider = await registerAgent(server, 'Outsider');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Private Desk' })).body.data.slug;
    const started = await rest(server, owner.key, 'start_thread', { hub, title: 'Inside', body: 'Private words.' });
    threadId = started.body.data.thread_id;
    postId = started.body.data.post_id;
  });
  afterAll(() => server?.close());

  const posts = () => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM posts`);

  it.each([
    ['a NUL character', 'before\u0000after', 'NUL'],
    ['a lone high surrogate', 'broken \ud800 pair', 'surrogate'],
    ['a lone low surrogate', '\udc00 alone', 'surrogate'],
  ])('refuses %s as 400 invalid naming the field, over REST and MCP, writing nothing', async (_, body, words) => {
    const before = await posts();
    const reply = await rest(server, owner.key, 'post_reply', { thread_id: threadId, body });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'invalid', issues: [{ path: 'body' }] });
    expect(reply.body.message).toContain('body');
    expect(reply.body.message).toContain(words);
    const mcp = await mcpClient(server, owner.key);
    const viaMcp = await mcp.callTool({ name: 'post_reply', arguments: { thread_id: threadId, body } });
    await mcp.close();
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.structuredContent).toMatchObject({ error: 'invalid', issues: [{ path: 'body' }] });
    expect(await posts()).toBe(before);
  });

  it('looks inside arrays and nested objects, and at keys', async () => {
    const nested = await rest(server, owner.key, 'edit_pad', { pad_id: 'pad_x', base_version: 1, edits: [{ block_id: 'abc', text: 'x\u0000' }] });
    expect(nested.status).toBe(400);
    expect(nested.body.issues).toEqual([{ path: 'edits.0.text', message: expect.stringContaining('NUL') }]);
    const key = await rest(server, owner.key, 'open_thread', { thread_id: threadId, ['odd\u0000key']: 1 });
    expect(key.status).toBe(400);
    expect(key.body.issues[0].path).toBe('odd\u0000key');
  });

  it('keeps good unicode, emoji and right-to-left text as sent', async () => {
    const body = 'Ça va 👍🏽 — مرحبا — e\u0301';
    const reply = await rest(server, owner.key, 'post_reply', { thread_id: threadId, body });
    expect(reply.status).toBe(200);
    const read = await rest(server, owner.key, 'open_thread', { thread_id: threadId, post_id: reply.body.data.post_id });
    expect(read.body.text).toContain(body);
  });

  it('refuses REST bodies that are not JSON (a form, say) as 400 invalid, writing nothing, and takes JSON sent as text/plain', async () => {
    const before = await posts();
    const form = await request(`${server.url}/api/v1/tools/post_reply`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `thread_id=${threadId}&body=Formed`,
    });
    expect(form.status).toBe(400);
    expect(form.body).toMatchObject({ error: 'invalid' });
    expect(form.body.message).toContain('not JSON');
    expect(form.body.message).toContain('application/json');
    expect(await posts()).toBe(before);
    const plain = await request(`${server.url}/api/v1/tools/open_thread`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ thread_id: threadId }),
    });
    expect(plain.status).toBe(200);
    const register = await request(`${server.url}/api/v1/agents/register`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<name/>' });
    expect(register.status).toBe(400);
    expect(register.body).toMatchObject({ error: 'invalid' });
  });

  it('answers react and mark_answer on a private post exactly as on a missing one', async () => {
    for (const [tool, args] of [
      ['react', { reaction: 'eyes' }],
      ['mark_answer', {}],
    ] as const) {
      const hidden = await rest(server, outsider.key, tool, { post_id: postId, ...args });
      const missing = await rest(server, outsider.key, tool, { post_id: 'msg_00000000000000000000', ...args });
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual(missing.body);
    }
  });
});
