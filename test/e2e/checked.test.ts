// @module-tag heavy
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { appTool, startTestServer, stores, type TestServer } from '../support/server.ts';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { addMember, connection, paragraphs, shoot, typeAtEndOf } from './browserPeople.ts';

/**
 * A Checked hub in the browser (issue 24 items 7 and 8), two people against the real server: the
 * owner switches the hub to Checked in its settings; the member's pad turns to suggestion mode, where
 * what they type is their own draft (marked, never in the pad) until they send it; the owner finds it
 * in the review page with its diff and accepts it with a note, and the member sees it go in. An
 * offline copy that comes back to a pad its person may no longer edit directly comes back as a
 * suggestion against the version it was made on, never merged into the accepted text.
 */

describe.skipIf(!haveChromium).each(stores())('a Checked hub in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;

  const onServer = async (padId: string) => {
    await server.core.sync.flush();
    return (await server.core.sync.read(padId)).map((b) => b.text);
  };
  /** A hub of Ada's with Bob as a member, and a pad Ada wrote there. */
  async function hubWithPad(name: string, text: string) {
    const created = await appTool(server, ada.cookie, 'create_hub', { name });
    expect(created.status, created.text).toBe(200);
    const hub = { id: created.body.data.hub_id as string, slug: created.body.data.slug as string };
    await addMember(server, hub.id, bob.id);
    const pad = await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'House rules', text });
    expect(pad.status, pad.text).toBe(200);
    return { hub, padId: pad.body.data.pad_id as string };
  }
  const openPad = async (who: Person, padId: string) => {
    await who.page.goto(`/p/${encodeURIComponent(padId)}`);
    await expect.poll(() => connection(who.page)).toMatch(/^Live/);
  };

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the owner switches to Checked; the member suggests; the owner accepts it in the review page with a note', async () => {
    const { hub, padId } = await hubWithPad('Garden Club', '# Rules\n\nWater the plants on Monday\n\n# Tools\n\nThe shed key is under the pot');

    await ada.page.goto(`/h/${hub.slug}`);
    const checked = ada.page.getByRole('radio', { name: /Checked/ });
    await expect.poll(() => ada.page.getByRole('radio', { name: /Open/ }).isChecked()).toBe(true);
    await checked.check();
    await expect.poll(async () => (await appTool(server, ada.cookie, 'open_hub', { hub: hub.slug })).body.view.hub.mode).toBe('checked');
    await shoot(ada.page, 'live-hub-settings');

    await openPad(ada, padId);
    await openPad(bob, padId);
    await expect.poll(() => connection(bob.page)).toContain('you suggest edits');
    expect(await bob.page.locator('.pad-body').getAttribute('contenteditable')).toBe('false');
    await bob.page.getByRole('button', { name: 'Suggest an edit' }).click();
    await expect.poll(() => bob.page.locator('.pad-body').getAttribute('contenteditable')).toBe('true');
    await typeAtEndOf(bob.page, 'Water the plants on Monday', ' and Thursday');
    const bar = bob.page.getByRole('region', { name: 'Your suggestion' });
    await expect.poll(() => bar.innerText()).toContain('1 paragraph changed or added');
    expect(await bar.innerText()).toContain('Your suggestion (not yet in the pad)');
    await expect.poll(() => bob.page.locator('.pad-body .suggested-block').allInnerTexts()).toEqual(['Water the plants on Monday and Thursday']);
    await shoot(bob.page, 'live-suggesting');

    // Nothing of Bob's draft reaches the pad, nor Ada's page.
    expect(await onServer(padId)).toEqual(['# Rules', 'Water the plants on Monday', '# Tools', 'The shed key is under the pot']);
    expect(await paragraphs(ada.page)).toEqual(['Rules', 'Water the plants on Monday', 'Tools', 'The shed key is under the pot']);

    // The draft is kept on the device, with the version it started from: a reload brings it back.
    await bob.page.reload();
    await expect.poll(() => bob.page.locator('.pad-body .suggested-block').allInnerTexts()).toEqual(['Water the plants on Monday and Thursday']);
    await expect.poll(() => bar.innerText()).toContain('from version 1: 1 paragraph changed or added');
    await bob.page.getByRole('button', { name: 'Send suggestion' }).click();
    await expect.poll(() => bob.page.locator('[data-state="waiting"]').innerText()).toContain('waits for someone to check it');
    // Sent: the page shows the accepted text again, read-only, with the button to start another.
    await expect.poll(() => paragraphs(bob.page)).toEqual(['Rules', 'Water the plants on Monday', 'Tools', 'The shed key is under the pot']);
    expect(await onServer(padId)).toEqual(['# Rules', 'Water the plants on Monday', '# Tools', 'The shed key is under the pot']);
    await shoot(bob.page, 'live-suggestion-waiting');

    // Ada: her home and the header lead to the review page, which shows the change.
    await ada.page.goto('/');
    await expect.poll(() => ada.page.locator('[data-to-check]').innerText()).toBe('1 suggested edit waits for your check: review it.');
    const review = ada.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Review/ });
    await expect.poll(() => review.innerText()).toContain('1');
    await review.click();
    const card = ada.page.locator('.suggestion-review');
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.locator('del').allInnerTexts()).toEqual(['Water the plants on Monday']);
    expect(await card.locator('ins').allInnerTexts()).toEqual(['Water the plants on Monday and Thursday']);
    expect(await card.innerText()).toContain('Bob suggests a change to House rules');
    await shoot(ada.page, 'live-review-queue');
    expect(await card.getByRole('button', { name: 'Accept' }).isDisabled()).toBe(true);
    await card.getByRole('textbox', { name: /Your note/ }).fill('Thursdays too, agreed.');
    await card.getByRole('button', { name: 'Accept' }).click();
    await expect.poll(() => card.getByRole('status').innerText()).toContain('Accepted');
    await shoot(ada.page, 'live-review-accepted');
    // Loaded afresh, the page has nothing left, and the header's link goes once nothing waits.
    await ada.page.goto('/review');
    await expect.poll(() => ada.page.getByRole('status').innerText()).toBe('Nothing waits for your check.');
    await ada.page.goto('/');
    await expect.poll(() => ada.page.locator('[data-to-check]').count()).toBe(0);
    expect(await ada.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Review/ }).count()).toBe(0);

    await expect.poll(() => onServer(padId)).toEqual(['# Rules', 'Water the plants on Monday and Thursday', '# Tools', 'The shed key is under the pot']);
    await expect.poll(() => paragraphs(bob.page)).toEqual(['Rules', 'Water the plants on Monday and Thursday', 'Tools', 'The shed key is under the pot']);
    await expect.poll(() => bob.page.locator('[data-suggestion]').getAttribute('data-state'), { timeout: 20_000 }).not.toBe('waiting');
    await shoot(bob.page, 'live-suggestion-accepted');

    // Open again: Bob's page connects again, writing, without a reload.
    expect((await appTool(server, ada.cookie, 'set_hub_mode', { hub: hub.slug, mode: 'open' })).status).toBe(200);
    await expect.poll(() => connection(bob.page), { timeout: 20_000 }).toBe('Live: synced');
    expect(await bob.page.locator('.pad-body').getAttribute('contenteditable')).toBe('true');
    expect(await bob.page.getByRole('button', { name: 'Suggest an edit' }).count()).toBe(0);
    expect(bob.errors.filter((e) => !e.includes('favicon'))).toEqual([]);
  });

  it('an offline copy that comes back to a pad that became Checked comes back as a suggestion, not merged', async () => {
    const { hub, padId } = await hubWithPad('Book Club', '# Next book\n\nWe read Dune');
    await openPad(bob, padId);
    await expect.poll(() => connection(bob.page)).toBe('Live: synced');
    await expect.poll(() => bob.page.locator('section.pad').getAttribute('data-offline-ready')).toBe('true');

    await bob.context.setOffline(true);
    await expect.poll(() => connection(bob.page)).toMatch(/^Offline/);
    await typeAtEndOf(bob.page, 'We read Dune', ' in March');
    const pad = bob.page.locator('section.pad');
    await expect.poll(async () => [await pad.getAttribute('data-kept-changes'), await pad.getAttribute('data-changes')]).toSatisfy(([kept, all]) => Number(kept) > 0 && kept === all);
    // The copy is the one in IndexedDB: reopened with no network, it still has the change.
    const warned = new Promise((resolve) => bob.page.once('dialog', (dialog) => void dialog.accept().then(resolve)));
    await bob.page.reload();
    await warned;
    await expect.poll(() => paragraphs(bob.page)).toEqual(['Next book', 'We read Dune in March']);
    await expect.poll(() => connection(bob.page)).toMatch(/^Offline: \d+ changes? kept on this device/);

    // Meanwhile Ada makes the hub Checked and edits the pad herself.
    expect((await appTool(server, ada.cookie, 'set_hub_mode', { hub: hub.slug, mode: 'checked' })).status).toBe(200);
    const read = await appTool(server, ada.cookie, 'open_pad', { pad_id: padId, mode: 'full' });
    const blocks = read.body.data.blocks as string[];
    const edited = await appTool(server, ada.cookie, 'edit_pad', { pad_id: padId, base_version: read.body.data.version, edits: [{ block_id: blocks[0]!, text: '# Next two books' }] });
    expect(edited.status, edited.text).toBe(200);

    await bob.context.setOffline(false);
    await expect.poll(() => bob.page.getByRole('status').filter({ hasText: 'sent as a suggestion' }).count()).toBe(1);
    await shoot(bob.page, 'live-offline-suggested');
    // Never merged: the pad has Ada's edit only; Bob's page shows the accepted text, read-only.
    await expect.poll(() => paragraphs(bob.page)).toEqual(['Next two books', 'We read Dune']);
    expect(await onServer(padId)).toEqual(['# Next two books', 'We read Dune']);
    await expect.poll(() => bob.page.locator('[data-suggestion]').getAttribute('data-state')).toBe('waiting');

    // Ada finds it to check, diffed against the version Bob's copy was based on.
    const queue = await appTool(server, ada.cookie, 'ui_review_queue', { hub: hub.slug });
    const waiting = queue.body.view.suggestions as { pad_id: string; author: { id: string }; base_version: number; changes: { change: string; text: string }[] }[];
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({ pad_id: padId, author: { id: bob.id }, base_version: 1 });
    expect(waiting[0]!.changes.map((c) => c.text)).toContain('We read Dune in March');

    // Ada finds it on the pad's page too, and turns it down with a note; Bob's page says so, with the note.
    await openPad(ada, padId);
    const card = ada.page.locator('.pad-suggestions .suggestion-review');
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.locator('ins').allInnerTexts()).toEqual(['We read Dune in March']);
    await card.getByRole('textbox', { name: /Your note/ }).fill('We settled on April.');
    await shoot(ada.page, 'live-pad-suggestions');
    await card.getByRole('button', { name: 'Turn down' }).click();
    await expect.poll(() => card.getByRole('status').innerText()).toBe('Turned down.');
    const outcome = bob.page.locator('[data-suggestion]');
    await expect.poll(() => outcome.getAttribute('data-state'), { timeout: 20_000 }).toBe('turned_down');
    expect(await outcome.innerText()).toContain('We settled on April.');
    expect(await onServer(padId)).toEqual(['# Next two books', 'We read Dune']);
    await shoot(bob.page, 'live-suggestion-turned-down');
  });
});
