// @module-tag heavy
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { poke, request, startTestServer, stores, type TestServer } from '../support/server.ts';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { addMember, connection, hubWithAgentPad, paragraphs, typeAtEndOf } from './browserPeople.ts';

/**
 * A pad edited with no network, in headless Chromium against the real server: the page says it is
 * offline and counts what it keeps, keeps it across a reload, and merges it with what an agent did
 * meanwhile once the network is back; a pad lost meanwhile is not brought back.
 */

const KEPT = /^Offline: \d+ changes? kept on this device/;

describe.skipIf(!haveChromium).each(stores())('offline pad editing in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let bob: Person;
  let agent: { key: string; id: string };
  let mcp: Client;
  let hub: { id: string; slug: string };
  let padId: string;

  const onServer = async (id: string) => (await server.core.sync.read(id)).map((b) => b.text);
  const openPad = async (who: Person, id: string) => {
    await who.page.goto(`/p/${encodeURIComponent(id)}`);
    await expect.poll(() => connection(who.page)).toContain('Live: synced');
    // The app's files and the pad's copy are kept on the device: a reload with no network finds them.
    await expect.poll(() => who.page.locator('section.pad').getAttribute('data-offline-ready')).toBe('true');
  };

  /** Waits until every change typed so far is written to the device (the count shown is of those). */
  const everyChangeKept = async (who: Person) => {
    const pad = who.page.locator('section.pad');
    await expect.poll(async () => [await pad.getAttribute('data-kept-changes'), await pad.getAttribute('data-changes')]).toSatisfy(([kept, all]) => Number(kept) > 0 && kept === all);
    expect(await connection(who.page)).toBe(`Offline: ${await pad.getAttribute('data-changes')} changes kept on this device`);
  };

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
    ({ hub, padId, agent, mcp } = await hubWithAgentPad(server, ada, 'Train Hub', 'Trip notes', '# Plan\n\nLeave at nine\n\n# Budget\n\nTickets are cheap'));
    await addMember(server, hub.id, bob.id);
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('keeps offline typing across a reload, and merges it with an agent’s edit once online', async () => {
    await openPad(ada, padId);
    await ada.context.setOffline(true);
    await expect.poll(() => connection(ada.page)).toMatch(/^Offline/);

    await typeAtEndOf(ada.page, 'Leave at nine', ' from the north station');
    await expect.poll(() => connection(ada.page)).toMatch(KEPT);
    await everyChangeKept(ada);
    expect(await onServer(padId)).toEqual(['# Plan', 'Leave at nine', '# Budget', 'Tickets are cheap']);

    // Closing or reloading the tab with changes kept only here asks first.
    const warned = new Promise<string>((resolve) => ada.page.once('dialog', (dialog) => void dialog.accept().then(() => resolve(dialog.type()))));
    await ada.page.reload();
    expect(await warned).toBe('beforeunload');

    // Reopened with no network: the kept text, the count of kept changes, and it still takes typing.
    await expect.poll(() => paragraphs(ada.page)).toEqual(['Plan', 'Leave at nine from the north station', 'Budget', 'Tickets are cheap']);
    await expect.poll(() => connection(ada.page)).toMatch(KEPT);
    expect(await ada.page.locator('.pad-body').getAttribute('contenteditable')).toBe('true');
    await typeAtEndOf(ada.page, 'from the north station', ', sharp');

    // Meanwhile an agent edits another paragraph over MCP.
    const opened = await mcp.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'full' } });
    const { version, blocks } = opened.structuredContent as { version: number; blocks: string[] };
    const edited = await mcp.callTool({
      name: 'edit_pad',
      arguments: { pad_id: padId, base_version: version, edits: [{ block_id: blocks[3]!, text: 'Tickets cost 40 euros' }] },
    });
    expect(edited.isError).toBeFalsy();

    // Bob is on the pad, online: he has the agent's edit, and nothing of Ada's yet.
    await openPad(bob, padId);
    await expect.poll(() => paragraphs(bob.page)).toEqual(['Plan', 'Leave at nine', 'Budget', 'Tickets cost 40 euros']);

    await ada.context.setOffline(false);
    await expect.poll(() => connection(ada.page)).toBe('Live: synced');
    const both = ['Plan', 'Leave at nine from the north station, sharp', 'Budget', 'Tickets cost 40 euros'];
    await expect.poll(() => paragraphs(ada.page)).toEqual(both);
    await expect.poll(() => paragraphs(bob.page)).toEqual(both);
    await expect.poll(() => onServer(padId)).toEqual(['# Plan', both[1], '# Budget', both[3]]);

    const markdown = await request(`${server.url}/p/${padId}.md`, { headers: { authorization: `Bearer ${agent.key}` } });
    expect(markdown.status).toBe(200);
    expect(markdown.text).toContain('Leave at nine from the north station, sharp');
    expect(markdown.text).toContain('Tickets cost 40 euros');

    // Versioned like live typing, as Ada's; the agent's section stays the agent's.
    await expect
      .poll(async () => {
        const outline = await mcp.callTool({ name: 'open_pad', arguments: { pad_id: padId } });
        return (outline.structuredContent as { sections: { last_writer?: unknown }[] }).sections.map((s) => s.last_writer);
      })
      .toEqual([
        { participant_id: ada.id, kind: 'human' },
        { participant_id: agent.id, kind: 'agent' },
      ]);
    const typed = await server.core.db.pool.anyFirst(sql.unsafe`SELECT actor_id FROM pad_versions WHERE pad_id = ${padId} AND kind = 'live'`);
    expect(typed.length).toBeGreaterThan(0);
    expect(new Set(typed)).toEqual(new Set([ada.id]));
  });

  it('does not bring back a pad whose access ended while offline: it says so and offers the kept text as Markdown', async () => {
    await openPad(bob, padId);
    await bob.context.setOffline(true);
    await expect.poll(() => connection(bob.page)).toMatch(/^Offline/);
    await typeAtEndOf(bob.page, 'Tickets cost 40 euros', ' (Bob was here)');
    await everyChangeKept(bob);

    await poke(server, sql.unsafe`DELETE FROM hub_members WHERE hub_id = ${hub.id} AND participant_id = ${bob.id}`);
    await bob.context.setOffline(false);

    const alert = bob.page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain('This pad is no longer available to you');
    expect(await connection(bob.page)).toContain('kept on this device only');
    expect(await bob.page.locator('.pad-body').getAttribute('contenteditable')).toBe('false');
    const [file] = await Promise.all([bob.page.waitForEvent('download'), bob.page.getByRole('button', { name: 'Download as Markdown' }).click()]);
    expect(file.suggestedFilename()).toBe('Trip notes.md');
    const chunks: Buffer[] = [];
    for await (const chunk of (await file.createReadStream())!) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe('# Plan\n\nLeave at nine from the north station, sharp\n\n# Budget\n\nTickets cost 40 euros (Bob was here)');

    // Nothing of Bob's kept text reached the pad.
    expect((await onServer(padId)).join('\n')).not.toContain('Bob was here');

    // Reloaded, the page still says so (the server answers not_found) and still offers the copy.
    await bob.page.reload();
    await expect.poll(() => bob.page.getByRole('alert').innerText()).toContain('This pad is no longer available to you');
    expect(await bob.page.getByRole('button', { name: 'Download as Markdown' }).count()).toBe(1);
  });

  it('logged no script error in either page, only the requests the missing network and the lost pad refused', () => {
    // The lost pad's page itself answers 404 when reloaded (no soft 404s), and its open_pad too, and the
    // side panel's open_hub for the hub Bob no longer reads.
    const expected = /ERR_INTERNET_DISCONNECTED|^Failed to load resource: the server responded with a status of 404|^404 .*\/api\/tools\/open_(pad|hub)$|^404 .*\/p\/pad_[0-9a-f]+$/;
    for (const who of [ada, bob]) expect(who.errors.filter((e) => !expected.test(e))).toEqual([]);
  });
});
