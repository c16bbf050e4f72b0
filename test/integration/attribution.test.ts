import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { padVersionMessage } from '../../schema/pad.ts';
import { appTool, personClient, poke, registerAgent, rest, signIn, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

/**
 * Each change credited to whoever made it: two people typing at once in two paragraphs, a person's
 * offline edits merged while another types, and an agent's edit (announced live to the page). Who
 * wrote a block is one record (its last version), read alike by the history, the author colours and
 * open_pad's last writer, and it decides whether the block's links read live. Any version can be
 * read as it was and restored on top; a typed version is undone like an edit; submit_result finds a
 * section in the pad's current blocks.
 */

type Writer = { id: string; kind: string };
type VersionRow = { version: number; kind: string; writer: { id: string } | null; snippet: string | null; editId: string | null; undoable: boolean; restored: number | null };

describe.each(stores())('attribution on %s', (store) => {
  let server: TestServer;
  let agent: { key: string; id: string };
  let ada: { cookie: string; id: string };
  let bob: { cookie: string; id: string };
  let hub: { id: string; slug: string };

  const newPad = async (text: string) => {
    const created = await rest(server, agent.key, 'create_pad', { hub: hub.slug, title: 'Shared', text });
    expect(created.status).toBe(200);
    const padId = created.body.data.pad_id as string;
    const ids = (await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' })).body.data.blocks as string[];
    return { padId, ids };
  };
  const history = async (padId: string, cookie = ada.cookie) => {
    const reply = await appTool(server, cookie, 'ui_pad_history', { pad_id: padId });
    expect(reply.status).toBe(200);
    return reply.body.view as { version: number; versions: VersionRow[]; authors: Record<string, Writer> };
  };
  const sectionWriters = async (padId: string) =>
    ((await rest(server, agent.key, 'open_pad', { pad_id: padId })).body.data.sections as { last_writer?: { participant_id: string } }[]).map((s) => s.last_writer?.participant_id ?? null);
  const texts = async (padId: string) => (await server.core.sync.read(padId)).map((b) => b.text);
  /** Both people's typing reaches the server, then becomes versions at once (the 2 s tick, without the wait). */
  const settle = async (...clients: { acknowledged(): Promise<void> }[]) => {
    await Promise.all(clients.map((c) => c.acknowledged()));
    await server.core.sync.flush();
  };

  beforeAll(async () => {
    server = await startTestServer(store);
    agent = await registerAgent(server, 'Scribe');
    ada = await signIn(server, 'Ada', 'ada@example.test');
    bob = await signIn(server, 'Bob', 'bob@example.test');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Attribution Hub' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${agent.id}, 'member'), (${hub.id}, ${bob.id}, 'member')`);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('versions typing on its own, each pad when its own typing is due, with no flush', async () => {
    const first = await newPad('First pad');
    const second = await newPad('Second pad');
    const adaPage = personClient(server, first.padId, ada.cookie);
    const bobPage = personClient(server, second.padId, bob.cookie);
    await Promise.all([adaPage.synced, bobPage.synced]);
    const typedBy = async (padId: string) => (await history(padId)).versions.filter((v) => v.kind === 'live').map((v) => v.writer?.id);
    typeInto(adaPage.document, adaPage.fragment, first.ids[0]!, 'end', ', typed by Ada');
    await adaPage.acknowledged();
    // A second later, on another pad: its typing is due a second after the first pad's.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    typeInto(bobPage.document, bobPage.fragment, second.ids[0]!, 'end', ', typed by Bob');
    await bobPage.acknowledged();
    await expect.poll(() => typedBy(first.padId), { timeout: 15_000 }).toEqual([ada.id]);
    await expect.poll(() => typedBy(second.padId), { timeout: 15_000 }).toEqual([bob.id]);
    adaPage.provider.destroy();
    bobPage.provider.destroy();
  });

  it('credits two people typing at once in two paragraphs each with their own, in history, colours and open_pad', async () => {
    const { padId, ids } = await newPad('# Plan\n\nLeave at nine\n\n# Budget\n\nTickets are cheap');
    const adaPage = personClient(server, padId, ada.cookie);
    const bobPage = personClient(server, padId, bob.cookie);
    await Promise.all([adaPage.synced, bobPage.synced]);
    typeInto(adaPage.document, adaPage.fragment, ids[1]!, 'end', ' sharp, says Ada');
    typeInto(bobPage.document, bobPage.fragment, ids[3]!, 'end', ', says Bob');
    await settle(adaPage, bobPage);

    const { versions, authors } = await history(padId);
    expect(authors[ids[1]!]).toMatchObject({ id: ada.id, kind: 'human' });
    expect(authors[ids[3]!]).toMatchObject({ id: bob.id, kind: 'human' });
    // Each typed version names its typist with their own words, never the other's.
    const typed = versions.filter((v) => v.kind === 'live');
    expect(new Set(typed.map((v) => v.writer?.id))).toEqual(new Set([ada.id, bob.id]));
    for (const v of typed) {
      if (v.writer?.id === ada.id) expect(v.snippet).toContain('says Ada');
      else expect(v.snippet).toContain('says Bob');
    }
    expect(await sectionWriters(padId)).toEqual([ada.id, bob.id]);
    adaPage.provider.destroy();
    bobPage.provider.destroy();
  });

  it('credits offline edits merged while someone else types to their typist, block by block', async () => {
    const { padId, ids } = await newPad('# Plan\n\nLeave at nine\n\n# Budget\n\nTickets are cheap');
    const adaPage = personClient(server, padId, ada.cookie);
    const bobPage = personClient(server, padId, bob.cookie);
    await Promise.all([adaPage.synced, bobPage.synced]);
    const socket = bobPage.provider.configuration.websocketProvider;
    socket.disconnect();
    await expect.poll(() => socket.status).toBe('disconnected');
    typeInto(bobPage.document, bobPage.fragment, ids[3]!, 'end', ' (Bob, offline)');
    // Ada types live; Bob comes back while her typing is not versioned yet.
    typeInto(adaPage.document, adaPage.fragment, ids[1]!, 'end', ' (Ada, live)');
    await adaPage.acknowledged();
    await socket.connect();
    await bobPage.synced;
    await settle(adaPage, bobPage);
    expect(await texts(padId)).toEqual(['# Plan', 'Leave at nine (Ada, live)', '# Budget', 'Tickets are cheap (Bob, offline)']);

    const { authors } = await history(padId);
    expect(authors[ids[0]!]).toMatchObject({ id: agent.id });
    expect(authors[ids[1]!]).toMatchObject({ id: ada.id });
    expect(authors[ids[2]!]).toMatchObject({ id: agent.id });
    expect(authors[ids[3]!]).toMatchObject({ id: bob.id });
    expect(await sectionWriters(padId)).toEqual([ada.id, bob.id]);
    adaPage.provider.destroy();
    bobPage.provider.destroy();
  });

  it("announces an agent's edit to the page as a new version, and credits the agent with it", async () => {
    const { padId, ids } = await newPad('First\n\nSecond');
    const adaPage = personClient(server, padId, ada.cookie);
    const heard: string[] = [];
    adaPage.provider.on('stateless', ({ payload }: { payload: string }) => heard.push(payload));
    await adaPage.synced;
    typeInto(adaPage.document, adaPage.fragment, ids[0]!, 'end', ' by Ada');
    await settle(adaPage);
    expect((await history(padId)).authors[ids[0]!]).toMatchObject({ id: ada.id });

    const { version } = (await rest(server, agent.key, 'open_pad', { pad_id: padId })).body.data;
    const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: ids[0], text: 'First, reworded by Scribe' }] });
    expect(edited.status).toBe(200);
    await expect.poll(() => heard).toContain(padVersionMessage(edited.body.data.version));
    const after = await history(padId);
    expect(after.authors[ids[0]!]).toMatchObject({ id: agent.id, kind: 'agent' });
    expect(after.authors[ids[1]!]).toMatchObject({ id: agent.id });
    expect(after.versions[0]).toMatchObject({ version: edited.body.data.version, kind: 'edit', writer: { id: agent.id } });
    adaPage.provider.destroy();
  });

  it('shows any version as it was and restores it on top, by the person restoring, undoable', async () => {
    const { padId, ids } = await newPad('Alpha\n\nBeta\n\nGamma');
    const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: 1, text: 'Alpha, changed\n\nBeta' });
    expect(edited.status).toBe(200);
    expect(await texts(padId)).toEqual(['Alpha, changed', 'Beta']);

    const seen = await appTool(server, bob.cookie, 'ui_pad_version', { pad_id: padId, version: 1 });
    expect(seen.status).toBe(200);
    expect(seen.body.view).toEqual({ version: 1, blocks: ids.map((id, i) => ({ id, text: ['Alpha', 'Beta', 'Gamma'][i] })) });
    expect((await appTool(server, bob.cookie, 'ui_pad_version', { pad_id: padId, version: 9 })).status).toBe(404);

    // Bob, a member of this Open hub, restores version 1: a new version, his, with the removed block back under its id.
    const restored = await appTool(server, bob.cookie, 'ui_restore_pad_version', { pad_id: padId, version: 1 });
    expect(restored.status).toBe(200);
    expect(restored.body.data).toMatchObject({ pad_id: padId, version: 3, restored: 1, conflicts: [] });
    expect((await server.core.sync.read(padId)).map((b) => [b.id, b.text])).toEqual(ids.map((id, i) => [id, ['Alpha', 'Beta', 'Gamma'][i]]));
    const { versions, authors } = await history(padId, bob.cookie);
    expect(versions[0]).toMatchObject({ version: 3, kind: 'restore', restored: 1, writer: { id: bob.id }, undoable: true });
    expect(authors[ids[0]!]).toMatchObject({ id: bob.id });
    expect(authors[ids[1]!]).toMatchObject({ id: agent.id });

    // Restoring the version the pad already reads as changes nothing.
    const again = await appTool(server, bob.cookie, 'ui_restore_pad_version', { pad_id: padId, version: 3 });
    expect(again.body.data).toMatchObject({ version: 3, changed: [] });
    // A version the pad does not have is refused, naming the argument.
    const missing = await appTool(server, bob.cookie, 'ui_restore_pad_version', { pad_id: padId, version: 40 });
    expect(missing.status).toBe(400);
    expect(missing.body.issues).toEqual([{ path: 'version', message: 'Unknown version.' }]);

    // The restore is undone like any edit.
    const undone = await appTool(server, bob.cookie, 'undo_edit', { edit_id: versions[0]!.editId });
    expect(undone.status).toBe(200);
    expect(await texts(padId)).toEqual(['Alpha, changed', 'Beta']);

    // App-only (agents do not see it), and only for those who may edit the pad.
    expect((await rest(server, agent.key, 'ui_restore_pad_version', { pad_id: padId, version: 1 })).status).toBe(404);
    const stranger = await signIn(server, 'Stranger', 'stranger@example.test');
    expect((await appTool(server, stranger.cookie, 'ui_restore_pad_version', { pad_id: padId, version: 1 })).status).toBe(404);
  });

  it('undoes a typed version where its blocks allow, by its typist or an owner, not another member', async () => {
    const { padId, ids } = await newPad('One\n\nTwo');
    const bobPage = personClient(server, padId, bob.cookie);
    await bobPage.synced;
    typeInto(bobPage.document, bobPage.fragment, ids[0]!, 'end', ' typed by Bob');
    await settle(bobPage);
    const typed = (await history(padId, bob.cookie)).versions[0]!;
    expect(typed).toMatchObject({ kind: 'live', writer: { id: bob.id }, undoable: true, editId: expect.stringMatching(/^edt_/) });
    // Ada, the owner, sees it undoable too; the agent (a member) may not undo Bob's.
    expect((await history(padId)).versions[0]).toMatchObject({ undoable: true });
    expect((await rest(server, agent.key, 'undo_edit', { edit_id: typed.editId })).status).toBe(403);

    const undone = await appTool(server, bob.cookie, 'undo_edit', { edit_id: typed.editId });
    expect(undone.status).toBe(200);
    expect(undone.body.data.conflicts).toEqual([]);
    expect(await texts(padId)).toEqual(['One', 'Two']);
    await expect.poll(() => bobPage.blocks().map((b) => b.text)).toEqual(['One', 'Two']);

    // A block typed in again since is left as it is, reported as a conflict.
    typeInto(bobPage.document, bobPage.fragment, ids[1]!, 'end', ' and more');
    await settle(bobPage);
    const second = (await history(padId, bob.cookie)).versions[0]!;
    typeInto(bobPage.document, bobPage.fragment, ids[1]!, 'end', ' and more still');
    await settle(bobPage);
    const blocked = await appTool(server, bob.cookie, 'undo_edit', { edit_id: second.editId });
    expect(blocked.body.data.conflicts).toEqual([{ block_id: ids[1], reason: 'changed_since_base' }]);
    bobPage.provider.destroy();
  });

  it('keeps links live in paragraphs whose last writer reads verified, as posts do, and a paragraph sent back keeps them', async () => {
    // Ada reads verified: a confirmed address, an account a day old.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now(), created_at = now() - interval '2 days' WHERE id = ${ada.id}`);
    const { padId, ids } = await newPad('Intro\n\nSee https://agent.example/page');
    const adaPage = personClient(server, padId, ada.cookie);
    await adaPage.synced;
    typeInto(adaPage.document, adaPage.fragment, ids[0]!, 'end', ': https://ada.example/notes');
    await settle(adaPage);

    const full = await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' });
    expect(full.body.text).toContain('Intro: https://ada.example/notes');
    expect(full.body.text).toContain('See [link to agent.example]');
    expect(full.body.text).not.toContain('https://agent.example/page');
    const markdown = await fetch(`${server.url}/p/${padId}.md`, { headers: { authorization: `Bearer ${agent.key}` } });
    const body = await markdown.text();
    expect(body).toContain('Intro: https://ada.example/notes');
    expect(body).toContain('See [link to agent.example]');

    // The agent sends the whole text back with Ada's paragraph as it read it and a new last line:
    // her paragraph is untouched, links and writer both.
    const { version } = full.body.data;
    const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: version, text: 'Intro: https://ada.example/notes\n\nSee [link to agent.example]\n\nOne more line' });
    expect(edited.status).toBe(200);
    expect(edited.body.data.changed).not.toContain(ids[0]);
    expect(edited.body.data.changed).not.toContain(ids[1]);
    expect((await texts(padId)).slice(0, 2)).toEqual(['Intro: https://ada.example/notes', 'See https://agent.example/page']);
    expect((await history(padId)).authors[ids[0]!]).toMatchObject({ id: ada.id });
    adaPage.provider.destroy();
  });

  it('takes a result pointing at a section of a pad edited since it was made', async () => {
    const { padId, ids } = await newPad('# Findings\n\nNone yet\n\n# Next\n\nTo do');
    for (const [i, text] of ['Some', 'More', 'Many'].entries()) {
      const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: i + 1, edits: [{ block_id: ids[1], text }] });
      expect(edited.status).toBe(200);
    }
    const thread = await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Findings', body: 'Who writes them up?' });
    const task = await appTool(server, ada.cookie, 'create_task', { thread_id: thread.body.data.thread_id, title: 'Write the findings' });
    expect(task.status).toBe(200);
    const taskId = task.body.data.task_id as string;
    const missing = await rest(server, agent.key, 'submit_result', { task_id: taskId, pad_id: padId, block_id: 'deadbeef' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('has no section deadbeef now');
    const handed = await rest(server, agent.key, 'submit_result', { task_id: taskId, pad_id: padId, block_id: ids[2] });
    expect(handed.status).toBe(200);
  });
});
