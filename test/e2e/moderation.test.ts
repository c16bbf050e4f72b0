// @module-tag heavy
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { appTool, poke, startTestServer, stores, type TestServer } from '../support/server.ts';
import { hubWithAgent, shoot } from './browserPeople.ts';

/**
 * Moderators in headless Chromium against the real server (issue 24 items 6 and 8): the owner locks
 * a thread and a pad and unlocks them, undoes everything an agent did after counting it, and takes
 * the undo back; a member asks to take over a hub whose owner went quiet, and the owner sees the
 * notice and objects.
 */
describe.skipIf(!haveChromium).each(stores())('moderation in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: BrowserPerson;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('locks and unlocks a thread and a pad; the agent is refused while locked', async () => {
    const { hub, call } = await hubWithAgent(server, ada, 'Lock Station', 'Chatty');
    const thread = (await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Cool down', body: 'Let us pause.' })).body.data;
    const page = ada.page;
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`/t/${thread.thread_id}`);
    await page.getByRole('button', { name: 'Lock thread' }).click();
    await expect.poll(() => page.locator('.badge.locked').count()).toBe(1);
    expect(await page.getByText('This thread is locked').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Post reply' }).count()).toBe(0);
    // Its posts offer nothing the lock refuses: no reply, answer mark, edit or delete; the reactions are off.
    const first = page.locator('article.post', { hasText: 'Let us pause.' });
    for (const name of ['Reply', 'Mark as answer', 'Edit', 'Delete']) expect(await first.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    expect(await first.getByRole('button', { name: 'Hide' }).count()).toBe(1);
    await expect(call('post_reply', { thread_id: thread.thread_id, body: 'Me too.' })).rejects.toThrow(/locked/);
    await shoot(page, 'thread-locked');
    await page.getByRole('button', { name: 'Unlock thread' }).click();
    await expect.poll(() => page.locator('.badge.locked').count()).toBe(0);
    await call('post_reply', { thread_id: thread.thread_id, body: 'Back again.' });

    const pad = (await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'House rules', text: 'Be kind.' })).body.data;
    await page.goto(`/p/${pad.pad_id}`);
    await page.getByRole('button', { name: 'Lock pad' }).click();
    await expect.poll(() => page.locator('.badge.locked').count()).toBe(1);
    await expect.poll(() => page.locator('.pad-body').getAttribute('aria-readonly')).toBe('true');
    await expect(call('edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'Be loud.' })).rejects.toThrow(/locked/);
    await shoot(page, 'pad-locked');
    await page.getByRole('button', { name: 'Unlock pad' }).click();
    await expect.poll(() => page.locator('.badge.locked').count()).toBe(0);
    await expect.poll(() => page.locator('.pad-body').getAttribute('aria-readonly')).toBe('false');
  });

  it("undoes everything an agent did after counting it, and takes it back", async () => {
    const { hub, agent, call } = await hubWithAgent(server, ada, 'Undo Station', 'Vandal');
    const thread = (await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Notes', body: 'Add yours.' })).body.data;
    await call('post_reply', { thread_id: thread.thread_id, body: 'Buy cheap pills now.' });
    await call('post_reply', { thread_id: thread.thread_id, body: 'And more pills.' });
    const pad = (await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'Plan', text: 'Our plan.' })).body.data;
    await call('edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'Pills plan.' });

    const page = ada.page;
    await page.goto(`/h/${hub.slug}`);
    const member = page.locator(`li.member[data-participant="${agent.id}"]`);
    await member.getByRole('button', { name: 'Undo everything by this person…' }).click();
    const panel = member.getByRole('group', { name: 'Undo everything by Vandal' });
    await expect.poll(() => panel.innerText()).toContain('hide 2 posts and undo 1 pad edit?');
    await shoot(page, 'undo-count');
    await panel.getByRole('button', { name: 'Undo everything' }).click();
    await expect.poll(() => panel.innerText()).toContain('Undid 2 posts and 1 pad edit by');
    expect((await server.core.sync.read(pad.pad_id)).map((b) => b.text)).toEqual(['Our plan.']);
    const hidden = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM posts WHERE author_id = ${agent.id} AND hidden_at IS NOT NULL`);
    expect(await hidden()).toBe(2);
    await shoot(page, 'undo-done');

    await panel.getByRole('button', { name: 'Take back the last undo' }).click();
    await expect.poll(() => panel.innerText()).toContain('Took back the undo: 2 posts and 1 pad edit restored');
    expect((await server.core.sync.read(pad.pad_id)).map((b) => b.text)).toEqual(['Pills plan.']);
    expect(await hidden()).toBe(0);
  });

  it('a verified member asks to take over a quiet hub; the owner sees the notice and objects', async () => {
    const bea = await personInBrowser(browser, server, 'Bea');
    const created = (await appTool(server, ada.cookie, 'create_hub', { name: 'Quiet Station' })).body.data;
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${created.hub_id}, ${bea.id}, 'member')`);
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = ${bea.id}`);
    // Ada's activity there, and her sign-in, are 91 days old.
    await poke(server, sql.unsafe`UPDATE hubs SET created_at = now() - interval '91 days' WHERE id = ${created.hub_id}`);
    await poke(server, sql.unsafe`UPDATE credentials SET created_at = now() - interval '91 days' WHERE participant_id = ${ada.id}`);

    await bea.page.goto(`/h/${created.slug}`);
    await bea.page.getByRole('button', { name: 'Ask to take over this hub' }).click();
    await expect.poll(() => bea.page.locator('.takeover').innerText()).toContain('You asked');
    await shoot(bea.page, 'takeover-asked');

    await ada.page.goto(`/h/${created.slug}`);
    const notice = ada.page.locator('.takeover');
    await expect.poll(() => notice.innerText()).toContain('Bea asked');
    await shoot(ada.page, 'takeover-notice');
    await notice.getByRole('button', { name: 'Object: keep this hub' }).click();
    await expect.poll(() => notice.innerText()).toContain('You objected: the hub stays yours.');
    await expect.poll(() => notice.getByRole('button').count()).toBe(0);
    expect((await appTool(server, bea.cookie, 'open_hub', { hub: created.slug })).body.data.takeover).toBeUndefined();
  });
});
