// @module-tag heavy
import { type Browser, type Locator } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, mcpClient, poke, registerAgent, startTestServer, stores, type TestServer } from '../support/server.ts';
import { addMember, paragraphs, selectionTaken, typeAtEndOf } from './browserPeople.ts';

/**
 * The live pad in the web app, in headless Chromium against the real server (and its real CSP):
 * two people type into one pad and see each other, and an agent's edit_pad reaches both pages.
 */

describe.skipIf(!haveChromium).each(stores())('pads in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;
  let agent: { key: string; id: string };
  let mcp: Client;
  let hub: { id: string; slug: string };
  let padId: string;

  const person = (name: string) => personInBrowser(browser, server, name);

  const padText = (who: Person) => who.page.locator('.pad-body').innerText();
  /** A click just inside the left edge of an element, half way down. */
  const clickStartOf = async (locator: Locator) => {
    const box = await locator.boundingBox();
    if (!box) throw new Error('nothing to click: the element is not shown');
    await locator.click({ position: { x: 2, y: box.height / 2 } });
  };
  const present = (who: Person) => who.page.locator('.people li').allInnerTexts();
  const cspViolations = (who: Person) => who.errors.filter((e) => /Content Security Policy/i.test(e));

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await person('Ada');
    bob = await person('Bob');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Pad Lab' });
    if (created.status !== 200) throw new Error(`create_hub failed: ${created.text}`);
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await addMember(server, hub.id, bob.id);
    agent = await registerAgent(server, 'Scribe');
    await addMember(server, hub.id, agent.id);
    mcp = await mcpClient(server, agent.key);
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('makes a pad from the hub page and opens it at /p/:id under the strict CSP', async () => {
    const response = await ada.page.goto(`/h/${hub.slug}`);
    expect(response!.headers()['content-security-policy']).toContain("style-src 'self'");
    await ada.page.getByRole('textbox', { name: 'New pad' }).fill('Meeting notes');
    await ada.page.getByRole('button', { name: 'Create pad' }).click();
    await ada.page.waitForURL(/\/p\/pad_[^/]+$/);
    padId = decodeURIComponent(new URL(ada.page.url()).pathname.split('/')[2]!);
    await expect.poll(() => ada.page.locator('h1').innerText()).toBe('Meeting notes');
    await expect.poll(() => ada.page.locator('.connection').innerText()).toContain('Live');
    expect(await ada.page.locator('.pad-body').getAttribute('contenteditable')).toBe('true');
    expect(await ada.page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Pad Lab' }).getAttribute('href')).toBe(`/h/${hub.slug}`);
  });

  it('lists the pad on the hub page, linking to it', async () => {
    await bob.page.goto(`/h/${hub.slug}`);
    await bob.page.locator('#main').getByRole('link', { name: 'Meeting notes' }).click();
    await bob.page.waitForURL(`**/p/${encodeURIComponent(padId)}`);
    await expect.poll(() => bob.page.locator('.connection').innerText()).toContain('Live');
  });

  it("shows each person the other's presence, in their caret colour", async () => {
    await expect.poll(() => present(ada)).toEqual(['Ada (you)', 'Bob']);
    await expect.poll(() => present(bob)).toEqual(['Bob (you)', 'Ada']);
    const adaSwatch = await bob.page.locator('.people li', { hasText: 'Ada' }).getAttribute('class');
    expect(adaSwatch).toMatch(/caret-color-\d/);
  });

  it('shows what one person types to the other without reload, with their named caret', async () => {
    await ada.page.locator('.pad-body').click();
    await ada.page.keyboard.type('Hello from Ada');
    await expect.poll(() => padText(bob)).toContain('Hello from Ada');

    // Into Ada's paragraph at its left edge: its middle may be under Ada's caret label, which is not
    // text and takes no caret. Then to the end of the pad.
    await clickStartOf(bob.page.locator('.pad-body p', { hasText: 'Hello from Ada' }));
    await bob.page.keyboard.press('Control+End');
    await selectionTaken(bob.page);
    await bob.page.keyboard.press('Enter');
    await bob.page.keyboard.type('And Bob replies');
    await expect.poll(() => paragraphs(ada.page)).toEqual(['Hello from Ada', 'And Bob replies']);

    // Bob's caret sits in Ada's page, labelled and coloured by class (no inline style under the CSP).
    const caret = ada.page.locator('.collaboration-carets__caret', { hasText: 'Bob' });
    await expect.poll(() => caret.count()).toBe(1);
    expect(await caret.getAttribute('class')).toMatch(/caret-color-\d/);
    expect(await caret.getAttribute('style')).toBeNull();
  });

  it("shows a selection in the other's page, and formats through the toolbar", async () => {
    await clickStartOf(ada.page.locator('.pad-body p', { hasText: 'Hello from Ada' }));
    await ada.page.keyboard.press('End');
    await selectionTaken(ada.page);
    await ada.page.keyboard.press('Shift+Home');
    await selectionTaken(ada.page);
    await expect.poll(() => bob.page.locator('.collaboration-carets__selection').count()).toBeGreaterThan(0);
    await ada.page.getByRole('button', { name: 'Bold' }).click();
    await expect.poll(() => bob.page.locator('.pad-body strong').count()).toBe(1);
    await expect.poll(() => ada.page.getByRole('button', { name: 'Bold' }).getAttribute('aria-pressed')).toBe('true');
  });

  it("puts an agent's MCP edit_pad into both pages without reload", async () => {
    const opened = await mcp.callTool({ name: 'open_pad', arguments: { pad_id: padId } });
    expect(opened.isError).toBeFalsy();
    const { version } = opened.structuredContent as { version: number };
    const edited = await mcp.callTool({
      name: 'edit_pad',
      arguments: { pad_id: padId, base_version: version, inserts: [{ after: 'start', text: 'Agenda from the agent' }] },
    });
    expect(edited.isError).toBeFalsy();
    for (const who of [ada, bob]) {
      await expect.poll(() => padText(who)).toContain('Agenda from the agent');
      expect(await padText(who)).toContain('And Bob replies');
    }
    // Opening and typing added no stray blocks: the pad holds exactly what the three wrote, in order.
    // The editors may still be sending their last steps: the server's copy converges on this.
    await expect
      .poll(async () => (await server.core.sync.read(padId)).map((b) => b.text))
      .toEqual(['Agenda from the agent', '**Hello from Ada**', 'And Bob replies']);
  });

  it("colours two people's paragraphs typed at once each by its typist, and an agent's edit live", async () => {
    const author = (who: Person, text: string) => who.page.locator('.pad-body p', { hasText: text }).getAttribute('data-author');
    for (const who of [ada, bob]) await who.page.getByRole('button', { name: 'Author colours' }).click();
    await Promise.all([typeAtEndOf(ada.page, 'Hello from Ada', ' (Ada again)'), typeAtEndOf(bob.page, 'And Bob replies', ' (Bob again)')]);
    for (const who of [ada, bob]) {
      await expect.poll(() => author(who, 'Hello from Ada (Ada again)')).toBe('Ada (person)');
      await expect.poll(() => author(who, 'And Bob replies (Bob again)')).toBe('Bob (person)');
      expect(await author(who, 'Agenda from the agent')).toBe('Scribe (agent)');
    }
    // The agent rewrites Bob's paragraph: both pages colour it the agent's without a reload. (All
    // typing saved and versioned first, so the agent reads the latest and its edit meets no conflict.)
    for (const who of [ada, bob]) await expect.poll(() => who.page.locator('.connection').innerText()).toContain('Live: synced');
    await server.core.sync.flush();
    const opened = await mcp.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'full' } });
    const { version, blocks } = opened.structuredContent as { version: number; blocks: string[] };
    const edited = await mcp.callTool({ name: 'edit_pad', arguments: { pad_id: padId, base_version: version, edits: [{ block_id: blocks[2], text: 'Bob’s point, put by the agent' }] } });
    expect(edited.isError).toBeFalsy();
    expect((edited.structuredContent as { conflicts: unknown[] }).conflicts).toEqual([]);
    // Found by its block id: a caret left inside the new text splits it in the page.
    const rewritten = (who: Person) => who.page.locator(`.pad-body p[data-block-id="${blocks[2]}"]`);
    for (const who of [ada, bob]) {
      await expect.poll(() => rewritten(who).getAttribute('data-author')).toBe('Scribe (agent)');
      expect(await paragraphs(who.page)).toContain('Bob’s point, put by the agent');
    }
    for (const who of [ada, bob]) await who.page.getByRole('button', { name: 'Author colours' }).click();
  });

  it('drops a person from the others’ presence when they leave the pad page', async () => {
    await bob.page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Pad Lab' }).click();
    await bob.page.waitForURL(`**/h/${hub.slug}`);
    await expect.poll(() => present(ada)).toEqual(['Ada (you)']);
  });

  it('makes a pad beside a thread from the thread page', async () => {
    const thread = await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Plans', body: 'Where do we write them down?' });
    const threadId: string = thread.body.data.thread_id;
    await bob.page.goto(`/t/${encodeURIComponent(threadId)}`);
    await bob.page.getByRole('textbox', { name: 'New pad for this thread' }).fill('Plan draft');
    await bob.page.getByRole('button', { name: 'Create pad' }).click();
    await bob.page.waitForURL(/\/p\/pad_[^/]+$/);
    await expect.poll(() => bob.page.locator('h1').innerText()).toBe('Plan draft');
    const newPad = decodeURIComponent(new URL(bob.page.url()).pathname.split('/')[2]!);
    expect(await server.core.db.pool.oneFirst(sql.unsafe`SELECT thread_id FROM pads WHERE id = ${newPad}`)).toBe(threadId);
  });

  it('opens the pad read-only for a member of a Checked hub', async () => {
    await poke(server, sql.unsafe`UPDATE hubs SET mode = 'checked' WHERE id = ${hub.id}`);
    await bob.page.goto(`/p/${encodeURIComponent(padId)}`);
    // Read-only to the pad: the member suggests instead (test/e2e/checked.test.ts).
    await expect.poll(() => bob.page.locator('.connection').innerText()).toContain('you suggest edits');
    await expect.poll(() => padText(bob)).toContain('Agenda from the agent');
    expect(await bob.page.locator('.pad-body').getAttribute('contenteditable')).toBe('false');
    expect(await bob.page.getByRole('toolbar').count()).toBe(0);
    await poke(server, sql.unsafe`UPDATE hubs SET mode = 'open' WHERE id = ${hub.id}`);
  });

  it('keeps typing that would pass 60,000 characters on the page, says why, and saves it once there is room', async () => {
    // Five one-word paragraphs of 11,900 characters and a short one: 59,516 characters.
    const text = [...Array.from({ length: 5 }, () => 'x'.repeat(11_900)), 'Short.'].join('\n\n');
    const created = await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'Nearly full', text });
    expect(created.status).toBe(200);
    const fullPad: string = created.body.data.pad_id;
    await ada.page.goto(`/p/${encodeURIComponent(fullPad)}`);
    await expect.poll(() => ada.page.locator('.connection').innerText()).toContain('Live');
    await ada.page.locator('.pad-body p', { hasText: 'Short.' }).click();
    await ada.page.keyboard.press('End');
    await selectionTaken(ada.page);
    await ada.page.keyboard.insertText('y'.repeat(600));
    const notice = ada.page.getByRole('alert');
    await expect.poll(() => notice.innerText()).toContain('This pad is full (60,000 characters at most); the change was not saved.');
    await expect.poll(() => ada.page.locator('.connection').innerText()).toContain('Not saved');
    const onServer = async () => (await server.core.sync.read(fullPad)).map((b) => b.text.length);
    expect(await onServer()).toEqual([11_900, 11_900, 11_900, 11_900, 11_900, 6]);
    // Room made on the page: one long paragraph is emptied; then the page saves all it holds.
    await ada.page.locator('.pad-body p').first().dblclick({ position: { x: 5, y: 5 } });
    await ada.page.keyboard.press('Backspace');
    await ada.page.getByRole('button', { name: 'Save again' }).click();
    await expect.poll(() => ada.page.locator('.connection').innerText()).toContain('Live');
    expect(await notice.count()).toBe(0);
    await expect.poll(onServer).toEqual([0, 11_900, 11_900, 11_900, 11_900, 606]);
  });

  it("stops a person's typing past the day's pad text and says until when", async () => {
    // A person of their own: the pads Ada made above count in her day's pad text.
    const cy = await person('Cy');
    await addMember(server, hub.id, cy.id);
    const created = await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'Long day', text: 'Start.' });
    expect(created.status).toBe(200);
    const longPad: string = created.body.data.pad_id;
    await cy.page.goto(`/p/${encodeURIComponent(longPad)}`);
    await expect.poll(() => cy.page.locator('.connection').innerText()).toContain('Live');
    // 3,000,000 × 0.00001: 30 characters a day, while Cy types.
    server.core.pace.scale = 0.00001;
    try {
      // In one change: the count every 2 s would otherwise stop Cy part way through.
      await cy.page.locator('.pad-body p', { hasText: 'Start.' }).click();
      await cy.page.keyboard.press('End');
      await selectionTaken(cy.page);
      await cy.page.keyboard.insertText(' ' + 'y'.repeat(40));
      const onServer = async () => (await server.core.sync.read(longPad)).map((block) => block.text).join('\n');
      await expect.poll(onServer).toContain('y'.repeat(40));
      await server.core.sync.flush();
      const notice = cy.page.getByRole('alert');
      await expect.poll(() => notice.innerText()).toContain('You can type again at');
      expect(Date.parse((await notice.locator('time').getAttribute('datetime'))!)).toBeGreaterThan(Date.now());
      expect(await cy.page.locator('.connection').innerText()).toContain('Not saved: typing paused');
      expect(await cy.page.locator('.pad-body').getAttribute('contenteditable')).toBe('false');
    } finally {
      server.core.pace.scale = 100;
    }
    expect(cy.errors).toEqual([]);
    await cy.context.close();
  });

  it('logged no CSP violation and no script error in either page', async () => {
    for (const who of [ada, bob]) {
      expect(cspViolations(who)).toEqual([]);
      expect(who.errors).toEqual([]);
    }
    // The check above can fail: an inline style attribute is reported the way a violation by the app would be.
    await bob.page.evaluate(() => document.body.setAttribute('style', 'color: red'));
    await expect.poll(() => cspViolations(bob).length).toBeGreaterThan(0);
  });
});
