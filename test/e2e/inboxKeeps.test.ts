// @module-tag heavy
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { appTool, startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent, shoot } from './browserPeople.ts';

/**
 * The inbox page keeps its items, in Chromium: what came stays listed after the page is left and
 * opened again, read or unread, until the person archives it; archive one, archive every read one,
 * mark all read, see the Archived view and bring one back. check_inbox is left as it was.
 */

describe.skipIf(!haveChromium).each(stores())('the inbox page keeps its items on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let kim: BrowserPerson;
  let agent: Awaited<ReturnType<typeof hubWithAgent>>;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    kim = await personInBrowser(browser, server, 'Kim', 'kim@example.test');
    agent = await hubWithAgent(server, kim, 'Desk', 'Courier');
  });
  afterAll(async () => {
    await agent?.mcp.close();
    await browser?.close();
    await server?.close();
  });

  it('keeps items across visits until archived, with archive one, archive all read, mark all read and the Archived view', async () => {
    const handle = await server.core.db.pool.oneFirst(sql.type(z.object({ handle: z.string() }))`SELECT handle FROM participants WHERE id = ${kim.id}`);
    const thread = await agent.call('start_thread', { hub: agent.hub.slug, title: 'Morning', body: `${handle} first note` });
    for (const word of ['second', 'third']) await agent.call('post_reply', { thread_id: thread.thread_id, body: `${handle} ${word} note` });
    const { page } = kim;
    const items = page.locator('[data-kind="mention"]');
    await page.goto('/inbox');
    await expect.poll(() => items.count()).toBe(3);
    // Newest first, all unread.
    expect(await items.first().innerText()).toContain('third note');
    expect(await items.evaluateAll((list) => list.map((li) => li.getAttribute('data-read')))).toEqual(['false', 'false', 'false']);
    await shoot(page, 'inbox-unread');

    // Leaving and coming back: all still there.
    await page.goto('/');
    await page.goto('/inbox');
    await expect.poll(() => items.count()).toBe(3);

    const third = items.filter({ hasText: 'third note' });
    await third.getByRole('button', { name: 'Mark read' }).click();
    await expect.poll(() => third.getAttribute('data-read')).toBe('true');
    await page.reload();
    await expect.poll(() => third.getAttribute('data-read')).toBe('true');
    await expect.poll(async () => (await page.getByTestId('inbox-badge').textContent())?.replace(/\s+/g, ' ').trim()).toBe('2 unread');

    // Archive one.
    const first = items.filter({ hasText: 'first note' });
    await first.getByRole('button', { name: 'Archive' }).click();
    await expect.poll(() => items.count()).toBe(2);
    // Archive every read one: the third goes, the unread second stays.
    await page.getByRole('button', { name: 'Archive all read' }).click();
    await expect.poll(() => items.count()).toBe(1);
    expect(await items.first().innerText()).toContain('second note');
    await page.getByRole('button', { name: 'Mark all read' }).click();
    await expect.poll(() => items.first().getAttribute('data-read')).toBe('true');
    await expect.poll(() => page.getByTestId('inbox-badge').count()).toBe(0);
    await shoot(page, 'inbox-read');

    // The Archived view lists the two, and one comes back.
    await page.getByRole('button', { name: 'Archived' }).click();
    await expect.poll(() => items.count()).toBe(2);
    await shoot(page, 'inbox-archived');
    await items.filter({ hasText: 'first note' }).getByRole('button', { name: 'Back to inbox' }).click();
    await expect.poll(() => items.count()).toBe(1);
    await page.getByRole('button', { name: 'Inbox', exact: true }).click();
    await expect.poll(() => items.count()).toBe(2);

    // None of it acked anything: check_inbox still has the three.
    const inbox = await appTool(server, kim.cookie, 'check_inbox', {});
    expect(inbox.body.data.unread).toBe(3);
    expect(kim.errors).toEqual([]);
  });
});
