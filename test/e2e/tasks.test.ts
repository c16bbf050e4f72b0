// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, mcpClient, registerAgent, startTestServer, stores, type TestServer } from '../support/server.ts';
import { addMember } from './browserPeople.ts';

/**
 * The /tasks board in Chromium: a task an agent hands out over MCP is taken and handed in by a person
 * with a pad as the result, the agent (the reviewer) approves it over MCP; and the reverse, an agent
 * hands in what a person asked for, which the person approves on the board. An outsider sees none.
 */
describe.skipIf(!haveChromium).each(stores())('tasks in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;
  let mcp: Client;
  let agentId: string;
  let threadId: string;
  let padId: string;

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await mcp.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.structuredContent)}`);
    return result.structuredContent as Record<string, any>;
  };

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Bakery' });
    if (created.status !== 200) throw new Error(`create_hub failed: ${created.text}`);
    const hub = { id: created.body.data.hub_id as string, slug: created.body.data.slug as string };
    const agent = await registerAgent(server, 'Baker Bot');
    agentId = agent.id;
    await addMember(server, hub.id, agent.id);
    mcp = await mcpClient(server, agent.key);
    threadId = (await call('start_thread', { hub: hub.slug, title: 'Spring menu', body: 'What do we bake?' })).thread_id;
    padId = (await call('create_pad', { thread_id: threadId, title: 'Menu', text: '# Breads\n\nRye.' })).pad_id;
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('a person takes an agent’s task on the board, hands in a pad, and the agent approves it', async () => {
    const task = await call('create_task', { thread_id: threadId, title: 'Price the breads', assignee: ada.id, reviewer: agentId });
    await ada.page.goto('/');
    await ada.page.getByRole('link', { name: 'Tasks' }).click();
    await ada.page.waitForURL('**/tasks');
    const card = ada.page.locator(`[data-task="${task.task_id}"]`);
    await expect.poll(() => ada.page.getByRole('region', { name: 'Assigned (1)' }).innerText()).toContain('Price the breads');
    await card.getByRole('button', { name: 'Take' }).click();
    await expect.poll(() => ada.page.getByRole('region', { name: 'Taken (1)' }).innerText()).toContain('Price the breads');
    // The result is picked from the hub's pads, not typed.
    await card.getByRole('combobox', { name: 'Pad' }).selectOption({ label: 'Menu' });
    await card.getByRole('button', { name: 'Submit result' }).click();
    await expect.poll(() => ada.page.getByRole('region', { name: 'In review (1)' }).innerText()).toContain('Price the breads');
    expect(await card.getByRole('link', { name: 'the pad' }).getAttribute('href')).toBe(`/p/${padId}`);

    const approved = await call('update_task', { task_id: task.task_id, action: 'approve' });
    expect(approved).toMatchObject({ state: 'done', assignee_id: ada.id, result: { kind: 'pad', pad_id: padId } });
    await ada.page.reload();
    await expect.poll(() => ada.page.getByRole('region', { name: 'Done (1)' }).innerText()).toContain('Price the breads');
    expect(ada.errors).toEqual([]);
  });

  it('an agent hands in what a person asked for, and the person approves it on the board', async () => {
    const asked = await appTool(server, ada.cookie, 'create_task', { thread_id: threadId, title: 'Bake a test loaf', assignee: agentId, reviewer: ada.id });
    expect(asked.status).toBe(200);
    const taskId = asked.body.data.task_id as string;
    await call('take_task', { task_id: taskId });
    await call('submit_result', { task_id: taskId, url: 'https://example.org/loaf' });
    await ada.page.goto('/tasks');
    const card = ada.page.locator(`[data-task="${taskId}"]`);
    // The agent's link, by an author who does not read verified, reads as where it goes.
    await expect.poll(() => card.locator('.task-result').innerText()).toContain('Result: [link to example.org]');
    await card.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => ada.page.getByRole('region', { name: 'Done (2)' }).innerText()).toContain('Bake a test loaf');
    const seen = await call('list_tasks', { in: threadId, state: 'done' });
    expect(seen.tasks.map((t: any) => t.task_id)).toContain(taskId);
    expect(ada.errors).toEqual([]);
  });

  it('an outsider’s board shows none of the hub’s tasks', async () => {
    await bob.page.goto('/tasks');
    await expect.poll(() => bob.page.getByRole('status').innerText()).toContain('No tasks here');
    expect(await bob.page.locator('[data-task]').count()).toBe(0);
  });
});
