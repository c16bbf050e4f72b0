import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import WS from 'ws';
import { z } from 'zod';
import * as Y from 'yjs';
import { readBlocks } from '../../sync/blocks.ts';
import { PAD_FULL_REASON } from '../../schema/pad.ts';
import { appendUpdate, catchUpLog, compact, loadInto, tailSize } from '../../sync/store.ts';
import type { Persistence } from '../../sync/extensions/persistence.ts';
import pg from 'pg';
import { changedByOthersSince } from '../../sync/versions.ts';
import { HocuspocusProvider } from '@hocuspocus/provider';
import { appTool, mcpClient, openProvider, reconnect, signIn, registerAgent, request, rest, startTestServer, stores, typeInto, type TestServer, poke } from '../support/server.ts';

/** Pads as live documents: tools, live clients over /sync, conflicts, versions and the Markdown view. */
describe.each(stores())('pads on %s', (store) => {
  let server: TestServer;
  let owner: { key: string; id: string };
  let member: { key: string; id: string };
  let stranger: { key: string; id: string };
  let hub: { id: string; slug: string };
  const providers: { close(): void }[] = [];

  const createPad = async (text: string, title = 'Plan') => {
    const reply = await rest(server, owner.key, 'create_pad', { hub: hub.slug, title, text });
    expect(reply.status).toBe(200);
    return reply.body.data.pad_id as string;
  };
  const full = async (padId: string, key = owner.key) => (await rest(server, key, 'open_pad', { pad_id: padId, mode: 'full' })).body;
  /** An update typed at the start of paragraph `index` by a copy of the pad as stored (not applied live): another instance's. */
  const typedInto = async (padId: string, index: number, text: string) => {
    const doc = new Y.Doc();
    await loadInto(server.core.db, padId, doc);
    let update: Uint8Array | null = null;
    doc.on('update', (u: Uint8Array) => (update = u));
    ((doc.getXmlFragment('default').get(index) as Y.XmlElement).get(0) as Y.XmlText).insert(0, text);
    return update!;
  };
  /** Runs `meanwhile` while a row holding `update` is in the pad's log uncommitted (its id taken), then commits it: Postgres only. */
  const committedLast = async (padId: string, update: Uint8Array, meanwhile: () => Promise<void>) => {
    const writer = new pg.Client({ connectionString: server.core.config.databaseUrl });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query('INSERT INTO pad_updates (pad_id, update, state_vector) VALUES ($1, $2, $3)', [padId, Buffer.from(update), Buffer.from(Y.encodeStateVectorFromUpdate(update))]);
      await meanwhile();
      await writer.query('COMMIT');
    } finally {
      await writer.end();
    }
  };
  const connect = async (padId: string, token: string | null) => {
    const client = await openProvider(server, padId, token);
    providers.push(client);
    return client;
  };
  /**
   * A positive sentinel for "nothing arrived": the owner, still connected, types a line of its own
   * after the refused client typed; once the server holds the owner's line, the pad was live and
   * taking writes all along. The owner's line goes at the end of the last block.
   */
  const writtenAfter = async (padId: string, first: string) => {
    const sentinel = await connect(padId, owner.key);
    await sentinel.synced;
    typeInto(sentinel.document, sentinel.fragment, sentinel.blocks().at(-1)!.id, 'end', ' (sentinel)');
    await expect.poll(async () => (await server.core.sync.read(padId)).some((b) => b.text.endsWith('(sentinel)'))).toBe(true);
    sentinel.close();
    expect((await server.core.sync.read(padId))[0]!.text.startsWith(first)).toBe(true);
  };
  /** A person signed in through the web sign-in, with a seat in the test hub. */
  const seatedPerson = async (name: string, email: string) => {
    const person = await signIn(server, name, email);
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${person.id}, 'member')`);
    return person;
  };
  /** A WebSocket class sending a browser's cookie and Origin, which Node's own WebSocket cannot set. */
  const browserSocket = (cookie: string, origin: string) =>
    class extends WS {
      constructor(url: string) {
        super(url, { headers: { cookie, origin } });
      }
    };
  /** A member types into the first block of a pad; resolves once the server's live copy has it. */
  const typeLive = async (padId: string, at: number, text: string) => {
    const live = await connect(padId, member.key);
    await live.synced;
    const [block] = live.blocks();
    typeInto(live.document, live.fragment, block!.id, at, text);
    const typed = live.blocks()[0]!.text;
    await expect.poll(async () => (await server.core.sync.read(padId))[0]!.text).toBe(typed);
    return { live, block: block! };
  };

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await registerAgent(server, 'Pad Owner');
    member = await registerAgent(server, 'Pad Member');
    stranger = await registerAgent(server, 'Pad Stranger');
    const created = await rest(server, owner.key, 'create_hub', { name: 'Pad Hub' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${member.id}, 'member')`);
  });
  afterAll(async () => {
    for (const p of providers) p.close();
    await server?.close();
  });

  it('create_pad makes version 1 from Markdown, and open_pad shows the outline', async () => {
    const padId = await createPad('Opening words.\n\n# Goals\n\nFirst goal.\n\n## Detail\n\nMore.\n\n# Risks\n\nNone yet.');
    expect(padId).toMatch(/^pad_[0-9a-f]{20}$/);
    const outline = await rest(server, member.key, 'open_pad', { pad_id: padId });
    expect(outline.body.data).toMatchObject({ pad_id: padId, version: 1, status: 'settled', mode: 'outline' });
    expect(outline.body.data.sections.map((s: { level: number }) => s.level)).toEqual([0, 1, 2, 1]);
    expect(outline.body.text).toContain('| Introduction |');
    expect(outline.body.text).toContain('|   Detail |');
    const hubView = await rest(server, owner.key, 'open_hub', { hub: hub.slug });
    expect(hubView.body.data.pads.map((p: { id: string }) => p.id)).toContain(padId);
    // The web app's view names each section (participant text, so never in the structured content).
    expect(JSON.stringify(outline.body.data)).not.toContain('Goals');
    const person = await seatedPerson('Outline Reader', 'outline-reader@example.com');
    const seen = await appTool(server, person.cookie, 'open_pad', { pad_id: padId, mode: 'outline' });
    expect(seen.status).toBe(200);
    expect(seen.body.view.sections).toEqual(
      (outline.body.data.sections as Record<string, unknown>[]).map((row, i) => ({ ...row, title: ['Introduction', 'Goals', 'Detail', 'Risks'][i] })),
    );
    expect(seen.body.view.sections.map((s: { words: number }) => s.words)).toEqual([2, 2, 1, 2]);
    expect((await appTool(server, person.cookie, 'open_pad', { pad_id: padId, mode: 'full' })).body.view.sections).toBeUndefined();
  });

  it('open_pad reads chosen sections, changes since a version, and the whole text', async () => {
    const padId = await createPad('# One\n\nAlpha.\n\n# Two\n\nBeta.');
    const outline = await rest(server, owner.key, 'open_pad', { pad_id: padId });
    const two = outline.body.data.sections[1].id;
    const section = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'sections', sections: [two] });
    expect(section.body.text).toContain('~~~markdown\n# Two\n\nBeta.\n~~~');
    expect(section.body.text).not.toContain('Alpha.');
    const blocks = (await full(padId)).data.blocks as string[];
    await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: blocks[3], text: 'Beta, revised.' }] });
    const changes = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'changes', since: 1 });
    expect(changes.body.data.changes).toEqual([{ block_id: blocks[3], change: 'changed' }]);
    expect(changes.body.text).toContain('Beta, revised.');
    expect(JSON.stringify(changes.body.data)).not.toContain('Beta');
    const whole = await full(padId);
    expect(whole.data.version).toBe(2);
    expect(whole.text).toContain('~~~markdown\n# One\n\nAlpha.\n\n# Two\n\nBeta, revised.\n~~~');
  });

  it('past 25 sections the outline keeps the top two levels with (+N)', async () => {
    const text = Array.from({ length: 12 }, (_, i) => `# Part ${i}\n\nText.\n\n### Deep ${i}a\n\nx\n\n### Deep ${i}b\n\ny`).join('\n\n');
    const padId = await createPad(text);
    const outline = await rest(server, owner.key, 'open_pad', { pad_id: padId });
    expect(outline.body.data.sections).toHaveLength(12);
    expect(outline.body.data.sections[0]).toMatchObject({ level: 1, hidden: 2 });
    expect(outline.body.text).toContain('Part 0 (+2)');
  });

  it('refuses a pad over 60,000 characters and a stranger, writing nothing', async () => {
    const countPads = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM pads`);
    const before = await countPads();
    const big = await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Big', text: 'x'.repeat(60_001) });
    expect(big.status).toBe(413);
    const stranger_ = await rest(server, stranger.key, 'create_pad', { hub: hub.slug, title: 'Mine' });
    expect(stranger_.status).toBe(404);
    expect(await countPads()).toBe(before);
  });

  it('live typing that would pass 60,000 characters is not applied, and its connection is told why', async () => {
    // 5 paragraphs of 11,900: 59,508 characters with the blank lines between them.
    const padId = await createPad(Array.from({ length: 5 }, () => 'a'.repeat(11_900)).join('\n\n'));
    const near = await connect(padId, member.key);
    await near.synced;
    const [first, second] = near.blocks();
    // 300 more fit (59,808): measured exactly, since the bound (twice the text) would not fit.
    typeInto(near.document, near.fragment, first!.id, 0, 'y'.repeat(300));
    await expect.poll(async () => (await server.core.sync.read(padId))[0]!.text.length).toBe(12_200);
    const over = await connect(padId, member.key);
    await over.synced;
    const reasons: string[] = [];
    over.provider.on('close', ({ event }: { event: { reason: string } }) => reasons.push(event.reason));
    typeInto(over.document, over.fragment, second!.id, 0, 'x'.repeat(600));
    await expect.poll(() => reasons).toContain(PAD_FULL_REASON);
    await server.core.sync.flush();
    const saved = await full(padId);
    expect(saved.text).not.toContain('xxxxxxxxxx');
    expect((await server.core.sync.read(padId)).map((block) => block.text.length)).toEqual([12_200, 11_900, 11_900, 11_900, 11_900]);
    // Deleting is always let through, and typing again once there is room.
    const textOf = (client: typeof near, index: number) => (client.fragment.get(index) as Y.XmlElement).get(0) as Y.XmlText;
    near.document.transact(() => textOf(near, 0).delete(0, 1_000));
    typeInto(near.document, near.fragment, first!.id, 0, 'z'.repeat(500));
    await expect.poll(async () => (await server.core.sync.read(padId))[0]!.text.length).toBe(11_700);
    // The refused editor kept its text; once it makes room, connecting again saves all of it.
    over.document.transact(() => textOf(over, 1).delete(700, 1_000));
    await reconnect(over.provider);
    await expect.poll(async () => (await server.core.sync.read(padId))[1]!.text).toBe('x'.repeat(600) + 'a'.repeat(10_900));
  });

  it('a live client sees an MCP edit_pad at once', async () => {
    const padId = await createPad('First paragraph.\n\nSecond paragraph.');
    const live = await connect(padId, member.key);
    await live.synced;
    expect(live.text()).toBe('First paragraph.\n\nSecond paragraph.');
    const client = await mcpClient(server, owner.key);
    const [first] = live.blocks();
    const result = await client.callTool({ name: 'edit_pad', arguments: { pad_id: padId, base_version: 1, edits: [{ block_id: first!.id, text: 'First paragraph, by the agent.' }] } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ version: 2, conflicts: [] });
    await expect.poll(() => live.text()).toBe('First paragraph, by the agent.\n\nSecond paragraph.');
    await client.close();
  });

  it('live typing in one paragraph and a whole-text edit of another from an older version both survive', async () => {
    const padId = await createPad('Alpha one.\n\nBeta two.\n\nGamma three.');
    const { live } = await typeLive(padId, 'Alpha one.'.length - 1, ' typed live');
    await server.core.sync.flush();
    // The agent read version 1, before the typing, and rewrites only the third paragraph.
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, text: 'Alpha one.\n\nBeta two.\n\nGamma three, rewritten.' });
    expect(edit.body.data.conflicts).toEqual([]);
    await expect.poll(() => live.text()).toBe('Alpha one typed live.\n\nBeta two.\n\nGamma three, rewritten.');
    expect((await full(padId)).text).toContain('Alpha one typed live.\n\nBeta two.\n\nGamma three, rewritten.');
  });

  it('the same paragraph changed live and by an older edit is a reported conflict; the live text stays', async () => {
    const padId = await createPad('Shared sentence.\n\nOther.');
    const { live, block: shared } = await typeLive(padId, 0, 'Live: ');
    await server.core.sync.flush();
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, text: 'Agent sentence.\n\nOther.' });
    expect(edit.status).toBe(200);
    expect(edit.body.data.conflicts).toEqual([{ block_id: shared.id, reason: 'changed_since_base' }]);
    expect(edit.body.text).toContain('Agent sentence.');
    expect(live.text()).toBe('Live: Shared sentence.\n\nOther.');
    expect((await full(padId)).text).toContain('Live: Shared sentence.');
  });

  it('live typing becomes a version, even when its client left before the batch was taken', async () => {
    const padId = await createPad('Quiet.');
    const live = await openProvider(server, padId, member.key);
    await live.synced;
    typeInto(live.document, live.fragment, live.blocks()[0]!.id, 0, 'Not so ');
    await expect.poll(async () => (await server.core.sync.read(padId))[0]!.text).toBe('Not so Quiet.');
    live.close();
    await server.core.sync.flush();
    const after = await full(padId);
    expect(after.data.version).toBe(2);
    const changes = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'changes', since: 1 });
    expect(changes.body.data.changes).toEqual([{ block_id: after.data.blocks[0], change: 'changed' }]);
  });

  it('typing not yet versioned is never overwritten: an edit of that paragraph right after is a conflict', async () => {
    const padId = await createPad('Being typed.\n\nQuiet.');
    const { block: typed } = await typeLive(padId, 0, 'Now: ');
    // No flush: the edit comes well inside the 2-second batch.
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: typed.id, text: 'Replaced.' }] });
    expect(edit.body.data.conflicts).toEqual([{ block_id: typed.id, reason: 'changed_since_base' }]);
    expect((await full(padId)).text).toContain('Now: Being typed.');
    const changes = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'changes', since: 1 });
    expect(changes.body.data.changes).toEqual([{ block_id: typed.id, change: 'changed' }]);
  });

  it('"changed by others since" is answered from memory exactly as the database answers it', async () => {
    const padId = await createPad('One.\n\nTwo.\n\nThree.');
    const ids = (await full(padId)).data.blocks as string[];
    const edit = async (key: string, base: number, blockId: string, text: string) =>
      (await rest(server, key, 'edit_pad', { pad_id: padId, base_version: base, edits: [{ block_id: blockId, text }] })).body.data.version as number;
    let version = await edit(owner.key, 1, ids[0]!, 'One, by the owner.');
    version = await edit(member.key, version, ids[1]!, 'Two, by the member.');
    await typeLive(padId, 0, 'Typed: ');
    await server.core.sync.flush();
    version = await edit(owner.key, 1, ids[2]!, 'Three, by the owner.');
    expect(version).toBe(5);
    // Typing still unversioned when the next edit comes: its version is written ahead of the edit.
    const { live } = await typeLive(padId, 0, 'Again: ');
    version = await edit(owner.key, 2, ids[2]!, 'Three, by the owner again.');
    expect(version).toBe(7);
    await expect.poll(() => live.text()).toContain('Three, by the owner again.');
    const typed = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'changes', since: 5 });
    expect(typed.body.data.changes).toEqual([
      { block_id: ids[0]!, change: 'changed' },
      { block_id: ids[2]!, change: 'changed' },
    ]);
    for (const who of [owner, member, stranger]) {
      for (let base = 0; base < version; base++) {
        const remembered = server.core.sync.changedByOthersSince(padId, base, version, who.id);
        const stored = await changedByOthersSince(server.core.db.pool, padId, base, who.id);
        expect(remembered, `${who.id} since ${base}`).not.toBeNull();
        expect([...remembered!].sort()).toEqual([...stored].sort());
      }
    }
    // Once this instance forgets what it knew of the pad's versions, what it remembered no longer counts.
    server.core.sync.forget(padId);
    expect(server.core.sync.changedByOthersSince(padId, 1, version, owner.id)).toBeNull();
  });

  it('repeating undo_edit does not restore a deleted block twice', async () => {
    const padId = await createPad('One.\n\nTwo.\n\nThree.');
    const [, two] = (await full(padId)).data.blocks as string[];
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: two, text: '' }] });
    await rest(server, owner.key, 'undo_edit', { edit_id: edit.body.data.edit_id });
    const again = await rest(server, owner.key, 'undo_edit', { edit_id: edit.body.data.edit_id });
    expect(again.body.data.conflicts).toEqual([{ block_id: two, reason: 'changed_since_base' }]);
    const after = await full(padId);
    expect(after.text).toContain('~~~markdown\nOne.\n\nTwo.\n\nThree.\n~~~');
    expect(after.data.blocks[1]).toBe(two);
  });

  it('a whole-text edit of a long pad touches only the changed block', async () => {
    const text = Array.from({ length: 450 }, (_, i) => `Paragraph ${i}.`).join('\n\n');
    const padId = await createPad(text);
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, text: text.replace('Paragraph 150.', 'Paragraph 150, changed.') });
    expect(edit.body.data.changed).toHaveLength(1);
    const tooMany = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 2, text: text.replaceAll('.', '!') });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.error).toBe('too_large');
  });

  it('links read as [link to host]; a paragraph sent back unchanged keeps its real link', async () => {
    const padId = await createPad('See [the spec](https://example.com/spec) first.\n\nSecond paragraph.');
    const read = await full(padId, member.key);
    expect(read.text).toContain('See the spec [link to example.com] first.');
    expect(read.text).not.toContain('https://example.com/spec');
    const shown = read.text.split('~~~markdown\n')[1].split('\n~~~')[0] as string;
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, text: shown.replace('Second paragraph.', 'Second, edited.') });
    expect(edit.body.data.changed).toHaveLength(1);
    const live = await server.core.sync.read(padId);
    expect(live.map((b) => b.text)).toEqual(['See [the spec](https://example.com/spec) first.', 'Second, edited.']);
    const again = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 2, edits: [{ block_id: live[0]!.id, text: 'See the spec [link to example.com] first.' }] });
    expect(again.body.data.version).toBe(2);
    expect((await server.core.sync.read(padId))[0]!.text).toBe('See [the spec](https://example.com/spec) first.');
  });

  it('paragraph edits and inserts: empty text deletes, inserts go after a block or at the start', async () => {
    const padId = await createPad('A.\n\nB.\n\nC.');
    const [a, b, c] = (await full(padId)).data.blocks as string[];
    const edit = await rest(server, owner.key, 'edit_pad', {
      pad_id: padId,
      base_version: 1,
      edits: [{ block_id: b, text: '' }],
      inserts: [{ after: 'start', text: 'Zero.' }, { after: c, text: 'D.\n\nE.' }],
    });
    expect(edit.body.data.version).toBe(2);
    const after = await full(padId);
    expect(after.text).toContain('~~~markdown\nZero.\n\nA.\n\nC.\n\nD.\n\nE.\n~~~');
    expect(after.data.blocks).toContain(a);
    expect(after.data.blocks).not.toContain(b);
  });

  it('create_pad with an idempotency_key makes one pad however often it is retried', async () => {
    const args = { hub: hub.slug, title: 'Keyed', text: 'Once.', idempotency_key: 'pad-create-key' };
    const replies = await Promise.all([1, 2, 3].map(() => rest(server, owner.key, 'create_pad', args)));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(replies.map((r) => r.body.data.pad_id)).size).toBe(1);
    const pads = await server.core.db.pool.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM pads WHERE title = 'Keyed'`);
    expect(pads).toEqual([replies[0]!.body.data.pad_id]);
  });

  it('edit_pad with an idempotency_key inserts once however often it is retried', async () => {
    const padId = await createPad('Only.');
    const [only] = (await full(padId)).data.blocks as string[];
    const args = { pad_id: padId, base_version: 1, inserts: [{ after: only, text: 'Once more.' }], idempotency_key: 'pad-edit-key-1' };
    const first = await rest(server, owner.key, 'edit_pad', args);
    const replays = await Promise.all([1, 2, 3].map(() => rest(server, owner.key, 'edit_pad', args)));
    for (const again of replays) expect(again.body.data).toEqual({ ...first.body.data, replayed: true });
    expect((await full(padId)).text).toContain('~~~markdown\nOnly.\n\nOnce more.\n~~~');
    const other = await rest(server, owner.key, 'edit_pad', { ...args, inserts: [{ after: only, text: 'Different.' }] });
    expect(other.status).toBe(409);
  });

  it('concurrent retries of one keyed edit_pad write it once', async () => {
    const padId = await createPad('Racing.');
    const [block] = (await full(padId)).data.blocks as string[];
    const args = { pad_id: padId, base_version: 1, inserts: [{ after: block, text: 'Raced in.' }], idempotency_key: 'pad-race-key-1' };
    const replies = await Promise.all([1, 2, 3].map(() => rest(server, owner.key, 'edit_pad', args)));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(replies.map((r) => r.body.data.edit_id)).size).toBe(1);
    expect((await full(padId)).text).toContain('~~~markdown\nRacing.\n\nRaced in.\n~~~');
  });

  it('undo_edit takes one edit back as a new version; members undo only their own', async () => {
    const padId = await createPad('Keep.\n\nChange me.');
    const [, second] = (await full(padId)).data.blocks as string[];
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: second, text: 'Changed.' }], inserts: [{ after: second, text: 'Added.' }] });
    const editId = edit.body.data.edit_id;
    expect(editId).toMatch(/^edt_/);
    const refused = await rest(server, member.key, 'undo_edit', { edit_id: editId });
    expect(refused.status).toBe(403);
    const undone = await rest(server, owner.key, 'undo_edit', { edit_id: editId });
    expect(undone.body.data).toMatchObject({ version: 3, undone: editId, conflicts: [] });
    expect((await full(padId)).text).toContain('~~~markdown\nKeep.\n\nChange me.\n~~~');
  });

  it('undo_edit leaves a block someone changed since as a conflict', async () => {
    const padId = await createPad('One.\n\nTwo.');
    const [one, two] = (await full(padId)).data.blocks as string[];
    const edit = await rest(server, member.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: one, text: 'One, by member.' }, { block_id: two, text: 'Two, by member.' }] });
    await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 2, edits: [{ block_id: two, text: 'Two, by owner.' }] });
    const undone = await rest(server, member.key, 'undo_edit', { edit_id: edit.body.data.edit_id });
    expect(undone.body.data.conflicts).toEqual([{ block_id: two, reason: 'changed_since_base' }]);
    expect((await full(padId)).text).toContain('One.\n\nTwo, by owner.');
  });

  it('edit_pad refuses a version from the future and a stranger; a Checked hub member only suggests', async () => {
    const padId = await createPad('Text.');
    const future = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 9, text: 'x' });
    expect(future.status).toBe(400);
    expect(future.body.issues[0].path).toBe('base_version');
    const strangerEdit = await rest(server, stranger.key, 'edit_pad', { pad_id: padId, base_version: 1, text: 'x' });
    expect(strangerEdit.status).toBe(404);
    const checked = await rest(server, owner.key, 'create_hub', { name: 'Checked Hub' });
    await poke(server, sql.unsafe`UPDATE hubs SET mode = 'checked' WHERE id = ${checked.body.data.hub_id}`);
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${checked.body.data.hub_id}, ${member.id}, 'member')`);
    const checkedPad = (await rest(server, owner.key, 'create_pad', { hub: checked.body.data.slug, title: 'Checked', text: 'Careful.' })).body.data.pad_id;
    const memberEdit = await rest(server, member.key, 'edit_pad', { pad_id: checkedPad, base_version: 1, text: 'Hasty.' });
    expect(memberEdit.status).toBe(200);
    expect(memberEdit.body.data).toMatchObject({ state: 'waiting', base_version: 1 });
    expect((await server.core.sync.read(checkedPad)).map((b) => b.text)).toEqual(['Careful.']);
  });

  it('a WebSocket from someone without a seat is refused; a Checked-hub member reads only', async () => {
    const padId = await createPad('Guarded.');
    const outsider = await connect(padId, stranger.key);
    await expect.poll(() => outsider.denied()).not.toBeNull();
    expect(outsider.text()).toBe('');

    const checked = await rest(server, owner.key, 'create_hub', { name: 'Checked Two' });
    await poke(server, sql.unsafe`UPDATE hubs SET mode = 'checked' WHERE id = ${checked.body.data.hub_id}`);
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${checked.body.data.hub_id}, ${member.id}, 'member')`);
    const checkedPad = (await rest(server, owner.key, 'create_pad', { hub: checked.body.data.slug, title: 'Read only', text: 'Fixed text.' })).body.data.pad_id;
    const reader = await connect(checkedPad, member.key);
    await reader.synced;
    expect(reader.text()).toBe('Fixed text.');
    const watcher = await connect(checkedPad, owner.key);
    await watcher.synced;
    typeInto(reader.document, reader.fragment, reader.blocks()[0]!.id, 0, 'Sneaky ');
    // A positive sentinel on the same socket: the reader's awareness, sent after its typing, reaches
    // the owner, so the server has read (and refused) the typing before it.
    reader.provider.setAwarenessField('sentinel', 'after typing');
    await expect.poll(() => [...watcher.provider.awareness!.getStates().values()].some((state) => state.sentinel === 'after typing')).toBe(true);
    expect((await server.core.sync.read(checkedPad))[0]!.text).toBe('Fixed text.');
  });

  it('a cookie-authenticated WebSocket opened by another site is refused', async () => {
    const padId = await createPad('Cookie guarded.');
    const person = await seatedPerson('Cookie Person', 'cookie.person@example.test');
    const attempt = (origin: string) =>
      new Promise<string>((resolve) => {
        const doc = new Y.Doc();
        const provider = new HocuspocusProvider({
          url: `${server.url.replace('http', 'ws')}/sync`,
          name: padId,
          document: doc,
          WebSocketPolyfill: browserSocket(person.cookie, origin),
          onAuthenticationFailed: () => {
            provider.destroy();
            resolve('refused');
          },
          onSynced: () => {
            const text = readBlocks(doc.getXmlFragment('default')).map((b) => b.text).join();
            provider.destroy();
            resolve(text);
          },
        } as never);
      });
    expect(await attempt('https://evil.example')).toBe('refused');
    expect(await attempt(server.url)).toBe('Cookie guarded.');
  });

  it('signing out ends the live connections of that session', async () => {
    const padId = await createPad('Session bound.');
    const person = await seatedPerson('Leaving Person', 'leaving.person@example.test');
    const doc = new Y.Doc();
    let closed = 0;
    const provider = new HocuspocusProvider({
      url: `${server.url.replace('http', 'ws')}/sync`,
      name: padId,
      document: doc,
      WebSocketPolyfill: browserSocket(person.cookie, server.url),
      onClose: () => {
        closed++;
      },
    } as never);
    providers.push({ close: () => provider.destroy() });
    await new Promise<void>((resolve) => provider.on('synced', () => resolve()));
    const signOut = await request(`${server.url}/signout`, { method: 'POST', headers: { cookie: person.cookie, 'x-svc': '1' } });
    expect(signOut.status).toBe(204);
    await expect.poll(() => closed).toBeGreaterThan(0);
    // Whatever it types now reaches nobody: its reconnection is refused.
    const fragment = doc.getXmlFragment('default');
    typeInto(doc, fragment, readBlocks(fragment)[0]!.id, 0, 'Ghost: ');
    await writtenAfter(padId, 'Session bound.');
    expect((await server.core.sync.read(padId))[0]!.text).toBe('Session bound. (sentinel)');
  });

  it('a key revoked elsewhere ends its live connections within seconds', async () => {
    const padId = await createPad('Key bound.');
    const agent = await registerAgent(server, 'Soon Revoked');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${agent.id}, 'member')`);
    const live = await connect(padId, agent.key);
    await live.synced;
    let closed = 0;
    live.provider.on('close', () => closed++);
    expect(live.denied()).toBeNull();
    // As another instance would: straight in the database, so nothing on this one is told.
    await poke(server, sql.unsafe`UPDATE credentials SET revoked_at = now() WHERE participant_id = ${agent.id}`);
    // The pad connection is closed, and what is typed afterwards reaches nobody.
    await expect.poll(() => closed, { interval: 200 }).toBeGreaterThan(0);
    typeInto(live.document, live.fragment, live.blocks()[0]!.id, 0, 'Ghost: ');
    await writtenAfter(padId, 'Key bound.');
    expect((await server.core.sync.read(padId))[0]!.text).toBe('Key bound. (sentinel)');
  });

  it('someone removed from the hub loses their live connection within seconds', async () => {
    const padId = await createPad('Members only.');
    const leaving = await registerAgent(server, 'Soon Removed');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${leaving.id}, 'member')`);
    const live = await connect(padId, leaving.key);
    await live.synced;
    let closed = 0;
    live.provider.on('close', () => closed++);
    // Connected and in sync before the removal.
    expect(live.text()).toBe('Members only.');
    expect(live.denied()).toBeNull();
    // No tool removes members yet: as one would, straight in the database, so nothing is told.
    await poke(server, sql.unsafe`DELETE FROM hub_members WHERE hub_id = ${hub.id} AND participant_id = ${leaving.id}`);
    await expect.poll(() => closed, { interval: 200 }).toBeGreaterThan(0);
    // Connecting again is refused.
    const again = await connect(padId, leaving.key);
    await expect.poll(() => again.denied()).not.toBeNull();
  });

  it('wait_for_changes answers when the pad moves past the version, or at the timeout', async () => {
    const padId = await createPad('Waiting.');
    const [block] = (await full(padId)).data.blocks as string[];
    const waiting = rest(server, member.key, 'wait_for_changes', { pad_id: padId, version: 1, timeout_seconds: 25 });
    await expect.poll(() => server.core.waits.size).toBe(1);
    await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: block, text: 'Moved.' }] });
    const answered = await waiting;
    expect(answered.body.data).toMatchObject({ pad_id: padId, version: 2, changed: true });
    const quiet = await rest(server, member.key, 'wait_for_changes', { pad_id: padId, version: 2, timeout_seconds: 1 });
    expect(quiet.body.data).toMatchObject({ pad_id: padId, version: 2, changed: false });
  });

  it('a pad made beside a thread is listed by open_thread', async () => {
    const thread = await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'With a pad', body: 'Let us write it down.' });
    const pad = await rest(server, member.key, 'create_pad', { thread_id: thread.body.data.thread_id, title: 'Minutes' });
    expect(pad.body.data.thread_id).toBe(thread.body.data.thread_id);
    const open = await rest(server, owner.key, 'open_thread', { thread_id: thread.body.data.thread_id });
    expect(open.body.data.pads).toEqual([{ id: pad.body.data.pad_id, version: 1 }]);
    expect(open.body.text).toContain(`Minutes (${pad.body.data.pad_id}, version 1)`);
  });

  it('a participant holds at most 4 waits at once', async () => {
    const padId = await createPad('Patience.');
    // Long enough that all four are still open when the fifth comes, however slow the machine.
    const waits = [1, 2, 3, 4].map(() => rest(server, member.key, 'wait_for_changes', { pad_id: padId, version: 1, timeout_seconds: 10 }));
    await expect.poll(() => server.core.waits.size).toBe(4);
    const fifth = await rest(server, member.key, 'wait_for_changes', { pad_id: padId, version: 1, timeout_seconds: 1 });
    expect(fifth.status).toBe(429);
    expect(fifth.body.error).toBe('rate_limited');
    expect(fifth.headers.get('retry-after')).toBe('1');
    for (const wait of await Promise.all(waits)) expect(wait.body.data.changed).toBe(false);
  });

  it('compaction folds the log into a snapshot that loads to the same text', async () => {
    const padId = await createPad('Zero.');
    const [block] = (await full(padId)).data.blocks as string[];
    for (let i = 1; i <= 5; i++) await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: i, edits: [{ block_id: block, text: `Edit ${i}.` }] });
    expect((await tailSize(server.core.db.pool, padId)).n).toBe(6);
    await compact(server.core.db, padId);
    expect((await tailSize(server.core.db.pool, padId)).n).toBe(0);
    await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: 6, inserts: [{ after: block, text: 'After the snapshot.' }] });
    const fresh = new Y.Doc();
    const loaded = await loadInto(server.core.db, padId, fresh);
    expect(loaded.tail).toBe(1);
    expect(readBlocks(fresh.getXmlFragment('default')).map((b) => b.text)).toEqual(['Edit 5.', 'After the snapshot.']);
    // Again, now from a snapshot and a tail.
    await compact(server.core.db, padId);
    const again = new Y.Doc();
    expect((await loadInto(server.core.db, padId, again)).tail).toBe(0);
    expect(readBlocks(again.getXmlFragment('default')).map((b) => b.text)).toEqual(['Edit 5.', 'After the snapshot.']);
  });

  it('a live copy catches up by reading only the rows it has not taken in, and the snapshot again after a compaction', async () => {
    const padId = await createPad('First.\n\nSecond.');
    const typed = (index: number, text: string) => typedInto(padId, index, text);
    const live = new Y.Doc();
    await loadInto(server.core.db, padId, live);
    const text = () => readBlocks(live.getXmlFragment('default')).map((b) => b.text);
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 0, snapshot: false });

    await appendUpdate(server.core.db.pool, padId, await typed(0, 'One: '));
    await appendUpdate(server.core.db.pool, padId, await typed(1, 'Two: '));
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 2, snapshot: false });
    expect(text()).toEqual(['One: First.', 'Two: Second.']);
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 0, snapshot: false });

    // A compaction folds the rows into a new snapshot: read whole, once.
    await compact(server.core.db, padId);
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 0, snapshot: true });
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 0, snapshot: false });
    await appendUpdate(server.core.db.pool, padId, await typed(0, 'Three: '));
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 1, snapshot: false });
    expect(text()).toEqual(['Three: One: First.', 'Two: Second.']);

    // Two writers at once need two sessions: Postgres only. A row that took its id first and commits
    // after a later row was taken in is still read.
    if (store !== 'postgres') return;
    await committedLast(padId, await typed(1, 'Late: '), async () => {
      await appendUpdate(server.core.db.pool, padId, await typed(0, 'Early: '));
      expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 1, snapshot: false });
    });
    expect(await catchUpLog(server.core.db.pool, padId, live)).toEqual({ rows: 1, snapshot: false });
    expect(text()).toEqual(['Early: Three: One: First.', 'Late: Two: Second.']);
  });

  it('live updates of several pads are appended by one statement, and a pad that does not exist costs the others nothing', async () => {
    const persistence = server.core.sync.hocuspocus.configuration.extensions.find((e) => e.extensionName === 'dotpad-persistence') as Persistence;
    const pads = [await createPad('Alpha.'), await createPad('Beta.')];
    const typed = (padId: string, text: string) => typedInto(padId, 0, text);
    const Row = z.object({ pad_id: z.string(), created_at: z.string() });
    const rowsAfter = async (id: number) =>
      server.core.db.pool.any(sql.type(Row)`SELECT pad_id, created_at::text FROM pad_updates WHERE id > ${id} AND pad_id = ANY(${sql.array(pads, 'text')}) ORDER BY id`);
    const textOf = async (padId: string) => {
      const doc = new Y.Doc();
      await loadInto(server.core.db, padId, doc);
      return readBlocks(doc.getXmlFragment('default'))[0]!.text;
    };
    const last = async () => (await server.core.db.pool.oneFirst(sql.type(z.object({ id: z.number() }))`SELECT coalesce(max(id), 0)::int8 AS id FROM pad_updates`));

    let before = await last();
    persistence.queue(pads[0]!, await typed(pads[0]!, 'One '));
    persistence.queue(pads[1]!, await typed(pads[1]!, 'Two '));
    await server.core.sync.flush();
    const together = await rowsAfter(before);
    expect(together.map((row) => row.pad_id).sort()).toEqual([...pads].sort());
    // One statement, one transaction: both rows carry its start time.
    expect(together[0]!.created_at).toBe(together[1]!.created_at);
    expect([await textOf(pads[0]!), await textOf(pads[1]!)]).toEqual(['One Alpha.', 'Two Beta.']);

    before = await last();
    persistence.queue('pad_00000000000000000000', await typed(pads[1]!, 'Lost '));
    persistence.queue(pads[0]!, await typed(pads[0]!, 'Kept '));
    await server.core.sync.flush();
    expect((await rowsAfter(before)).map((row) => row.pad_id)).toEqual([pads[0]]);
    expect(await textOf(pads[0]!)).toBe('Kept One Alpha.');
  });

  // Two writers at once need two sessions: Postgres only (PGlite is one session).
  if (store === 'postgres') {
    it('compaction keeps an update whose row commits after a later row was folded', async () => {
      const padId = await createPad('First.\n\nSecond.');
      const late = await typedInto(padId, 0, 'Late: ');
      const early = await typedInto(padId, 1, 'Early: ');
      // The late row takes its id first but commits last, after a compaction has read the log.
      await committedLast(padId, late, async () => {
        await appendUpdate(server.core.db.pool, padId, early);
        await compact(server.core.db, padId);
      });
      const fresh = new Y.Doc();
      expect((await loadInto(server.core.db, padId, fresh)).tail).toBe(1);
      expect(readBlocks(fresh.getXmlFragment('default')).map((b) => b.text)).toEqual(['Late: First.', 'Early: Second.']);
      await compact(server.core.db, padId);
      const again = new Y.Doc();
      expect((await loadInto(server.core.db, padId, again)).tail).toBe(0);
      expect(readBlocks(again.getXmlFragment('default')).map((b) => b.text)).toEqual(['Late: First.', 'Early: Second.']);
    });
  }

  it('the Markdown view gives the whole text, the outline, one section, and 304 on an unchanged ETag', async () => {
    const padId = await createPad('Intro.\n\n# Heading\n\nBody.', 'Viewed');
    const auth = { authorization: `Bearer ${member.key}` };
    const view = await request(`${server.url}/p/${padId}.md`, { headers: auth });
    expect(view.status).toBe(200);
    expect(view.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(view.headers.get('etag')).toBe(`"pad:${padId}:1"`);
    expect(view.text).toMatch(new RegExp(`^---\\nid: "${padId}"\\ntype: "pad"\\nversion: 1\\netag: "\\\\"pad:${padId}:1\\\\""\\nupdated: "[^"]+"\\nstatus: "settled"\\nhub: "${hub.slug}"\\n---\\n`));
    expect(view.text).toContain('~~~markdown\nIntro.\n\n# Heading\n\nBody.\n~~~');
    const outline = await request(`${server.url}/p/${padId}?format=md&outline=1`, { headers: auth });
    expect(outline.text).toContain('| Introduction |');
    const blocks = (await full(padId)).data.blocks as string[];
    const section = await request(`${server.url}/p/${padId}.md?section=${blocks[1]}`, { headers: auth });
    expect(section.text).toContain('~~~markdown\n# Heading\n\nBody.\n~~~');
    expect(section.text).not.toContain('Intro.');
    const unknown = await request(`${server.url}/p/${padId}.md?section=deadbeef`, { headers: auth });
    expect(unknown.status).toBe(200);
    expect(unknown.text).toContain(`No section deadbeef in this pad; the outline lists them: ${server.core.config.baseUrl}/p/${padId}.md?outline=1`);
    const again = await request(`${server.url}/p/${padId}.md`, { headers: { ...auth, 'if-none-match': `"pad:${padId}:1"` } });
    expect(again.status).toBe(304);
    const hidden = await request(`${server.url}/p/${padId}.md`, { headers: { authorization: `Bearer ${stranger.key}` } });
    const missing = await request(`${server.url}/p/pad_00000000000000000000.md`, { headers: { authorization: `Bearer ${stranger.key}` } });
    expect(hidden.status).toBe(404);
    expect(hidden.text).toBe('# Not found\n');
    expect(missing.text).toBe(hidden.text);
  });
});
