// @module-tag heavy
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent } from './browserPeople.ts';

/**
 * The inbox in Chromium: an agent mentions a person over MCP; the header's count rises on the page
 * the person has open, without a reload; /inbox shows the item and where it leads, and opening it
 * there marks it read, so the count clears; the item stays listed (test/e2e/inboxKeeps.test.ts has
 * the rest of the page's keeping), and check_inbox's acks are left alone.
 */
describe.skipIf(!haveChromium).each(stores())('inbox in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let dee: Person;
  let handle: string;
  let agent: Awaited<ReturnType<typeof hubWithAgent>>;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    dee = await personInBrowser(browser, server, 'Dee');
    handle = await server.core.db.pool.oneFirst(sql.type(z.object({ handle: z.string() }))`SELECT handle FROM participants WHERE id = ${dee.id}`);
    agent = await hubWithAgent(server, dee, 'Newsroom', 'Herald');
  });

  afterAll(async () => {
    await agent?.mcp.close();
    await browser?.close();
    await server?.close();
  });

  it('shows an agent’s mention in the header’s count and on /inbox, and opening it there reads it', async () => {
    await dee.page.goto('/');
    const nav = dee.page.getByRole('navigation', { name: 'Main' });
    await expect.poll(() => nav.getByRole('link', { name: 'Inbox', exact: true }).isVisible()).toBe(true);
    expect(await dee.page.getByTestId('inbox-badge').count()).toBe(0);

    const started = await agent.call('start_thread', { hub: agent.hub.slug, title: 'Front page', body: `${handle}, can you check the headline?` });
    // The open page hears of it without a reload.
    await expect.poll(async () => (await dee.page.getByTestId('inbox-badge').textContent())?.replace(/\s+/g, ' ').trim()).toBe('1 unread');

    await nav.getByRole('link', { name: /^Inbox/ }).click();
    await dee.page.waitForURL('**/inbox');
    const item = dee.page.locator('[data-kind="mention"]');
    await expect.poll(() => item.innerText()).toContain('Herald');
    expect(await item.innerText()).toContain('can you check the headline?');
    expect(await item.getAttribute('data-read')).toBe('false');
    const link = item.getByRole('link', { name: 'Front page' });
    expect(await link.getAttribute('href')).toBe(`/t/${started.thread_id}#post-${started.post_id}`);

    // Following the link reads it: the count clears; back on /inbox the item is there, read.
    await link.click();
    await dee.page.waitForURL(`**/t/${started.thread_id}#post-${started.post_id}`);
    await expect.poll(() => dee.page.getByRole('heading', { level: 1 }).innerText()).toContain('Front page');
    await expect.poll(() => dee.page.getByTestId('inbox-badge').count()).toBe(0);
    await dee.page.goto('/inbox');
    await expect.poll(() => item.getAttribute('data-read')).toBe('true');
    // The page's marks are its own: check_inbox still has the item, unacked.
    const after = await appTool(server, dee.cookie, 'check_inbox', {});
    expect(after.body.data.unread).toBe(1);
    expect(dee.errors).toEqual([]);
  });

  it('adds what arrives while /inbox is open, unread, and counts it', async () => {
    await dee.page.goto('/inbox');
    await expect.poll(() => dee.page.locator('[data-kind="mention"]').count()).toBe(1);
    const thread = await agent.call('start_thread', { hub: agent.hub.slug, title: 'Back page', body: 'Crossword time.' });
    await agent.call('post_reply', { thread_id: thread.thread_id, body: `${handle}: the crossword is yours.` });
    const fresh = dee.page.locator('[data-kind="mention"]', { hasText: 'the crossword is yours' });
    await expect.poll(() => fresh.getAttribute('data-read')).toBe('false');
    await expect.poll(async () => (await dee.page.getByTestId('inbox-badge').textContent())?.replace(/\s+/g, ' ').trim()).toBe('1 unread');
    await fresh.getByRole('button', { name: 'Mark read' }).click();
    await expect.poll(() => dee.page.getByTestId('inbox-badge').count()).toBe(0);
    expect(dee.errors).toEqual([]);
  });

  it('shows what landed after the page loaded but before the header first counted', async () => {
    // The header's count reads (ui_inbox with limit 0) are held until the mention has landed, so the
    // page's own load is older than the cursor the header then waits from: the header says so.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await dee.page.route('**/api/tools/ui_inbox', async (route) => {
      if ((route.request().postDataJSON() as { limit?: number }).limit === 0) await held;
      await route.continue();
    });
    try {
      await dee.page.goto('/inbox');
      const items = dee.page.locator('[data-kind="mention"]');
      // The two mentions of the tests above.
      await expect.poll(() => items.count()).toBe(2);
      const thread = await agent.call('start_thread', { hub: agent.hub.slug, title: 'Letters', body: `${handle}, pick three letters.` });
      release();
      await expect.poll(() => items.filter({ hasText: 'pick three letters' }).count()).toBe(1);
      expect(await items.first().getByRole('link', { name: 'Letters' }).getAttribute('href')).toBe(`/t/${thread.thread_id}#post-${thread.post_id}`);
    } finally {
      release();
      await dee.page.unroute('**/api/tools/ui_inbox');
    }
    expect(dee.errors).toEqual([]);
  });
});
