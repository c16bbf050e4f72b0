// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRule } from '../../server/core/rulebook/rulebook.ts';
import { editWar } from '../../server/core/rulebook/editWar.ts';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';
import { addMember, hubWithAgentPad, paragraphs, shoot } from './browserPeople.ts';

/**
 * Section marks in the pad page (issue 24 item 3): after an edit war the rule found, the section
 * shows a badge above it in headless Chromium, with the mark's whole text as its title, and the badge
 * is no part of the pad's text.
 */
describe.skipIf(!haveChromium).each(stores())('section marks in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;

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

  it('an edit war shows as a badge above its section, titled with the mark', async () => {
    const { hub, agent, padId } = await hubWithAgentPad(server, ada, 'Marks Lab', 'Plan', '# Goals\n\nShip it.\n\n# Risks\n\nNone at all.');
    const rival = await registerAgent(server, 'Rival');
    await addMember(server, hub.id, rival.id);
    const read = await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' });
    const [, , risks, body] = read.body.data.blocks as string[];
    // The two agents' people take turns: 3 reversals by 2 humans.
    for (const [i, writer] of [agent, rival, agent, rival].entries()) {
      const { version } = (await rest(server, writer.key, 'open_pad', { pad_id: padId })).body.data;
      const edit = await rest(server, writer.key, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: body, text: i % 2 ? 'None at all.' : 'Many risks.' }] });
      expect(edit.status, edit.text).toBe(200);
    }
    expect((await runRule(server.core, editWar, new Date())).moved).toEqual([`${padId}#${risks}`]);

    await ada.page.goto(`/p/${padId}`);
    const badge = ada.page.getByRole('note', { name: 'Section mark: proposals only (edit war)' });
    await expect.poll(() => badge.count()).toBe(1);
    expect(await badge.innerText()).toBe('Suggestions only: edit war');
    expect(await badge.getAttribute('title')).toBe('proposals only (edit war)');
    // Above the Risks heading, and only there.
    expect(await badge.evaluate((el) => (el.nextElementSibling as HTMLElement | null)?.dataset.blockId)).toBe(risks);
    expect(await ada.page.locator('.section-mark').count()).toBe(1);
    // The badge is no part of the pad's text: no block of the page holds it, nor the server's copy.
    expect(await ada.page.locator('.pad-body [data-block-id]', { hasText: 'edit war' }).count()).toBe(0);
    expect(await paragraphs(ada.page)).toContain('None at all.');
    expect((await server.core.sync.read(padId)).map((block) => block.text).join('\n')).not.toContain('edit war');
    await shoot(ada.page, 'section-mark-edit-war');

    // Ada owns the hub: her inbox tells her of the war, naming the pad and the section.
    await ada.page.goto('/inbox');
    const item = ada.page.locator('[data-kind="edit_war"]');
    await expect.poll(() => item.count()).toBe(1);
    expect(await item.innerText()).toContain('takes suggestions only (edit war)');
    expect(await item.innerText()).toContain(`Plan · Risks (pad ${padId}, section ${risks})`);
    await shoot(ada.page, 'section-mark-edit-war-inbox');
  });

  it('in a Checked hub, a suggestion the owner checked shows a Checked badge titled with who checked it and why', async () => {
    const { hub, agent, padId } = await hubWithAgentPad(server, ada, 'Checked Lab', 'Budget', '# Costs\n\nAbout 40 thousand in all, give or take a few.\n\n# Income\n\nGrants.');
    const mode = await appTool(server, ada.cookie, 'set_hub_mode', { hub: hub.slug, mode: 'checked' });
    expect(mode.status, mode.text).toBe(200);
    const read = await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' });
    const [costs, body] = read.body.data.blocks as string[];
    const suggested = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: read.body.data.version, edits: [{ block_id: body, text: 'About 42 thousand in all, give or take a few.' }] });
    expect(suggested.body.data, suggested.text).toMatchObject({ state: 'waiting' });
    const verified = await appTool(server, ada.cookie, 'verify', { id: suggested.body.data.suggestion_id, verdict: 'verify', note: 'Matches the invoices' });
    expect(verified.status, verified.text).toBe(200);

    await ada.page.goto(`/p/${padId}`);
    const badge = ada.page.locator('.section-mark');
    await expect.poll(() => badge.count()).toBe(1);
    expect(await badge.innerText()).toBe('Checked by Ada');
    expect(await badge.getAttribute('title')).toBe('checked by Ada: "Matches the invoices"');
    expect(await badge.evaluate((el) => (el.nextElementSibling as HTMLElement | null)?.dataset.blockId)).toBe(costs);
    await expect.poll(() => paragraphs(ada.page)).toContain('About 42 thousand in all, give or take a few.');
    await shoot(ada.page, 'section-mark-checked');
  });
});
