// @module-tag heavy
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { sql } from 'slonik';
import { z } from 'zod';
import { assistantToken } from '../support/assistant.ts';
import { browserContext, ensureClientBuilt, haveChromium, launchBrowser } from '../support/browser.ts';
import { mcpClient, signIn, startTestServer, type TestServer } from '../support/server.ts';

const SHOTS = process.env.SHOTS_DIR;

/**
 * The MCP Apps view in Chromium, in a page that plays the host: the view's HTML (read over MCP, as a
 * host reads it) in a sandboxed iframe, spoken to by postMessage JSON-RPC as MCP Apps hosts do; its
 * tool calls go to /mcp with the assistant's OAuth token. It draws the thread card of an open_thread
 * result and sends a reply on a click, spending a click token.
 */
const HOST_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Test host</title>
<style>body{margin:0;padding:16px;background:#f0f0f3;font:14px system-ui} iframe{border:0;width:100%;height:420px;display:block}</style></head>
<body><p>Assistant: here is the thread.</p><div id="slot"></div><script>
window.startHost = (html, toolResult) => {
  const frame = document.createElement('iframe');
  frame.id = 'view';
  frame.setAttribute('sandbox', 'allow-scripts');
  const send = (message) => frame.contentWindow.postMessage(message, '*');
  window.addEventListener('message', async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.method === 'ui/initialize') {
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, hostInfo: { name: 'test-host', version: '1.0.0' },
        hostCapabilities: { serverTools: {}, openLinks: {} }, hostContext: { theme: 'light', displayMode: 'inline' } } });
    } else if (m.method === 'ui/notifications/initialized') {
      send({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: toolResult });
    } else if (m.method === 'tools/call') {
      try { send({ jsonrpc: '2.0', id: m.id, result: await window.callServerTool(m.params) }); }
      catch (error) { send({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: String(error) } }); }
    } else if (m.method === 'ui/notifications/size-changed') {
      frame.style.height = m.params.height + 'px';
    } else if (m.id !== undefined && m.method) {
      if (m.method === 'ui/open-link') window.openedLink = m.params.url;
      send({ jsonrpc: '2.0', id: m.id, result: {} });
    }
  });
  frame.srcdoc = html;
  document.getElementById('slot').append(frame);
};
</script></body></html>`;

const CallerRow = z.object({ caller: z.string().nullable(), body: z.string() });

describe.skipIf(!haveChromium)('the MCP Apps view in a host page', () => {
  let server: TestServer;
  let browser: Browser;
  let host: Client;
  let threadId: string;
  let html: string;
  let person: { cookie: string; id: string; email: string };

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer('pglite');
    browser = await launchBrowser();
    const email = `ann-${randomUUID()}@example.com`;
    person = { ...(await signIn(server, 'Ann', email)), email };
    host = await mcpClient(server, await assistantToken(server, person.cookie));
    const hub = (await host.callTool({ name: 'create_hub', arguments: { name: 'Trip' } })).structuredContent as { slug: string };
    const started = await host.callTool({ name: 'start_thread', arguments: { hub: hub.slug, title: 'Where do we stay?', body: 'Two hotels are left near the station.' } });
    threadId = (started.structuredContent as { thread_id: string }).thread_id;
    const read = await host.readResource({ uri: 'ui://svc/view-v1.html' });
    html = (read.contents[0] as { text: string }).text;
  });
  afterAll(async () => {
    await host?.close();
    await browser?.close();
    await server?.close();
  });

  /** The host page showing the card of `tool`'s result over OAuth. */
  async function hostPage(width: number, tool = 'open_thread', args: Record<string, unknown> = { thread_id: threadId }): Promise<Page> {
    const context = await browserContext(browser, server.url);
    const page = await context.newPage();
    await page.setViewportSize({ width, height: 800 });
    await page.exposeFunction('callServerTool', (params: { name: string; arguments?: Record<string, unknown> }) => host.callTool(params));
    await page.setContent(HOST_PAGE);
    const opened = await host.callTool({ name: tool, arguments: args });
    await page.evaluate(([view, result]) => (window as any).startHost(view, result), [html, opened] as const);
    return page;
  }

  it('draws the thread card from the tool result and replies on a click, spending a click token', async () => {
    const page = await hostPage(1100);
    const view = page.frameLocator('#view');
    await view.getByRole('heading', { name: 'Where do we stay?' }).waitFor();
    await view.getByText('Two hotels are left near the station.').waitFor();
    await view.getByText('by their assistant').first().waitFor();
    await view.getByRole('textbox', { name: 'Reply' }).fill('The one with the garden, please.');
    await view.getByRole('button', { name: 'Reply' }).click();
    await view.getByText('The one with the garden, please.').waitFor();
    const rows = await server.core.db.pool.any(sql.type(CallerRow)`SELECT caller, body FROM posts WHERE thread_id = ${threadId} ORDER BY seq`);
    expect(rows).toEqual([
      { caller: 'assistant', body: 'Two hotels are left near the station.' },
      { caller: 'direct', body: 'The one with the garden, please.' },
    ]);
    const spent = await server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM view_tokens WHERE spent_at IS NOT NULL`);
    expect(spent).toBe(1);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: `${SHOTS}/view-thread-desktop.png`, fullPage: true });
      const narrow = await hostPage(390);
      await narrow.frameLocator('#view').getByText('The one with the garden, please.').waitFor();
      await narrow.screenshot({ path: `${SHOTS}/view-thread-390.png`, fullPage: true });
    }
  });

  it('draws a task card, takes the task on a click, and the web app names the assistant beside its post', async () => {
    const made = await host.callTool({ name: 'create_task', arguments: { thread_id: threadId, title: 'Book the garden hotel' } });
    const taskId = (made.structuredContent as { task_id: string }).task_id;
    const page = await hostPage(1100, 'list_tasks', {});
    const view = page.frameLocator('#view');
    await view.getByText('Book the garden hotel').waitFor();
    await view.getByRole('button', { name: 'Take it' }).click();
    await view.getByText('for Ann').waitFor();
    const state = await server.core.db.pool.oneFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM tasks WHERE id = ${taskId}`);
    expect(state).not.toBe('open');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/view-task-desktop.png`, fullPage: true });

    // The person's own page of the thread says which post their assistant wrote.
    const context = await browserContext(browser, server.url);
    const [name, ...value] = person.cookie.split('=');
    await context.addCookies([{ name: name!, value: value.join('='), url: server.url }]);
    const web = await context.newPage();
    await web.goto(`/t/${threadId}`);
    await web.locator('.post', { hasText: 'Two hotels are left near the station.' }).getByText('by their assistant').waitFor();
    expect(await web.locator('.post', { hasText: 'The one with the garden, please.' }).getByText('by their assistant').count()).toBe(0);
    if (SHOTS) await web.screenshot({ path: `${SHOTS}/web-thread-attribution.png`, fullPage: true });
    await context.close();
  });
});
