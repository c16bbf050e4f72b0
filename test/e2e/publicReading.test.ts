// @module-tag heavy
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, ensureClientBuilt, haveChromium, launchBrowser } from '../support/browser.ts';
import { appTool, registerAgent, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

const SHOTS = '/work/shots/public';

/**
 * Signed-out reading in Chromium: with JavaScript off, a crawl of the pages finds the post and pad
 * text in the HTML and nothing private; with it on, the app shows the same pages, offers "Sign in to
 * take part" or the guest "Jump in", and a private thread is the app's "not found".
 */
describe.skipIf(!haveChromium).each(stores())('public reading in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let hub: string;
  let thread: string;
  let quietThread: string;
  let pad: string;
  let privateThread: string;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1', SVC_GUEST_AGENTS: '1' });
    browser = await launchBrowser();
    const owner = await signIn(server, 'Wren', 'wren@example.test');
    const agent = await registerAgent(server, 'Gardener');
    const tool = async (name: string, args: object) => {
      const reply = await appTool(server, owner.cookie, name, args);
      if (reply.status !== 200) throw new Error(`${name}: ${reply.text}`);
      return reply.body.data;
    };
    hub = (await tool('create_hub', { name: 'Seed Library' })).slug;
    await tool('set_hub_guide', { hub, text: 'We swap seeds and write down what grew.' });
    thread = (await tool('start_thread', { hub, title: 'Which tomatoes liked the rain?', body: 'The **brindleberry** vines split after the storm.' })).thread_id;
    quietThread = (await tool('start_thread', { hub, title: 'Bean trellis plans', body: 'Poles or netting?' })).thread_id;
    pad = (await tool('create_pad', { hub, title: 'Planting calendar', text: '# Spring\n\nSow the oxlumen peas in March.\n\n## Late spring\n\nBeans after the frost.' })).pad_id;
    await tool('set_hub_visibility', { hub, audience: 'public', confirm: true, accepts_guests: true });
    await tool('ui_thread_guests', { thread_id: thread, accepts_guests: true });
    await rest(server, agent.key, 'join_hub', { hub });
    await rest(server, agent.key, 'post_reply', { thread_id: thread, body: 'Mine did fine: see https://seeds.example/tomato for the variety.' });
    const hidden = (await tool('create_hub', { name: 'Greenhouse Ledger' })).slug;
    privateThread = (await tool('start_thread', { hub: hidden, title: 'Costs', body: 'The thrumbleweed invoice.' })).thread_id;
    server.core.config.frontHub = hub;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const shoot = async (page: Page, name: string) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: `${SHOTS}/${store}-${name}-desktop.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/${store}-${name}-390.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  it('with JavaScript off, a crawl from / reads the post and pad text in the HTML and nothing private', async () => {
    const context: BrowserContext = await browser.newContext({ baseURL: server.url, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const seen = new Map<string, string>();
      const queue = ['/'];
      while (queue.length && seen.size < 60) {
        const path = queue.shift()!;
        if (seen.has(path)) continue;
        const reply = await page.goto(path);
        seen.set(path, reply?.status() === 200 ? await page.locator('body').innerText() : '');
        for (const href of await page.locator('a[href^="/"]').evaluateAll((links) => links.map((a) => a.getAttribute('href')!))) {
          if (!href.startsWith('/api/') && !href.startsWith('/signin') && !seen.has(href)) queue.push(href);
        }
      }
      const text = [...seen.values()].join('\n');
      expect(text).toContain('brindleberry');
      expect(text).toContain('Sow the oxlumen peas in March.');
      expect(text).not.toContain('thrumbleweed');
      expect(text).not.toContain('Greenhouse Ledger');
      expect(seen.get(`/t/${thread}`)).toContain('brindleberry');
      expect(seen.get(`/p/${pad}`)).toContain('oxlumen');
      // A linked agent reads verified only after a day: its link shows as the marker.
      expect(seen.get(`/t/${thread}`)).toContain('[link to seeds.example]');
      await page.goto(`/t/${thread}`);
      expect(await page.title()).toBe('Which tomatoes liked the rain? · Dotpad');
      expect(await page.getByRole('button', { name: 'Jump in' }).count()).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('with JavaScript on, signed out, the app reads the home page, Explore, a hub, a thread and a pad, and offers ways in', async () => {
    const context = await browserContext(browser, server.url);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto('/');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Dotpad');
      expect(await page.getByRole('heading', { name: 'Seed Library' }).count()).toBe(1);
      expect(await page.getByText('We swap seeds and write down what grew.').count()).toBe(1);
      await shoot(page, 'home');

      // From the open questions to the thread, inside the app (no page load).
      await page.getByRole('link', { name: 'Which tomatoes liked the rain?' }).first().click();
      await page.waitForURL(`**/t/${thread}`);
      await expect.poll(() => page.locator('.public-page').innerText()).toContain('brindleberry');
      expect(await page.title()).toBe('Which tomatoes liked the rain? · Dotpad');
      expect(await page.getByRole('button', { name: 'Jump in' }).count()).toBe(1);
      await shoot(page, 'thread');

      await page.goto(`/t/${quietThread}`);
      await expect.poll(() => page.locator('.public-page').innerText()).toContain('Poles or netting?');
      expect(await page.getByRole('link', { name: 'Sign in to take part' }).getAttribute('href')).toBe(`/signin?next=${encodeURIComponent(`/t/${quietThread}`)}`);
      expect(await page.getByRole('button', { name: 'Jump in' }).count()).toBe(0);

      await page.goto(`/h/${hub}`);
      await expect.poll(() => page.locator('.public-page').innerText()).toContain('We swap seeds');
      await shoot(page, 'hub');
      await page.locator('.public-page').getByRole('link', { name: 'Planting calendar' }).click();
      await page.waitForURL(`**/p/${pad}`);
      await expect.poll(() => page.locator('.public-page').innerText()).toContain('Sow the oxlumen peas in March.');
      expect(await page.getByRole('link', { name: 'Sign in to take part' }).count()).toBe(1);
      await shoot(page, 'pad');

      await page.goto('/explore');
      await expect.poll(() => page.locator('.public-page').innerText()).toContain('Planting calendar');
      expect(await page.locator('.public-page').getByRole('link', { name: 'Late spring' }).count()).toBe(1);
      await shoot(page, 'explore');

      await page.goto('/how-it-works');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('How Dotpad works');
      await page.locator('.site-footer').getByRole('link', { name: 'Privacy' }).click();
      await page.waitForURL('**/privacy');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Privacy');
      await page.goto('/how-it-works');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('How Dotpad works');
      await shoot(page, 'site-page');

      await page.goto(`/out?u=${encodeURIComponent('https://seeds.example/tomato')}`);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('You are leaving Dotpad');
      expect(await page.getByRole('link', { name: 'Continue to seeds.example' }).getAttribute('href')).toBe('https://seeds.example/tomato');
      await shoot(page, 'out');

      const missing = await page.goto(`/t/${privateThread}`);
      expect(missing?.status()).toBe(404);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Page not found');
      expect(await page.getByText('thrumbleweed').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a guest jumps into the public thread from its page and then replies in the app', async () => {
    const context = await browserContext(browser, server.url);
    const page = await context.newPage();
    try {
      await page.goto(`/t/${thread}`);
      await page.getByLabel('Your name').fill('Visiting Gardener');
      await page.getByRole('button', { name: 'Jump in' }).click();
      await page.getByLabel('Your reply').fill('Mine split too.');
      await page.getByRole('button', { name: 'Post reply' }).click();
      await expect.poll(async () => (await fetch(`${server.url}/t/${thread}?format=md`)).text()).toContain('Mine split too.');
    } finally {
      await context.close();
    }
  });
});
