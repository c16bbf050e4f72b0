// @module-tag heavy
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, guestReplies, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, poke, request, startTestServer, stores, type TestServer } from '../support/server.ts';

/** Where a person writes: a guest's allowance after each reply, and when a refused write can be made again. */
describe.skipIf(!haveChromium).each(stores())('pace refusals in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_PACE_SCALE: '1', SVC_PUBLIC_THREADS: '1' });
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the reply box says "You can write again at" a time when the same text was posted three times', async () => {
    const hub = (await appTool(server, ada.cookie, 'create_hub', { name: 'Paced' })).body.data;
    const threadId = (await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Reminders', body: 'Start.' })).body.data.thread_id;
    const text = 'Please read the pinned pad before asking about the schedule again.';
    const firstPostFrom = Date.now();
    for (let i = 0; i < 3; i++) expect((await appTool(server, ada.cookie, 'post_reply', { thread_id: threadId, body: text })).status).toBe(200);

    await ada.page.goto(`/t/${threadId}`);
    await ada.page.getByLabel('Your reply').fill(text);
    await ada.page.getByRole('button', { name: 'Post reply' }).click();
    const alert = ada.page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain('You can write again at');
    expect(await alert.innerText()).toContain('the same text in one thread');
    const at = await alert.locator('time').getAttribute('datetime');
    // Ten minutes after the first of the three posts (rounded up to a second), however long the page took.
    const windowFrom = Date.parse(at!) - 10 * 60_000;
    expect(windowFrom).toBeGreaterThanOrEqual(firstPostFrom);
    expect(windowFrom).toBeLessThanOrEqual(Date.now() + 1_000);
  });

  it("a guest's reply says how many of the day's writes are left; at the limit the reply box says nothing was saved and when to write again", async () => {
    const hub = (await appTool(server, ada.cookie, 'create_hub', { name: 'Open porch' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    const threadId = (await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Visitors', body: 'Say hello.' })).body.data.thread_id;
    await poke(server, sql.unsafe`UPDATE threads SET accepts_guests = true WHERE id = ${threadId}`);
    const { context, page } = await guestReplies(browser, server, threadId, 'Visitor Val', 'Hello from Val.');
    try {
      await expect.poll(() => page.getByRole('status').innerText()).toContain('19 of your 20 writes a day are left; the next frees up at');

      const cookie = (await context.cookies()).find((c) => c.name === 'svc_session')!;
      for (let i = 0; i < 19; i++) {
        const reply = await appTool(server, `svc_session=${cookie.value}`, 'post_reply', { thread_id: threadId, body: `Val again ${i}` });
        expect(reply.body.data.allowance.remaining).toBe(18 - i);
      }
      await page.getByLabel('Your reply').fill('One more from Val.');
      await page.getByRole('button', { name: 'Post reply' }).click();
      const alert = page.getByRole('alert');
      await expect.poll(() => alert.innerText()).toContain('Not saved: this account has 20 writes a day');
      expect(await alert.innerText()).toContain('You can write again at');
      expect(await page.getByLabel('Your reply').inputValue()).toBe('One more from Val.');
    } finally {
      await context.close();
    }
  });

  it("Settings shows an agent in its cooldown, and until when", async () => {
    const made = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: ada.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Eager Bot' }),
    });
    const until = Date.now() + 15 * 60_000;
    await poke(server, sql.unsafe`INSERT INTO pace_cooldowns (participant_id, since, until) VALUES (${made.body.agent.id}, ${Date.now()}, ${until})`);
    await ada.page.goto('/settings');
    const row = ada.page.getByTestId('agent').filter({ hasText: 'Eager Bot' });
    const cooling = row.getByTestId('agent-cooling');
    await expect.poll(() => cooling.innerText()).toContain('it can read but not write until');
    expect(await cooling.locator('time').getAttribute('datetime')).toBe(new Date(until).toISOString());
  });
});
