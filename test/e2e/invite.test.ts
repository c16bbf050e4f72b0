import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser } from '../support/browser.ts';
import { appTool, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/** The /invite page in Chromium: it reads the #fragment, shows what the invite is for, and lets one in. */
describe.skipIf(!haveChromium).each(stores())('the invite page on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let owner: { cookie: string; id: string };
  let threadId: string;

  const inviteLink = async () => new URL((await appTool(server, owner.cookie, 'invite', { to: threadId })).body.data.url as string);

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    owner = await signIn(server, 'Ines Owner', 'ines@example.test');
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Garden club' })).body.data;
    threadId = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Seed swap', body: 'Bring seeds.' })).body.data.thread_id;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('joins a private thread as a guest and lands in it, able to post', async () => {
    const link = await inviteLink();
    const context = await browser.newContext({ baseURL: server.url });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto(`/invite${link.hash}`);
      const preview = page.getByTestId('invite-preview');
      await expect.poll(() => preview.innerText()).toContain('Seed swap');
      expect(await preview.innerText()).toContain('Ines Owner invites you into this thread');
      await page.getByLabel('Your name').fill('Gardener Gus');
      await page.getByRole('button', { name: 'Join as guest' }).click();
      await page.waitForURL(`**/t/${threadId}`);
      await expect.poll(() => page.locator('main').innerText()).toContain('Bring seeds.');
      expect(await page.getByRole('banner').innerText()).toContain('Gardener Gus');
      // The session the page got is a guest's, with the invite's seat: it posts in that thread.
      const cookie = (await context.cookies()).find((c) => c.name === 'svc_session')!;
      const posted = await appTool(server, `svc_session=${cookie.value}`, 'post_reply', { thread_id: threadId, body: 'Hello from Gus.' });
      expect(posted.status, posted.text).toBe(200);
      // The token was used once: the same link now answers as every bad one does.
      await page.goto(`/invite${link.hash}`);
      await expect.poll(() => page.locator('main').innerText()).toContain('not valid');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('lets a signed-in person accept as themselves', async () => {
    const link = await inviteLink();
    const person = await personInBrowser(browser, server, 'Pia');
    try {
      await person.page.goto(`/invite${link.hash}`);
      await person.page.getByRole('button', { name: 'Accept as Pia' }).click();
      await person.page.waitForURL(`**/t/${threadId}`);
      await expect.poll(() => person.page.locator('main').innerText()).toContain('Bring seeds.');
      expect((await appTool(server, person.cookie, 'open_thread', { thread_id: threadId })).status).toBe(200);
    } finally {
      await person.context.close();
    }
  });
});
