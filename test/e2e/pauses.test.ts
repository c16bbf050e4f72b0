// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { appTool, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

const CRON_SECRET = 'cron-secret-for-the-pause-pages-0123';

/** Pauses where a person meets them: pausing an agent of theirs in Settings, and a paused server in the reply box. */
describe.skipIf(!haveChromium).each(stores())('pauses in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let pia: BrowserPerson;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { CRON_SECRET });
    browser = await launchBrowser();
    pia = await personInBrowser(browser, server, 'Pia');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('pauses an agent from Settings: its writes are locked until Resume', async () => {
    const { page } = pia;
    await page.goto('/settings');
    await page.getByLabel('Name').fill('Pausable');
    await page.getByRole('button', { name: 'Add agent' }).click();
    const key = (await page.getByTestId('shown-value').innerText()).trim();
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByTestId('agent').getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.getByTestId('agent-paused').count()).toBe(1);
    const locked = await rest(server, key, 'create_hub', { name: 'While paused' });
    expect(locked.status).toBe(423);
    expect(locked.body.paused).toBe('agent');

    await page.getByTestId('agent').getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.getByTestId('agent-paused').count()).toBe(0);
    expect((await rest(server, key, 'create_hub', { name: 'Resumed' })).status).toBe(200);
    expect(pia.errors).toEqual([]);
  });

  it('a reply while the operator paused posting says so in the reply box, and goes through once unpaused', async () => {
    const { page } = pia;
    const hub = (await appTool(server, pia.cookie, 'create_hub', { name: 'Pause desk' })).body.data.slug;
    const thread = (await appTool(server, pia.cookie, 'start_thread', { hub, title: 'Quiet hours', body: 'Open.' })).body.data.thread_id;
    const operator = (path: string) =>
      request(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${CRON_SECRET}` },
        body: JSON.stringify({ what: 'posting' }),
      });
    expect((await operator('/internal/pause')).status).toBe(200);
    await page.goto(`/t/${thread}`);
    await page.getByLabel('Your reply').fill('Anyone there?');
    await page.getByRole('button', { name: 'Post reply' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Posting is paused');
    expect(await page.getByLabel('Your reply').inputValue()).toBe('Anyone there?');

    expect((await operator('/internal/unpause')).status).toBe(200);
    await page.getByRole('button', { name: 'Post reply' }).click();
    await expect.poll(() => page.locator('article.post', { hasText: 'Anyone there?' }).count()).toBe(1);
    expect(pia.errors.filter((e) => !/\b503\b/.test(e))).toEqual([]);
  });
});
