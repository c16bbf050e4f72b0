// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, ensureClientBuilt, guestReplies, haveChromium, launchBrowser, personInBrowser } from '../support/browser.ts';
import { sql } from 'slonik';
import { appTool, poke, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

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
    const context = await browserContext(browser, server.url);
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

  it('lists the invites one made under Settings and withdraws one', async () => {
    const link = await inviteLink();
    const ines = await personInBrowser(browser, server, 'Ines Owner', 'ines@example.test');
    try {
      await ines.page.goto('/settings');
      const row = ines.page.getByTestId('made-invite').first();
      await expect.poll(() => row.innerText()).toContain('Seed swap');
      expect(await row.innerText()).toContain('0 of 1 used');
      await row.getByRole('button', { name: 'Withdraw' }).click();
      await expect.poll(() => row.innerText()).toContain('revoked');
      const preview = await fetch(`${server.url}/api/invite-preview`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1' },
        body: JSON.stringify({ token: link.hash.slice(1) }),
      });
      expect(preview.status).toBe(404);
    } finally {
      await ines.context.close();
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

/** A public thread's page: its owner opens it to guests, and a visitor jumps in under a name and posts. */
describe.skipIf(!haveChromium).each(stores())('jumping into a thread in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('opens a thread to guests from its page, and a visitor jumps in and posts', async () => {
    const owner = await personInBrowser(browser, server, 'Quinn');
    const hub = (await appTool(server, owner.cookie, 'create_hub', { name: 'Open house' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    const threadId = (await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Say hello', body: 'Anyone there?' })).body.data.thread_id;
    await owner.page.goto(`/t/${threadId}`);
    await owner.page.getByLabel(/Take guests/).check();
    await expect.poll(() => server.core.db.pool.oneFirst(sql.unsafe`SELECT accepts_guests FROM threads WHERE id = ${threadId}`)).toBe(true);
    await owner.context.close();

    const { context, page } = await guestReplies(browser, server, threadId, 'Visitor Val', 'Hello from Val.');
    try {
      await expect.poll(() => page.getByRole('banner').innerText()).toContain('Visitor Val');
      await expect.poll(() => page.locator('main').innerText()).toContain('Hello from Val.');
      const author = await server.core.db.pool.oneFirst(sql.unsafe`
        SELECT a.id FROM posts p JOIN participants a ON a.id = p.author_id WHERE p.thread_id = ${threadId} AND a.name = 'Visitor Val'`);
      expect(String(author)).toMatch(/^ppl_/);
    } finally {
      await context.close();
    }
  });
});
