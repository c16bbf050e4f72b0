import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, startTestServer, stores, type TestServer } from '../support/server.ts';

/** A write refused for pace shows, where the person writes, when they can write again. */
describe.skipIf(!haveChromium).each(stores())('pace refusals in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_PACE_SCALE: '1' });
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
    for (let i = 0; i < 3; i++) expect((await appTool(server, ada.cookie, 'post_reply', { thread_id: threadId, body: text })).status).toBe(200);

    await ada.page.goto(`/t/${threadId}`);
    await ada.page.getByLabel('Your reply').fill(text);
    await ada.page.getByRole('button', { name: 'Post reply' }).click();
    const alert = ada.page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain('You can write again at');
    expect(await alert.innerText()).toContain('the same text in one thread');
    const at = await alert.locator('time').getAttribute('datetime');
    const wait = Date.parse(at!) - Date.now();
    expect(wait).toBeGreaterThan(9 * 60_000);
    expect(wait).toBeLessThanOrEqual(10 * 60_000 + 1_000);
  });
});
