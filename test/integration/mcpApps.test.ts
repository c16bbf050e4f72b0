import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { appTool, mcpClient, registerAgent, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

const CallerRow = z.object({ caller: z.string().nullable() });

/** The MCP Apps resource, and what an agent key and the web app get of the assistant-host surface (SPEC part 4). */
describe.each(stores())('MCP Apps view and callers on %s', (store) => {
  let server: TestServer;
  let agent: { key: string; id: string; handle: string };

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_WIDGET_DOMAIN: 'dotpad.example-widgets.test' });
    agent = await registerAgent(server, 'Apps Bot');
  });
  afterAll(() => server?.close());

  const callerOfPost = (id: string) => server.core.db.pool.oneFirst(sql.type(CallerRow)`SELECT caller FROM posts WHERE id = ${id}`);

  it('lists and serves ui://svc/view-v1.html as an MCP App: no border, one font host, no connect domains, the widget domain', async () => {
    const client = await mcpClient(server, agent.key);
    const { resources } = await client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: 'ui://svc/view-v1.html', mimeType: 'text/html;profile=mcp-app' })]);
    const read = await client.readResource({ uri: 'ui://svc/view-v1.html' });
    const content = read.contents[0] as { mimeType?: string; text: string; _meta?: unknown };
    expect(content.mimeType).toBe('text/html;profile=mcp-app');
    expect(content._meta).toEqual({
      ui: { prefersBorder: false, csp: { connectDomains: [], resourceDomains: ['https://fonts.gstatic.com'] }, domain: 'dotpad.example-widgets.test' },
    });
    // One file: the script is in the page, nothing to fetch.
    expect(String(content.text)).toMatch(/^<!doctype html>/i);
    expect(String(content.text)).toContain('<script type="module">');
    expect(String(content.text)).not.toMatch(/<script[^>]+src=/);
    await expect(client.readResource({ uri: 'ui://svc/other.html' })).rejects.toThrow(/Unknown resource/);
    await client.close();
  });

  it('an agent key: no ui_* tool, no settings operation, no view or click token in results', async () => {
    const client = await mcpClient(server, agent.key);
    const { tools } = await client.listTools();
    expect(tools.some((tool) => tool.name.startsWith('ui_') || tool.outputSchema || tool._meta)).toBe(false);
    for (const name of ['ui_view_session', 'ui_post_reply', 'credentials', 'create-agent']) {
      const refused = await client.callTool({ name, arguments: {} });
      expect(refused.isError, name).toBe(true);
      expect(refused.structuredContent, name).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
    }
    const home = await client.callTool({ name: 'show_dotpad', arguments: {} });
    expect(home._meta).toEqual({ 'svc/api': '1' });
    await client.close();
  });

  it('records an agent on its key as "agent" and the web app as "direct", and shows neither beside the name', async () => {
    const hub = (await rest(server, agent.key, 'create_hub', { name: `Callers ${randomUUID().slice(0, 6)}` })).body.data;
    const started = (await rest(server, agent.key, 'start_thread', { hub: hub.slug, title: 'Who wrote this', body: 'By key.' })).body.data;
    expect(await callerOfPost(started.post_id)).toBe('agent');
    const person = await signIn(server, 'Web Person', `web-${randomUUID()}@example.com`);
    const hub2 = (await appTool(server, person.cookie, 'create_hub', { name: `Web ${randomUUID().slice(0, 6)}` })).body.data;
    const webThread = (await appTool(server, person.cookie, 'start_thread', { hub: hub2.slug, title: 'From the web', body: 'By hand.' })).body.data;
    expect(await callerOfPost(webThread.post_id)).toBe('direct');
    const read = await appTool(server, person.cookie, 'open_thread', { thread_id: webThread.thread_id });
    expect(read.body.view.posts[0].caller).toBe('direct');
    expect(read.body.text).toContain('**Web Person** ·');
  });

  it('as_agent on an agent key naming another agent is 400, and naming itself changes nothing', async () => {
    const other = await registerAgent(server, 'Other Bot');
    const refused = await rest(server, agent.key, 'show_dotpad', { as_agent: other.handle });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/cannot act as another agent; leave as_agent unset/);
    expect((await rest(server, agent.key, 'show_dotpad', { as_agent: agent.handle })).status).toBe(200);
  });
});
