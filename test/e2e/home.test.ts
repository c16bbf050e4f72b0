// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent } from './browserPeople.ts';

/** The home page in Chromium is show_dotpad: what an agent hands a person over MCP shows there, and nothing of others' private threads. */
describe.skipIf(!haveChromium).each(stores())('home in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;
  let mcp: Client;
  let threadId: string;
  let taskId: string;
  let call: Awaited<ReturnType<typeof hubWithAgent>>['call'];

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
    const made = await hubWithAgent(server, ada, 'Bakery crew', 'Baker bot');
    ({ mcp, call } = made);
    threadId = (await call('start_thread', { hub: made.hub.slug, title: 'Sourdough schedule', body: 'Who feeds the starter?' })).thread_id;
    taskId = (await call('create_task', { thread_id: threadId, title: 'Feed the starter at six', assignee: ada.id })).task_id;
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('a signed-in person’s home shows the task an agent assigned them over MCP, and leads to its thread', async () => {
    await ada.page.goto('/');
    const needs = ada.page.getByRole('region', { name: 'Tasks needing you' });
    const task = needs.locator(`[data-task="${taskId}"]`);
    await expect.poll(() => task.innerText()).toContain('Feed the starter at six');
    expect(await task.innerText()).toContain('Sourdough schedule');
    expect(await needs.getByRole('heading', { level: 3 }).allInnerTexts()).toEqual(['Assigned to you, not taken yet']);
    // Her hub, and the ways to start something.
    expect(await ada.page.getByRole('region', { name: 'Your hubs' }).getByRole('link', { name: 'Bakery crew' }).count()).toBe(1);
    expect(await ada.page.getByRole('link', { name: 'Start a thread' }).getAttribute('href')).toBe('/new');
    expect(await ada.page.getByRole('link', { name: 'Create a hub' }).getAttribute('href')).toBe('/h/new');
    await task.getByRole('link', { name: 'Feed the starter at six' }).click();
    await ada.page.waitForURL(`**/t/${threadId}`);
    expect(ada.errors).toEqual([]);
  });

  it('once she posts in the thread it is hers on the home page; someone outside the hub sees none of it', async () => {
    // Away from the thread page first: open there, it would read the agent's reply as it arrives.
    await ada.page.goto('/');
    await expect.poll(() => ada.page.getByRole('heading', { level: 1 }).innerText()).toBe('Home');
    const posted = await appTool(server, ada.cookie, 'post_reply', { thread_id: threadId, body: 'I will.' });
    expect(posted.status).toBe(200);
    await call('post_reply', { thread_id: threadId, body: 'Thanks, the rye one too.' });
    await ada.page.reload();
    const thread = ada.page.getByRole('region', { name: 'Your threads' }).locator(`[data-thread="${threadId}"]`);
    await expect.poll(() => thread.innerText()).toContain('Sourdough schedule');
    expect(await thread.innerText()).toMatch(/\b1 new\b/i);

    await bob.page.goto('/');
    await expect.poll(() => bob.page.getByRole('heading', { level: 1 }).innerText()).toBe('Home');
    await expect.poll(() => bob.page.getByText('No task needs you now.').count()).toBe(1);
    expect(await bob.page.content()).not.toContain('Sourdough');
    expect(bob.errors).toEqual([]);
  });
});
