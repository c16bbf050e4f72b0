// @module-tag heavy
import type { Browser, Page } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { browserContext, ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, poke, request, startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent } from './browserPeople.ts';

/**
 * The thread page and the app's shell in Chromium: posts as Markdown with links by reach, reactions
 * as drawn icons, an agent's post over MCP showing on an open page, starting a thread at /new,
 * making a hub at /h/new, and the header on every page.
 */
const SCREENSHOT = process.env.THREAD_SCREENSHOT;
const HEADER_LINKS = ['Home', 'Explore', 'Tasks', 'Inbox', 'DMs', 'Search', 'Settings'];
const EMOJI = /\p{Extended_Pictographic}/u;

describe.skipIf(!haveChromium).each(stores())('the thread page in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let agent: Awaited<ReturnType<typeof hubWithAgent>>;
  let hub: { id: string; slug: string };
  let threadId: string;

  const call = (name: string, args: Record<string, unknown>) => agent.call(name, args);
  const post = (page: Page, text: string) => page.locator('article.post', { hasText: text });
  /**
   * Ada's page errors, less one the server causes: a wait of a page that was left (each goto here)
   * keeps holding one of her 4 waits until it times out, so a new page's wait may be refused 429 for
   * a while (its loop backs off and waits again).
   */
  const errors = () => ada.errors.filter((e) => !/^429 .*\/wait_for_changes$/.test(e) && !e.includes('status of 429 (Too Many Requests)'));

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    // Ada reads verified (a confirmed address, two days old): her links stay live.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now(), created_at = now() - interval '2 days' WHERE id = ${ada.id}`);
    // A fresh agent (a minute old, no posts) does not read verified: its links read as text.
    agent = await hubWithAgent(server, ada, 'Orchard', 'Picker');
    hub = agent.hub;
    threadId = (await call('start_thread', { hub: hub.slug, title: 'Harvest plan', body: 'We pick **Bramley** first; notes at [the sheet](https://sheets.example/harvest).' })).thread_id;
  });

  // Each case answers for the errors of its own pages.
  beforeEach(() => {
    if (ada) ada.errors.length = 0;
  });

  afterAll(async () => {
    await agent?.mcp.close();
    await browser?.close();
    await server?.close();
  });

  it('renders Markdown, and an unverified author’s link as [link to host] while a verified one’s stays live', async () => {
    await call('post_reply', { thread_id: threadId, body: 'Raw <b>tags</b> stay text.' });
    expect((await appTool(server, ada.cookie, 'post_reply', { thread_id: threadId, body: 'Map: [orchard map](https://maps.example/o)' })).status).toBe(200);
    await ada.page.goto(`/t/${threadId}`);
    const first = post(ada.page, 'Bramley');
    await expect.poll(() => first.locator('.post-body strong').innerText()).toBe('Bramley');
    expect(await first.locator('.post-body').innerText()).toContain('the sheet [link to sheets.example]');
    // The marker is the only link: it leads to the warning page before the address, never to the address itself.
    expect(await first.locator('.post-body a').count()).toBe(1);
    expect(await first.locator('.post-body a').getAttribute('href')).toBe(`/out?${new URLSearchParams({ u: 'https://sheets.example/harvest' })}`);
    expect(await post(ada.page, 'Raw').locator('.post-body').innerText()).toBe('Raw <b>tags</b> stay text.');
    const live = post(ada.page, 'Map:').getByRole('link', { name: 'orchard map' });
    expect(await live.getAttribute('href')).toBe('https://maps.example/o');
    expect(await live.getAttribute('rel')).toBe('noopener nofollow ugc');
    expect(errors()).toEqual([]);
  });

  it('shows reactions as drawn icons with no emoji glyph, and toggles the person’s own', async () => {
    await ada.page.goto(`/t/${threadId}`);
    const bar = post(ada.page, 'Bramley').getByRole('group', { name: 'Reactions' });
    await expect.poll(() => bar.locator('button svg').count()).toBe(5);
    expect(EMOJI.test(await bar.innerText())).toBe(false);
    const heart = bar.locator('button[data-reaction="heart"]');
    expect(await heart.getAttribute('aria-label')).toBe('Heart: 0 reactions');
    await heart.click();
    await expect.poll(() => heart.getAttribute('aria-label')).toBe('Heart: 1 reaction');
    expect(await heart.getAttribute('aria-pressed')).toBe('true');
    const seen = await call('open_thread', { thread_id: threadId });
    expect(seen.posts[0].reactions).toEqual({ heart: 1 });
    // After a reload the page knows which reactions are Ada's (the view's mine), and the agent's eyes are not.
    const first = seen.posts[0].id;
    await call('react', { post_id: first, reaction: 'eyes' });
    await ada.page.reload();
    const eyes = bar.locator('button[data-reaction="eyes"]');
    await expect.poll(() => eyes.getAttribute('aria-label')).toBe('Eyes: 1 reaction');
    expect(await heart.getAttribute('aria-label')).toBe('Heart: 1 reaction');
    expect(await heart.getAttribute('aria-pressed')).toBe('true');
    expect(await eyes.getAttribute('aria-pressed')).toBe('false');
    await heart.click();
    await expect.poll(() => heart.getAttribute('aria-label')).toBe('Heart: 0 reactions');
    expect(await heart.getAttribute('aria-pressed')).toBe('false');
    await call('react', { post_id: first, reaction: 'eyes', remove: true });
    expect((await call('open_thread', { thread_id: threadId })).posts[0].reactions).toBeUndefined();
    expect(errors()).toEqual([]);
  });

  it('shows an agent’s post and task on the open page without a reload', async () => {
    await ada.page.goto(`/t/${threadId}`);
    await expect.poll(() => post(ada.page, 'Bramley').count()).toBe(1);
    // A mark on this document: a reload would lose it.
    await ada.page.evaluate(() => Object.assign(window, { stillOpen: true }));
    const first = (await call('open_thread', { thread_id: threadId })).posts[0].id;
    await call('post_reply', { thread_id: threadId, body: 'Ladders are **ready**.', reply_to: first });
    const reply = ada.page.locator('.replies article.post', { hasText: 'Ladders are ready.' });
    await expect.poll(() => reply.locator('strong', { hasText: 'ready' }).count()).toBe(1);
    await call('create_task', { thread_id: threadId, title: 'Count the crates', assignee: ada.id });
    const task = ada.page.getByRole('region', { name: 'Tasks' }).locator('.task', { hasText: 'Count the crates' });
    await expect.poll(() => task.count()).toBe(1);
    expect(await ada.page.evaluate(() => (window as unknown as { stillOpen?: boolean }).stillOpen)).toBe(true);
    await task.getByRole('button', { name: 'Take' }).click();
    await expect.poll(() => task.innerText()).toContain('Taken');
    // And the other way round: a task the person gives the agent from the page.
    const form = ada.page.getByRole('form', { name: 'New task' });
    await form.getByRole('textbox', { name: 'New task' }).fill('Press the juice');
    await form.getByRole('combobox', { name: 'For' }).selectOption(agent.agent.id);
    await form.getByRole('combobox', { name: 'Reviewer' }).selectOption(ada.id);
    await form.getByRole('button', { name: 'Create task' }).click();
    await expect.poll(() => ada.page.locator('.task', { hasText: 'Press the juice' }).innerText()).toContain('for Picker · reviewer Ada');
    const given = (await call('list_tasks', { in: threadId, state: 'assigned' })).tasks;
    expect(given).toEqual([expect.objectContaining({ assignee_id: agent.agent.id, reviewer_id: ada.id, created_by: ada.id })]);
    expect(errors()).toEqual([]);
  });


  it('keeps six tabs on one thread live with one wait between them, never refused a wait', async () => {
    const context = ada.page.context();
    const tabs = await Promise.all(Array.from({ length: 6 }, () => context.newPage()));
    const refusedWaits: string[] = [];
    for (const tab of tabs) tab.on('response', (r) => r.url().endsWith('/wait_for_changes') && r.status() === 429 && refusedWaits.push(r.url()));
    try {
      for (const tab of tabs) {
        await tab.goto(`/t/${threadId}`);
        await expect.poll(() => post(tab, 'Bramley').count()).toBe(1);
      }
      // Each tab past the fourth would be refused its own wait and fall back to reading every 3 seconds.
      await call('post_reply', { thread_id: threadId, body: 'Six tabs, one wait.' });
      for (const tab of tabs) await expect.poll(() => post(tab, 'Six tabs, one wait.').count()).toBe(1);
      // The tab holding the wait goes: another takes it over.
      await tabs[0]!.close();
      await call('post_reply', { thread_id: threadId, body: 'Still live after a tab closed.' });
      for (const tab of tabs.slice(1)) await expect.poll(() => post(tab, 'Still live after a tab closed.').count()).toBe(1);
      expect(refusedWaits).toEqual([]);
    } finally {
      await Promise.all(tabs.map((tab) => (tab.isClosed() ? undefined : tab.close())));
    }
  });
  it('lets the owner mark the answer, hide and delete a post, and report one', async () => {
    await call('post_reply', { thread_id: threadId, body: 'Buy cheap pickers at spam.example' });
    await call('post_reply', { thread_id: threadId, body: 'The Bramleys ripen in October.' });
    await ada.page.goto(`/t/${threadId}`);
    const answer = post(ada.page, 'ripen in October');
    await answer.getByRole('button', { name: 'Mark as answer' }).click();
    await expect.poll(() => answer.locator('.badge.status-answered').count()).toBe(1);
    expect((await call('open_thread', { thread_id: threadId })).status).toBe('answered');

    const spam = post(ada.page, 'cheap pickers');
    await spam.getByRole('button', { name: 'Report' }).click();
    await spam.getByRole('textbox', { name: /What is wrong/ }).fill('Advertising');
    await spam.getByRole('button', { name: 'Send report' }).click();
    await expect.poll(() => spam.getByRole('status').innerText()).toContain('Reported');
    const seq = await spam.locator('.seq').innerText();
    await spam.getByRole('button', { name: 'Hide' }).click();
    const hidden = ada.page.locator('article.post', { has: ada.page.locator('.seq', { hasText: seq }) });
    await expect.poll(() => hidden.locator('.post-body').innerText()).toBe('(hidden)');
    await hidden.getByRole('button', { name: 'Delete' }).click();
    await hidden.getByRole('button', { name: 'Delete post' }).click();
    await expect.poll(() => hidden.locator('.post-body').innerText()).toBe('(deleted)');
    const read = await call('open_thread', { thread_id: threadId });
    expect(JSON.stringify(read)).not.toContain('cheap pickers');
    expect(errors()).toEqual([]);
  });

  it('says what changed since the person last read, marks the new posts, and makes a pad in the thread', async () => {
    await ada.page.goto(`/t/${threadId}`);
    await expect.poll(() => ada.page.getByRole('status', { name: 'Since you last read' }).innerText()).toContain('Nothing new since you last read it');
    // Away from the thread while the agent writes: an open page shows new posts live, and so reads them.
    await ada.page.goto('/tasks');
    await call('post_reply', { thread_id: threadId, body: 'Crates arrive Monday.' });
    await call('post_reply', { thread_id: threadId, body: 'Cider press is booked.' });
    await ada.page.goto(`/t/${threadId}`);
    await expect.poll(() => ada.page.getByRole('status', { name: 'Since you last read' }).innerText()).toContain('2 new posts');
    await expect.poll(() => ada.page.locator('article.post .badge.new').count()).toBe(2);
    expect(await post(ada.page, 'Crates arrive').locator('.badge.new').count()).toBe(1);
    if (SCREENSHOT) await ada.page.screenshot({ path: SCREENSHOT, fullPage: true });
    await ada.page.getByRole('textbox', { name: 'New pad for this thread' }).fill('Picking rota');
    await ada.page.getByRole('button', { name: 'Create pad' }).click();
    await ada.page.waitForURL('**/p/pad_*');
    expect((await call('open_thread', { thread_id: threadId })).pads).toHaveLength(1);
    expect(errors()).toEqual([]);
  });

  it('starts a thread at /new about a pad’s section, flagging it, and the owner settles the flag', async () => {
    const pad = await call('create_pad', { hub: hub.slug, title: 'Varieties', text: '# Cookers\n\nBramley.\n\n# Eaters\n\nCox.' });
    await ada.page.goto('/');
    await ada.page.getByRole('link', { name: 'New thread' }).click();
    await ada.page.waitForURL('**/new');
    await ada.page.getByRole('combobox', { name: 'Hub' }).selectOption(hub.slug);
    await ada.page.getByRole('textbox', { name: 'Title' }).fill('Which eaters?');
    await ada.page.getByRole('textbox', { name: 'First post' }).fill('Is *Cox* enough?');
    await ada.page.getByRole('combobox', { name: 'Pad' }).selectOption(pad.pad_id);
    const section = ada.page.getByRole('combobox', { name: 'Section' });
    await expect.poll(() => section.locator('option').count()).toBe(3);
    expect(await section.locator('option').allInnerTexts()).toEqual(['The whole pad', 'Cookers · 1 word', 'Eaters · 1 word']);
    await section.selectOption({ label: 'Eaters · 1 word' });
    await ada.page.getByRole('checkbox', { name: 'Flag this section as wrong' }).check();
    await ada.page.getByRole('button', { name: 'Start thread' }).click();
    await ada.page.waitForURL('**/t/thr_*');
    await expect.poll(() => ada.page.getByRole('heading', { level: 1 }).innerText()).toBe('Which eaters?');
    expect(await post(ada.page, 'enough').locator('em').innerText()).toBe('Cox');
    await expect.poll(() => ada.page.locator('.about').innerText()).toBe('About the section Eaters of the pad Varieties');
    expect(await ada.page.locator('.badge.flag').innerText()).toBe('flagged as wrong, open');
    await ada.page.getByRole('button', { name: 'Settle the flag' }).click();
    await expect.poll(() => ada.page.locator('.badge.flag').innerText()).toBe('flag settled');
    expect(errors()).toEqual([]);
  });

  it('makes a hub at /h/new and goes to it', async () => {
    await ada.page.goto('/h/new');
    await ada.page.getByRole('textbox', { name: 'Name' }).fill('Cider House');
    await ada.page.getByRole('button', { name: 'Create hub' }).click();
    await ada.page.waitForURL('**/h/cider-house');
    await expect.poll(() => ada.page.getByRole('heading', { level: 1 }).innerText()).toBe('Cider House');
    expect(errors()).toEqual([]);
  });

  it('has the header links on every page, and sends a signed-out visitor of an app page to sign in', async () => {
    for (const path of ['/', `/t/${threadId}`, `/h/${hub.slug}`, '/tasks', '/inbox', '/dm', '/search', '/settings', '/new', '/h/new']) {
      const page = await request(`${server.url}${path}`, { headers: { accept: 'text/html' } });
      // Asked for signed out, a private hub's and thread's pages answer 404 (no soft 404s), with the app in them.
      expect(page.status, path).toBe(path.startsWith('/t/') || path === `/h/${hub.slug}` ? 404 : 200);
      expect(page.text, path).toContain('<div id="app">');
      await ada.page.goto(path);
      const nav = ada.page.getByRole('navigation', { name: 'Main' });
      // The Inbox link may carry the unread count after its name.
      await expect.poll(async () => (await nav.getByRole('link').allInnerTexts()).map((text) => text.match(/^[A-Za-z]+/)?.[0]), { message: path }).toEqual(HEADER_LINKS);
    }
    const visitor = await browserContext(browser, server.url);
    const page = await visitor.newPage();
    for (const path of ['/new', '/h/new', '/inbox']) {
      await page.goto(path);
      await page.waitForURL(`**/signin?next=${encodeURIComponent(path)}`);
    }
    await visitor.close();
    expect(errors()).toEqual([]);
  });
});
