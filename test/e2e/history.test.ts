// @module-tag heavy
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, stores, type TestServer } from '../support/server.ts';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { connection, hubWithAgentPad, paragraphs, typeAtEndOf } from './browserPeople.ts';

/**
 * Who wrote what, in the pad page in headless Chromium against the real server: author colours for
 * an agent's paragraph and a person's, the version history with what changed since a version, and
 * undo of one edit from the panel, with its conflicts shown.
 */

describe.skipIf(!haveChromium).each(stores())('pad history in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: BrowserPerson;
  let mcp: Client;
  let padId: string;
  let budgetEdit: { editId: string; version: number };

  const onServer = async () => (await server.core.sync.read(padId)).map((b) => b.text);
  /** The agent replaces the paragraph at `index` over MCP. */
  async function agentEdits(index: number, text: string) {
    const opened = await mcp.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'full' } });
    const { version, blocks } = opened.structuredContent as { version: number; blocks: string[] };
    const edited = await mcp.callTool({ name: 'edit_pad', arguments: { pad_id: padId, base_version: version, edits: [{ block_id: blocks[index]!, text }] } });
    expect(edited.isError).toBeFalsy();
    const data = edited.structuredContent as { edit_id: string; version: number };
    return { editId: data.edit_id, version: data.version };
  }
  const paragraph = (text: string) => ada.page.locator('.pad-body p', { hasText: text });
  const version = (v: number) => ada.page.locator(`.versions li[data-version="${v}"]`);
  /** Whether an element's top shows inside the history panel's scrolled area and the window. */
  const inView = (locator: ReturnType<typeof version>) =>
    locator.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const panel = element.closest('.history')!.getBoundingClientRect();
      return box.top >= Math.max(panel.top, 0) - 1 && box.top < Math.min(panel.bottom, window.innerHeight);
    });

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    ({ padId, mcp } = await hubWithAgentPad(server, ada, 'History Hub', 'Budget', '# Plan\n\nLeave at nine\n\n# Money\n\nTickets are cheap'));
    budgetEdit = await agentEdits(3, 'Tickets cost 40 euros');
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it("colours each paragraph by its last writer when asked: the agent's, then the person's", async () => {
    await ada.page.goto(`/p/${encodeURIComponent(padId)}`);
    await expect.poll(() => connection(ada.page)).toBe('Live: synced');
    expect(await paragraph('Tickets cost 40 euros').getAttribute('data-author')).toBeNull();
    await ada.page.getByRole('button', { name: 'Author colours' }).click();
    await expect.poll(() => paragraph('Tickets cost 40 euros').getAttribute('data-author')).toBe('Scribe (agent)');
    expect(await paragraph('Tickets cost 40 euros').getAttribute('class')).toMatch(/\bauthor-mark caret-color-\d\b/);
    // The agent wrote the whole pad so far; Ada's typing makes her paragraph hers.
    expect(await paragraph('Leave at nine').getAttribute('data-author')).toBe('Scribe (agent)');
    await typeAtEndOf(ada.page, 'Leave at nine', ' sharp');
    await expect.poll(() => paragraph('Leave at nine sharp').getAttribute('data-author')).toBe('Ada (person)');
    expect(await paragraph('Tickets cost 40 euros').getAttribute('data-author')).toBe('Scribe (agent)');
    expect(await ada.page.getByRole('list', { name: 'Authors' }).locator('li').allInnerTexts()).toEqual(expect.arrayContaining(['Scribe (agent)', 'Ada (person)']));
    // Off again: no colours.
    await ada.page.getByRole('button', { name: 'Author colours' }).click();
    await expect.poll(() => ada.page.locator('.pad-body .author-mark').count()).toBe(0);
  });

  it('lists the versions with writer, kind and summary, and shows what changed since one', async () => {
    await ada.page.getByRole('button', { name: 'History' }).click();
    await expect.poll(() => version(budgetEdit.version).innerText()).toContain('Scribe (agent)');
    const edit = await version(budgetEdit.version).innerText();
    expect(edit).toContain('edit');
    expect(edit).toContain('Tickets cost 40 euros');
    expect(await version(1).innerText()).toContain('created');
    await expect.poll(() => ada.page.locator('.versions li').filter({ hasText: /typing/ }).first().innerText()).toContain('Ada (person)');

    await version(1).getByRole('button', { name: 'Changes since' }).click();
    // Under the row it was asked from, brought into the panel's view.
    const diff = version(1).locator('.opened');
    await expect.poll(() => inView(diff)).toBe(true);
    await expect.poll(() => diff.locator('h3').innerText()).toBe('Changes since version 1');
    const changes = await diff.locator('li').evaluateAll((items) =>
      items.map((li) => [li.querySelector('.what')?.textContent, li.querySelector('del')?.textContent, li.querySelector('ins')?.textContent]),
    );
    expect(changes).toEqual([
      ['changed', 'Leave at nine', 'Leave at nine sharp'],
      ['changed', 'Tickets are cheap', 'Tickets cost 40 euros'],
    ]);
  });

  it("undoes the agent's edit from the panel, as undo_edit does", async () => {
    await version(budgetEdit.version).getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => ada.page.locator('.undone').innerText()).toMatch(new RegExp(`^Undid version ${budgetEdit.version}: the pad is at version \\d+`));
    await expect.poll(() => paragraphs(ada.page)).toEqual(['Plan', 'Leave at nine sharp', 'Money', 'Tickets are cheap']);
    expect(await onServer()).toEqual(['# Plan', 'Leave at nine sharp', '# Money', 'Tickets are cheap']);
    await expect.poll(() => ada.page.locator('.versions li').first().innerText()).toMatch(/\bundo\b[\s\S]*Ada \(person\)/);
  });

  it('shows the conflicts of an undo: a paragraph changed since the edit is left as it is', async () => {
    const planEdit = await agentEdits(1, 'Leave at ten');
    await expect.poll(() => paragraphs(ada.page)).toContain('Leave at ten');
    await typeAtEndOf(ada.page, 'Leave at ten', ', please');
    // Ada's typing is a version of its own (every 2 s) before the undo is asked for.
    await expect.poll(() => ada.page.locator('.versions li').first().innerText()).toMatch(/typing[\s\S]*Ada \(person\)/);
    await version(planEdit.version).getByRole('button', { name: 'Undo' }).click();
    const undone = ada.page.locator('.undone');
    await expect.poll(() => undone.innerText()).toContain(`Undid version ${planEdit.version}: nothing changed.`);
    expect(await undone.innerText()).toContain('someone changed it after this edit');
    expect(await onServer()).toContain('Leave at ten, please');
  });

  it('shows a version as it was and restores it from the panel, as a new version that is undone like any', async () => {
    await version(1).getByRole('button', { name: 'See it' }).click();
    const asWas = version(1).locator('.opened');
    await expect.poll(() => asWas.locator('p').allInnerTexts()).toEqual(['# Plan', 'Leave at nine', '# Money', 'Tickets are cheap']);
    await expect.poll(() => inView(asWas)).toBe(true);
    await version(1).getByRole('button', { name: 'Restore' }).click();
    await expect.poll(() => ada.page.locator('.undone').innerText()).toMatch(/^Restored version 1: the pad is at version \d+/);
    await expect.poll(() => paragraphs(ada.page)).toEqual(['Plan', 'Leave at nine', 'Money', 'Tickets are cheap']);
    expect(await onServer()).toEqual(['# Plan', 'Leave at nine', '# Money', 'Tickets are cheap']);
    const top = ada.page.locator('.versions li').first();
    await expect.poll(() => top.innerText()).toMatch(/restore[\s\S]*Ada \(person\)[\s\S]*Brought back version 1\./);
    // Ada's typing is a version she can undo too: type, then undo it from the panel.
    await typeAtEndOf(ada.page, 'Tickets are cheap', ' enough');
    await expect.poll(() => top.innerText()).toMatch(/typing[\s\S]*Ada \(person\)/);
    await top.getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => paragraphs(ada.page)).toEqual(['Plan', 'Leave at nine', 'Money', 'Tickets are cheap']);
  });

  it('logged no script error in the page', () => {
    expect(ada.errors).toEqual([]);
  });
});
