// @module-tag heavy
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, request, startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent } from './browserPeople.ts';

/**
 * Finding one's way in Chromium: the hub's pads and threads beside the page, breadcrumbs, a search
 * hit that opens a pad at its section, a task's result picked from the hub's pads and shown as a
 * link, an agent's reply showing on an open thread, and every main page fitting a phone's width.
 * With NAV_SCREENSHOTS=<dir> it saves each main page at desktop and 390 px wide.
 */
const SHOTS = process.env.NAV_SCREENSHOTS;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };

describe.skipIf(!haveChromium).each(stores())('navigation in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let agent: Awaited<ReturnType<typeof hubWithAgent>>;
  let threadId: string;
  let padId: string;
  let lateId: string;

  const call = (name: string, args: Record<string, unknown>) => agent.call(name, args);
  const panel = (page: Page) => page.getByRole('navigation', { name: 'Orchard: pads and threads' });
  const crumbs = (page: Page) => page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('listitem').allInnerTexts();
  /** Ada's page errors, less a wait refused while an earlier page's wait still holds one of her four. */
  const errors = () => ada.errors.filter((e) => !/^429 .*\/wait_for_changes$/.test(e) && !e.includes('status of 429'));

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    agent = await hubWithAgent(server, ada, 'Orchard', 'Picker');
    threadId = (await call('start_thread', { hub: agent.hub.slug, title: 'Harvest plan', body: 'We pick **Bramley** first.' })).thread_id;
    // A long pad: the section a search finds sits far below the top.
    const early = Array.from({ length: 40 }, (_, i) => `Row ${i + 1} of the early trees is pruned in winter.`).join('\n\n');
    const late = Array.from({ length: 30 }, (_, i) => `Row ${i + 1} of the late trees waits for spring.`).join('\n\n');
    const text = `# Early varieties\n\n${early}\n\n# Late varieties\n\nRusset apples keep until spring.\n\n${late}`;
    padId = (await call('create_pad', { hub: agent.hub.slug, title: 'Pruning guide', text })).pad_id;
    // Section titles are participant text, so the web app's view names them (an agent's data does not).
    const outline = await appTool(server, ada.cookie, 'open_pad', { pad_id: padId, mode: 'outline' });
    lateId = outline.body.view.sections.find((s: { title: string }) => s.title === 'Late varieties').id;
  });

  afterAll(async () => {
    await agent?.mcp.close();
    await browser?.close();
    await server?.close();
  });

  it('lists the hub’s pads and threads beside the page, moves between them, with breadcrumbs', async () => {
    await ada.page.setViewportSize(DESKTOP);
    await ada.page.goto(`/h/${agent.hub.slug}`);
    await expect.poll(() => panel(ada.page).getByRole('link').allInnerTexts()).toEqual(['Orchard', 'Pruning guide', 'Harvest plan']);
    await panel(ada.page).getByRole('link', { name: 'Harvest plan' }).click();
    await ada.page.waitForURL(`**/t/${threadId}`);
    await expect.poll(() => crumbs(ada.page)).toEqual(['Orchard', 'Harvest plan']);
    expect(await panel(ada.page).getByRole('link', { name: 'Harvest plan' }).getAttribute('aria-current')).toBe('page');
    await panel(ada.page).getByRole('link', { name: 'Pruning guide' }).click();
    await ada.page.waitForURL(`**/p/${padId}`);
    await expect.poll(() => crumbs(ada.page)).toEqual(['Orchard', 'Pruning guide']);
    // Folded away, the panel stays folded on the next page, and comes back.
    await ada.page.getByRole('button', { name: 'Hide' }).click();
    expect(await panel(ada.page).isVisible()).toBe(false);
    await ada.page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Orchard' }).click();
    await ada.page.waitForURL(`**/h/${agent.hub.slug}`);
    await ada.page.getByRole('button', { name: 'Show pads and threads' }).click();
    await expect.poll(() => panel(ada.page).isVisible()).toBe(true);
    expect(errors()).toEqual([]);
  });

  it('keeps the panel behind a button at 390 px, and it still navigates', async () => {
    await ada.page.setViewportSize(PHONE);
    await ada.page.goto(`/t/${threadId}`);
    const open = ada.page.getByRole('button', { name: 'Orchard: pads and threads' });
    await expect.poll(() => open.isVisible()).toBe(true);
    expect(await panel(ada.page).isVisible()).toBe(false);
    await open.click();
    if (SHOTS) await ada.page.screenshot({ path: `${SHOTS}/panel-open-390.png` });
    await panel(ada.page).getByRole('link', { name: 'Pruning guide' }).click();
    await ada.page.waitForURL(`**/p/${padId}`);
    expect(await panel(ada.page).isVisible()).toBe(false);
    await ada.page.setViewportSize(DESKTOP);
    expect(errors()).toEqual([]);
  });

  it('opens a pad at the section a search hit names, scrolled to it', async () => {
    await ada.page.goto('/search?q=russet');
    const hit = ada.page.getByRole('region', { name: 'Sections (1)' }).getByRole('link', { name: 'Late varieties' });
    expect(await hit.getAttribute('href')).toBe(`/p/${padId}#section-${lateId}`);
    await hit.click();
    await ada.page.waitForURL(`**/p/${padId}#section-${lateId}`);
    const heading = ada.page.locator(`.pad-body [data-block-id="${lateId}"]`);
    await expect.poll(() => heading.evaluate((el) => Math.round(el.getBoundingClientRect().top))).toBeLessThan(200);
    expect(await ada.page.evaluate(() => window.scrollY)).toBeGreaterThan(500);
    if (SHOTS) await ada.page.screenshot({ path: `${SHOTS}/pad-at-section-1280.png` });
    expect(errors()).toEqual([]);
  });

  it('hands in a task’s result picked from the hub’s pads and sections, and shows it as a link', async () => {
    const task = (await call('create_task', { thread_id: threadId, title: 'Write up late pruning', assignee: ada.id })).task_id;
    await ada.page.goto('/tasks');
    const row = ada.page.locator(`[data-task="${task}"]`);
    await row.getByRole('button', { name: 'Take' }).click();
    await row.getByRole('combobox', { name: 'Pad' }).selectOption({ label: 'Pruning guide' });
    await expect.poll(() => row.getByRole('combobox', { name: 'Section' }).locator('option').allInnerTexts()).toContain('Late varieties');
    await row.getByRole('combobox', { name: 'Section' }).selectOption(lateId);
    await row.getByRole('button', { name: 'Submit result' }).click();
    const link = row.getByRole('link', { name: 'the section in the pad' });
    await expect.poll(() => link.getAttribute('href')).toBe(`/p/${padId}#section-${lateId}`);
    // The thread shows it the same way.
    await ada.page.goto(`/t/${threadId}`);
    const inThread = ada.page.getByRole('region', { name: 'Tasks' }).locator(`[data-task="${task}"]`);
    await expect.poll(() => inThread.getByRole('link', { name: 'the section in the pad' }).getAttribute('href')).toBe(`/p/${padId}#section-${lateId}`);
    expect(errors()).toEqual([]);
  });

  it('shows an agent’s reply over MCP on the open thread without a reload', async () => {
    await ada.page.goto(`/t/${threadId}`);
    await expect.poll(() => ada.page.locator('article.post', { hasText: 'Bramley' }).count()).toBe(1);
    await ada.page.evaluate(() => Object.assign(window, { stillOpen: true }));
    await call('post_reply', { thread_id: threadId, body: 'Ladders are *ready*.' });
    await expect.poll(() => ada.page.locator('article.post em', { hasText: 'ready' }).count()).toBe(1);
    expect(await ada.page.evaluate(() => (window as unknown as { stillOpen?: boolean }).stillOpen)).toBe(true);
    expect(errors()).toEqual([]);
  });

  it('fits every main page into 390 px with nothing wider than the screen', async () => {
    // An agent of her own, so Settings shows its row of buttons.
    await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: ada.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Courier with a rather long name' }),
    });
    // Something unread, so the header carries the inbox badge, whose hidden words sit in its scrolling row.
    await call('create_task', { thread_id: threadId, title: 'Count the ladders', assignee: ada.id });
    /** Each page, and what shows once it has loaded. */
    const pages: Record<string, [string, string]> = {
      hub: [`/h/${agent.hub.slug}`, '.list .thread'],
      thread: [`/t/${threadId}`, 'article.post'],
      pad: [`/p/${padId}`, '.pad-body p'],
      settings: ['/settings', '[data-testid="agent"] .actions'],
      // The inbox marks what it shows as read: the second visit finds it empty.
      inbox: ['/inbox', '.inbox .item, [role="status"]'],
      search: ['/search?q=russet', '.results .row'],
      tasks: ['/tasks', '.task'],
      dms: ['/dm', 'form'],
    };
    for (const size of SHOTS ? [DESKTOP, PHONE] : [PHONE]) {
      await ada.page.setViewportSize(size);
      for (const [name, [path, loaded]] of Object.entries(pages)) {
        await ada.page.goto(path);
        await expect.poll(() => ada.page.locator(loaded).count(), { message: name }).toBeGreaterThan(0);
        if (name === 'hub') await expect.poll(() => ada.page.getByTestId('inbox-badge').count()).toBe(1);
        if (size === PHONE) expect(await ada.page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(390);
        if (SHOTS) await ada.page.screenshot({ path: `${SHOTS}/${name}-${size.width}.png` });
      }
    }
    await ada.page.setViewportSize(DESKTOP);
    expect(errors()).toEqual([]);
  });
});
