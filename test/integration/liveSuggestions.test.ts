import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { PAD_EDIT_REASON, PAD_SUGGEST_REASON } from '../../schema/pad.ts';
import { CONDITION_MS } from '../support/patience.ts';
import { appTool, personClient, poke, reconnect, signIn, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

/**
 * Live typing in a Checked hub, enforced by the server (issue 24 item 7): a member who may not edit
 * directly gets a read-only connection, and what they type never reaches the accepted document nor
 * anyone else's page. A member typing while the hub becomes Checked (or a helper made a member) is
 * closed with the reason, and opens again read-only. The pad page follows what became of a member's
 * suggestions (ui_my_suggestions).
 */

type Page = ReturnType<typeof personClient>;

describe.each(stores())('live typing in a Checked hub on %s', (store) => {
  let server: TestServer;
  let owner: { cookie: string; id: string };
  let member: { cookie: string; id: string };
  let hub: { id: string; slug: string };
  const pages: Page[] = [];

  const open = (padId: string, cookie: string) => {
    const page = personClient(server, padId, cookie);
    pages.push(page);
    return page;
  };
  const setMode = (mode: 'open' | 'checked') => appTool(server, owner.cookie, 'set_hub_mode', { hub: hub.slug, mode });
  const newPad = async (text: string) => {
    const created = await appTool(server, owner.cookie, 'create_pad', { hub: hub.slug, title: 'Rules', text });
    expect(created.status, created.text).toBe(200);
    const padId = created.body.data.pad_id as string;
    const ids = (await appTool(server, owner.cookie, 'open_pad', { pad_id: padId, mode: 'full' })).body.data.blocks as string[];
    return { padId, ids };
  };
  const accepted = async (padId: string) => {
    await server.core.sync.flush();
    return (await server.core.sync.read(padId)).map((b) => b.text);
  };
  /** What the server answered to everything the page sent: true only if it took it. */
  const taken = (page: Page) => page.provider.isSynced && page.provider.unsyncedChanges === 0;

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await signIn(server, 'Olga', 'olga@example.test');
    member = await signIn(server, 'Mia', 'mia@example.test');
    const created = await appTool(server, owner.cookie, 'create_hub', { name: 'Checked Hub' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${member.id}, 'member')`);
  });
  afterAll(async () => {
    for (const page of pages) page.provider.destroy();
    await server?.close();
  });

  it('gives a member a read-only connection in a Checked hub, and drops what they type', async () => {
    expect((await setMode('checked')).status).toBe(200);
    const { padId, ids } = await newPad('# Rules\n\nBe kind');
    const ownerPage = open(padId, owner.cookie);
    const memberPage = open(padId, member.cookie);
    await Promise.all([ownerPage.synced, memberPage.synced]);
    expect(memberPage.provider.authorizedScope).toBe('readonly');
    expect(ownerPage.provider.authorizedScope).toBe('read-write');

    typeInto(memberPage.document, memberPage.fragment, ids[1]!, 'end', ' or leave');
    // The server answers that it did not take the change; the owner's own typing goes through.
    await expect.poll(() => memberPage.provider.unsyncedChanges).toBeGreaterThan(0);
    typeInto(ownerPage.document, ownerPage.fragment, ids[1]!, 0, 'Always ');
    await expect.poll(() => ownerPage.blocks().map((b) => b.text)).toEqual(['# Rules', 'Always Be kind']);
    await ownerPage.acknowledged();
    expect(await accepted(padId)).toEqual(['# Rules', 'Always Be kind']);
    // The member sees the accepted text come in, and keeps their own typing only on their page.
    await expect.poll(() => memberPage.blocks().map((b) => b.text)).toEqual(['# Rules', 'Always Be kind or leave']);
    expect(ownerPage.blocks().map((b) => b.text)).toEqual(['# Rules', 'Always Be kind']);
    expect(taken(memberPage)).toBe(false);
  });

  it('closes a member’s writing connection when the hub becomes Checked; it opens again read-only', async () => {
    expect((await setMode('open')).status).toBe(200);
    const { padId, ids } = await newPad('# Plan\n\nMeet at noon');
    const ownerPage = open(padId, owner.cookie);
    const memberPage = open(padId, member.cookie);
    await Promise.all([ownerPage.synced, memberPage.synced]);
    expect(memberPage.provider.authorizedScope).toBe('read-write');
    typeInto(memberPage.document, memberPage.fragment, ids[1]!, 'end', ' sharp');
    await memberPage.acknowledged();
    expect(await accepted(padId)).toEqual(['# Plan', 'Meet at noon sharp']);

    const reasons: string[] = [];
    memberPage.provider.on('close', ({ event }: { event: { reason: string } }) => reasons.push(event.reason));
    expect((await setMode('checked')).status).toBe(200);
    // The re-check runs every 4 s: the member's connection is closed with the reason, the owner's is not.
    await expect.poll(() => reasons, { timeout: CONDITION_MS }).toEqual([PAD_SUGGEST_REASON]);

    // As the page does: a new socket, which authenticates again and is read-only now.
    await reconnect(memberPage.provider);
    await expect.poll(() => memberPage.provider.authorizedScope, { timeout: CONDITION_MS }).toBe('readonly');
    typeInto(memberPage.document, memberPage.fragment, ids[1]!, 'end', ' or never');
    await expect.poll(() => memberPage.provider.unsyncedChanges).toBeGreaterThan(0);
    expect(await accepted(padId)).toEqual(['# Plan', 'Meet at noon sharp']);
    expect(ownerPage.blocks().map((b) => b.text)).toEqual(['# Plan', 'Meet at noon sharp']);
    // Read-only, it stays open: the re-check closes only connections that write.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(reasons.filter(Boolean)).toEqual([PAD_SUGGEST_REASON]);

    // The hub Open again: the member's read-only connection is closed with the other reason, and opens writing.
    expect((await setMode('open')).status).toBe(200);
    await expect.poll(() => reasons.filter(Boolean), { timeout: CONDITION_MS }).toEqual([PAD_SUGGEST_REASON, PAD_EDIT_REASON]);
    await reconnect(memberPage.provider);
    await expect.poll(() => memberPage.provider.authorizedScope, { timeout: CONDITION_MS }).toBe('read-write');
    // A bare Yjs client still holding what it typed while read-only sends it now, under the rights it
    // has now (the web page keeps no such typing: its member types into a draft of their own).
    await memberPage.acknowledged();
    expect(await accepted(padId)).toEqual(['# Plan', 'Meet at noon sharp or never']);
  });

  it('closes a helper’s writing connection in a Checked hub once they are made a member', async () => {
    expect((await setMode('checked')).status).toBe(200);
    const helper = await signIn(server, 'Hal', 'hal@example.test');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${helper.id}, 'helper')`);
    const { padId, ids } = await newPad('# Duties\n\nSweep on Sunday');
    const page = open(padId, helper.cookie);
    await page.synced;
    expect(page.provider.authorizedScope).toBe('read-write');
    const reasons: string[] = [];
    page.provider.on('close', ({ event }: { event: { reason: string } }) => reasons.push(event.reason));

    const demoted = await appTool(server, owner.cookie, 'moderate', { hub: hub.slug, action: 'name_member', who: helper.id });
    expect(demoted.status, demoted.text).toBe(200);
    await expect.poll(() => reasons, { timeout: CONDITION_MS }).toEqual([PAD_SUGGEST_REASON]);
    typeInto(page.document, page.fragment, ids[1]!, 'end', ' and Monday');
    expect(await accepted(padId)).toEqual(['# Duties', 'Sweep on Sunday']);
  });

  it('shows a member what became of their suggestions: waiting, then accepted or turned down with the note', async () => {
    expect((await setMode('checked')).status).toBe(200);
    const { padId } = await newPad('# Menu\n\nSoup on Friday');
    const mine = async () => (await appTool(server, member.cookie, 'ui_my_suggestions', { pad_id: padId })).body.view.suggestions;
    expect(await mine()).toEqual([]);
    const suggest = async (text: string) => {
      const sent = await appTool(server, member.cookie, 'edit_pad', { pad_id: padId, base_version: 1, text });
      expect(sent.status, sent.text).toBe(200);
      return sent.body.data.suggestion_id as string;
    };
    const first = await suggest('# Menu\n\nSoup on Friday and Monday');
    const second = await suggest('# Menu\n\nNo soup');
    expect(await mine()).toEqual([
      { id: second, state: 'waiting', base_version: 1, created_at: expect.any(String) },
      { id: first, state: 'waiting', base_version: 1, created_at: expect.any(String) },
    ]);
    // Someone else's: not the member's to follow.
    expect((await appTool(server, owner.cookie, 'ui_my_suggestions', { pad_id: padId })).body.view.suggestions).toEqual([]);

    expect((await appTool(server, owner.cookie, 'verify', { id: first, verdict: 'verify', note: 'Mondays too.' })).status).toBe(200);
    expect((await appTool(server, owner.cookie, 'verify', { id: second, verdict: 'turn_down', note: 'We like soup.' })).status).toBe(200);
    const [no, yes] = await mine();
    expect(yes).toMatchObject({ id: first, state: 'accepted', note: 'Mondays too.', accepted_version: 2 });
    expect(no).toMatchObject({ id: second, state: 'turned_down', note: 'We like soup.' });
    expect(await accepted(padId)).toEqual(['# Menu', 'Soup on Friday and Monday']);
  });
});
