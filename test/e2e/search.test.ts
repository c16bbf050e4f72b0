// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent } from './browserPeople.ts';

/** The /search page in Chromium: what an agent writes over MCP (posts, pad sections, tasks) is found by a member, grouped, and never by an outsider. */
describe.skipIf(!haveChromium).each(stores())('search in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;
  let mcp: Client;
  let threadId: string;
  let padId: string;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
    const { hub, call, mcp: client } = await hubWithAgent(server, ada, 'Garden club', 'Gardener');
    mcp = client;
    threadId = (await call('start_thread', { hub: hub.slug, title: 'Heliotrope cuttings', body: 'When do we take them?' })).thread_id;
    await call('post_reply', { thread_id: threadId, body: 'Heliotropes root best in late summer.' });
    padId = (await call('create_pad', { thread_id: threadId, title: 'Potting notes', text: '# Rooting medium\n\nPerlite and vermiculite, half and half.' })).pad_id;
    await call('create_task', { thread_id: threadId, title: 'Buy vermiculite bags' });
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('a member finds the agent’s thread and post, grouped, and opens the thread', async () => {
    await ada.page.goto('/');
    await ada.page.getByRole('link', { name: 'Search' }).click();
    await ada.page.getByRole('searchbox').fill('helio');
    await ada.page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => ada.page.getByRole('heading', { level: 2 }).allInnerTexts()).toEqual(['Threads (1)', 'Posts (1)']);
    await expect.poll(() => ada.page.locator('.snippet').allInnerTexts()).toEqual(['Heliotropes root best in late summer.']);
    expect(new URL(ada.page.url()).search).toBe('?q=helio');
    await ada.page.getByRole('region', { name: 'Threads (1)' }).getByRole('link', { name: 'Heliotrope cuttings' }).click();
    await ada.page.waitForURL(`**/t/${threadId}`);
    expect(ada.errors).toEqual([]);
  });

  it('finds a pad section and a task the agent wrote, each in its group, and a section opens its pad', async () => {
    await ada.page.goto('/search?q=vermicul');
    await expect.poll(() => ada.page.getByRole('heading', { level: 2 }).allInnerTexts()).toEqual(['Sections (1)', 'Tasks (1)']);
    const tasks = ada.page.getByRole('region', { name: 'Tasks (1)' });
    expect(await tasks.innerText()).toContain('Task in Heliotrope cuttings in Garden club · task open');
    const sections = ada.page.getByRole('region', { name: 'Sections (1)' });
    expect(await sections.innerText()).toContain('Section in Potting notes in Garden club');
    await sections.getByRole('link', { name: 'Rooting medium' }).click();
    // The pad opens at the section found (its address names it; navigation.test.ts checks the scroll).
    await ada.page.waitForURL((url) => url.pathname === `/p/${padId}` && url.hash.startsWith('#section-'));
    expect(ada.errors).toEqual([]);
  });

  it.each(['helio', 'vermicul'])('an outsider, opening the same address (%s), is told nothing matches', async (q) => {
    await bob.page.goto(`/search?q=${q}`);
    await expect.poll(() => bob.page.getByRole('status').innerText()).toContain('Nothing you can read matches');
    expect(await bob.page.locator('.results').count()).toBe(0);
  });
});
