// @module-tag heavy
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, startTestServer, stores, type TestServer } from '../support/server.ts';
import { shoot } from './browserPeople.ts';

/**
 * People changing what they made, in Chromium (issue 21, items 5, 9 and 7): editing and deleting
 * one's post, renaming a thread and a pad, deleting a pad after a confirmation naming what goes;
 * mention suggestions while typing @ and the warning for a mention naming nobody; fields that count
 * toward their size and refuse in plain words, once. With SHOTS_DIR=<dir>, screenshots go there.
 */

describe.skipIf(!haveChromium).each(stores())('own posts, names and mentions in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;
  const hub = { slug: '' };
  let threadId = '';
  let bobHandle = '';

  const post = (page: Page, text: string) => page.locator('article.post', { hasText: text });
  const errors = () => ada.errors.filter((e) => !/^429 .*\/wait_for_changes$/.test(e) && !e.includes('status of 429 (Too Many Requests)'));
  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
    hub.slug = (await appTool(server, ada.cookie, 'create_hub', { name: 'Orchard' })).body.data.slug;
    await appTool(server, bob.cookie, 'join_hub', { hub: hub.slug });
    expect((await appTool(server, ada.cookie, 'moderate', { hub: hub.slug, action: 'let_in', who: bob.id })).status).toBe(200);
    threadId = (await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Harvest plan', body: 'We pick Bramley first.' })).body.data.thread_id;
    await appTool(server, bob.cookie, 'post_reply', { thread_id: threadId, body: 'Sounds good.' });
    const people = (await appTool(server, ada.cookie, 'ui_mention_people', { thread_id: threadId })).body.view.people;
    bobHandle = people.find((p: { name: string }) => p.name === 'Bob').handle;
  });

  beforeEach(() => {
    if (ada) ada.errors.length = 0;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('a person edits their post (it shows "edited") and deletes it (it reads "(deleted)"); no Edit on others’ posts', async () => {
    const page = ada.page;
    await page.goto(`/t/${threadId}`);
    await page.getByLabel('Your reply').fill('We pick Cox in Octobr.');
    await page.getByRole('button', { name: 'Post reply' }).click();
    const mine = post(page, 'Cox in');
    await expect.poll(() => mine.count()).toBe(1);
    expect(await post(page, 'Sounds good.').getByRole('button', { name: 'Edit' }).count()).toBe(0);

    // While it is edited, its text is in the box, not the page: the post is found by its id.
    const editing = page.locator(`#${await mine.getAttribute('id')}`);
    await mine.getByRole('button', { name: 'Edit' }).click();
    await editing.getByLabel('Edit your post').fill('We pick Cox in October.');
    await shoot(page, 'edit-post');
    await editing.getByRole('button', { name: 'Save' }).click();
    const edited = post(page, 'Cox in October.');
    await expect.poll(() => edited.locator('.edited').innerText()).toBe('edited');

    await edited.getByRole('button', { name: 'Delete' }).click();
    await edited.getByRole('button', { name: 'Delete post' }).click();
    await expect.poll(() => page.locator('article.post .post-body .gone').allInnerTexts()).toEqual(['(deleted)']);
    expect(await page.locator('article.post', { hasText: 'Cox in' }).allInnerTexts()).toEqual([]);
    expect(errors()).toEqual([]);
  });

  it('the starter renames a thread, the maker renames a pad and deletes it after the confirmation names it', async () => {
    const page = ada.page;
    await page.goto(`/t/${threadId}`);
    await page.getByRole('button', { name: 'Rename thread' }).click();
    await page.getByLabel('New title').fill('Harvest plan 2026');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Harvest plan 2026');

    const padId = (await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'Picking rota' })).body.data.pad_id;
    await page.goto(`/p/${padId}`);
    await page.getByRole('button', { name: 'Rename pad' }).click();
    await page.getByLabel('New title').fill('Picking rota (autumn)');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Picking rota (autumn)');

    await page.getByRole('button', { name: 'Delete pad…' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete the pad' });
    await expect.poll(() => confirm.innerText()).toContain('Delete the pad Picking rota (autumn) with its text and history?');
    await shoot(page, 'delete-pad');
    await confirm.getByRole('button', { name: 'Delete pad' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/h/${hub.slug}`);
    await expect.poll(() => page.locator('h1').innerText()).toBe('Orchard');
    expect(await page.getByRole('link', { name: 'Picking rota (autumn)' }).count()).toBe(0);
    expect((await appTool(server, ada.cookie, 'open_pad', { pad_id: padId })).status).toBe(404);
    expect(errors()).toEqual([]);
  });

  it('@ suggests the thread’s people (arrows, Enter), a mention naming nobody is pointed out before sending, and mentions link to the person', async () => {
    const page = ada.page;
    await page.goto(`/t/${threadId}`);
    const box = page.getByLabel('Your reply');
    await box.click();
    await box.pressSequentially('Thanks @b');
    const list = page.getByRole('listbox', { name: 'People to mention' });
    await expect.poll(() => list.getByRole('option').allInnerTexts()).toEqual([expect.stringContaining(bobHandle)]);
    await shoot(page, 'mention-suggest');
    await box.press('Enter');
    await expect.poll(() => box.inputValue()).toBe(`Thanks ${bobHandle} `);
    expect(await list.count()).toBe(0);
    // Esc closes the list without choosing.
    await box.pressSequentially('and @a');
    await expect.poll(() => list.count()).toBe(1);
    await box.press('Escape');
    expect(await list.count()).toBe(0);
    await box.fill(`Thanks ${bobHandle} and @nobodyhere`);

    // Ctrl+Enter sends; the unknown handle is pointed out first, and nothing is posted yet.
    await box.press('Control+Enter');
    const warning = page.getByRole('alert').filter({ hasText: 'Nobody goes by' });
    await expect.poll(() => warning.innerText()).toContain('Nobody goes by @nobodyhere, so nobody will be told.');
    await shoot(page, 'mention-warning');
    expect(await post(page, 'nobodyhere').count()).toBe(0);
    await warning.getByRole('button', { name: 'Send anyway' }).click();
    const sent = post(page, 'nobodyhere');
    await expect.poll(() => sent.count()).toBe(1);
    const link = sent.getByRole('link', { name: bobHandle });
    expect(await link.getAttribute('href')).toBe(`/dm?with=${encodeURIComponent(bobHandle)}`);

    // A draft whose mentions all name people here goes at once.
    await box.fill(`One more for ${bobHandle}`);
    await box.press('Control+Enter');
    await expect.poll(() => post(page, 'One more for').count()).toBe(1);
    expect(errors()).toEqual([]);
  });

  it('the owner deletes a hub after a confirmation that counts its threads, pads and tasks', async () => {
    const page = ada.page;
    const slug = (await appTool(server, ada.cookie, 'create_hub', { name: 'Old orchard' })).body.data.slug;
    const thread = (await appTool(server, ada.cookie, 'start_thread', { hub: slug, title: 'Last harvest', body: 'Done.' })).body.data.thread_id;
    await appTool(server, ada.cookie, 'create_task', { thread_id: thread, title: 'Close the gate' });
    await page.goto(`/h/${slug}`);
    await page.getByRole('button', { name: 'Delete hub…' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete the hub' });
    await expect.poll(() => confirm.innerText()).toContain('Delete the hub Old orchard and everything in it: 1 thread, 0 pads and 1 task?');
    await shoot(page, 'delete-hub');
    await confirm.getByRole('button', { name: 'Keep it' }).click();
    expect((await appTool(server, ada.cookie, 'open_hub', { hub: slug })).status).toBe(200);
    await page.getByRole('button', { name: 'Delete hub…' }).click();
    await confirm.getByRole('button', { name: 'Delete hub' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/');
    expect((await appTool(server, ada.cookie, 'open_hub', { hub: slug })).status).toBe(404);
    expect(errors()).toEqual([]);
  });

  it('fields count toward their size and refuse in plain words, once, without cutting; long names wrap', async () => {
    const page = ada.page;
    await page.goto('/h/new');
    const name = page.getByLabel('Name');
    await name.fill('N'.repeat(150));
    expect(await page.locator('.limit').innerText()).toBe('');
    await name.fill('N'.repeat(170));
    await expect.poll(() => page.locator('.limit .count').innerText()).toBe('170 / 200');
    await name.fill('N'.repeat(236));
    const problem = 'Names are at most 200 characters; this one has 236.';
    await expect.poll(() => page.locator('.limit .problem').innerText()).toBe(problem);
    expect(await name.inputValue()).toHaveLength(236);
    await page.getByRole('button', { name: 'Create hub' }).click();
    expect(new URL(page.url()).pathname).toBe('/h/new');
    expect((await page.locator('main').innerText()).split(problem).length - 1).toBe(1);
    await shoot(page, 'name-too-long');
    expect((await appTool(server, ada.cookie, 'ui_my_hubs', {})).body.view.hubs).toHaveLength(1);

    // A long unbroken name fits the page, at 390 px as on a desktop.
    await name.fill('Q'.repeat(190));
    await page.getByRole('button', { name: 'Create hub' }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Q'.repeat(190));
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    }
    await page.setViewportSize({ width: 1280, height: 720 });
    await shoot(page, 'long-name');
    expect(errors()).toEqual([]);
  });
});
