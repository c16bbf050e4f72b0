import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { appTool, personClient as connectPerson, poke, registerAgent, rest, signIn, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

/**
 * Who wrote each section reaches agents: open_pad's outline, sections and full modes name each
 * section's last writer (person or agent), and a person's edits made offline and synced later are
 * versioned and attributed to them like live typing, merged with what an agent did meanwhile.
 */

type Section = { id: string; last_writer?: { participant_id: string; kind: string } };

describe.each(stores())('pad authorship on %s', (store) => {
  let server: TestServer;
  let agent: { key: string; id: string };
  let ada: { cookie: string; id: string };
  let hub: { id: string; slug: string };

  const personClient = (padId: string, cookie: string) => connectPerson(server, padId, cookie);

  const newPad = async (text: string) => {
    const created = await rest(server, agent.key, 'create_pad', { hub: hub.slug, title: 'Authors', text });
    expect(created.status).toBe(200);
    return created.body.data.pad_id as string;
  };
  const openPad = (args: Record<string, unknown>) => rest(server, agent.key, 'open_pad', args);
  const writers = (sections: Section[]) => sections.map((s) => s.last_writer ?? null);
  const liveVersionsBy = (padId: string) =>
    server.core.db.pool.anyFirst(sql.unsafe`SELECT actor_id FROM pad_versions WHERE pad_id = ${padId} AND kind = 'live' ORDER BY version`);

  beforeAll(async () => {
    server = await startTestServer(store);
    agent = await registerAgent(server, 'Scribe');
    ada = await signIn(server, 'Ada', 'ada@example.test');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Authors Hub' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${agent.id}, 'member')`);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("names each section's last writer in open_pad's outline, sections and full modes", async () => {
    const padId = await newPad('# Plan\n\nLeave at nine\n\n# Budget\n\nTickets are cheap');
    const ids = (await openPad({ pad_id: padId, mode: 'full' })).body.data.blocks as string[];
    // Ada types into the Plan section, live.
    const live = personClient(padId, ada.cookie);
    await live.synced;
    typeInto(live.document, live.fragment, ids[1]!, 'end', ' sharp');
    await live.acknowledged();
    await expect.poll(async () => writers((await openPad({ pad_id: padId })).body.data.sections)).toEqual([
      { participant_id: ada.id, kind: 'human' },
      { participant_id: agent.id, kind: 'agent' },
    ]);
    live.provider.destroy();

    const outline = await openPad({ pad_id: padId });
    expect(outline.body.text).toContain('| Section | Id | Status | Open threads | Words | Last writer |');
    expect(outline.body.text).toMatch(/\| Plan \| [0-9a-f]{8} \| settled \| 0 \| 4 \| Ada \(person\) \|/);
    expect(outline.body.text).toMatch(/\| Budget \| [0-9a-f]{8} \| settled \| 0 \| 3 \| Scribe \(agent\) \|/);

    const full = await openPad({ pad_id: padId, mode: 'full' });
    expect(full.body.text).toContain(`Last writer of each section:\n- Plan (section ${ids[0]}): Ada (person)\n- Budget (section ${ids[2]}): Scribe (agent)`);
    expect(writers(full.body.data.sections)).toEqual([
      { participant_id: ada.id, kind: 'human' },
      { participant_id: agent.id, kind: 'agent' },
    ]);

    const one = await openPad({ pad_id: padId, mode: 'sections', sections: [ids[2]] });
    expect(one.body.text).toContain('Last writer: Scribe (agent)');
    expect(writers(one.body.data.sections)).toEqual([{ participant_id: agent.id, kind: 'agent' }]);
  });

  it('versions a person’s offline edits as theirs on reconnect, merged with an agent’s edits of the meantime', async () => {
    const padId = await newPad('# Plan\n\nLeave at nine\n\n# Budget\n\nTickets are cheap\n\nBudget is open');
    const ids = (await openPad({ pad_id: padId, mode: 'full' })).body.data.blocks as string[];
    const person = personClient(padId, ada.cookie);
    await person.synced;
    const socket = person.provider.configuration.websocketProvider;

    // Offline: the socket is gone; Ada edits the Plan paragraph and the last one.
    socket.disconnect();
    await expect.poll(() => socket.status).toBe('disconnected');
    typeInto(person.document, person.fragment, ids[1]!, 'end', ' from the north station');
    typeInto(person.document, person.fragment, ids[4]!, 'end', ' (ask Ada)');
    expect((await server.core.sync.read(padId)).map((b) => b.text)).toEqual(['# Plan', 'Leave at nine', '# Budget', 'Tickets are cheap', 'Budget is open']);

    // Meanwhile an agent edits another paragraph, and the same last one.
    const { version } = (await openPad({ pad_id: padId })).body.data;
    const edited = await rest(server, agent.key, 'edit_pad', {
      pad_id: padId,
      base_version: version,
      edits: [
        { block_id: ids[3], text: 'Tickets cost 40 euros' },
        { block_id: ids[4], text: 'Budget is open until Friday' },
      ],
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data.conflicts).toEqual([]);

    await socket.connect();
    await person.synced;
    await person.acknowledged();

    // Both sides survive: the agent's paragraph, Ada's paragraph, and in the paragraph both changed
    // both insertions, in the CRDT's order.
    const expectBoth = (texts: string[]) => {
      expect(texts.slice(0, 4)).toEqual(['# Plan', 'Leave at nine from the north station', '# Budget', 'Tickets cost 40 euros']);
      expect(texts[4]).toContain(' until Friday');
      expect(texts[4]).toContain(' (ask Ada)');
      expect(texts[4]!.startsWith('Budget is open')).toBe(true);
      expect(texts).toHaveLength(5);
    };
    await expect.poll(async () => (await server.core.sync.read(padId)).map((b) => b.text)).toSatisfy((texts: string[]) => texts[1]!.endsWith('north station') && texts[4]!.includes('(ask Ada)'));
    expectBoth((await server.core.sync.read(padId)).map((b) => b.text));
    expectBoth(person.blocks().map((b) => b.text));

    // Versioned like live typing, as Ada's, and named as hers to agents.
    await expect.poll(() => liveVersionsBy(padId)).toContain(ada.id);
    expect(new Set(await liveVersionsBy(padId))).toEqual(new Set([ada.id]));
    const full = await openPad({ pad_id: padId, mode: 'full' });
    expect(full.body.text).toContain('Leave at nine from the north station');
    expect(full.body.text).toContain('(ask Ada)');
    expect(full.body.text).toContain('until Friday');
    expect(writers(full.body.data.sections)).toEqual([
      { participant_id: ada.id, kind: 'human' },
      { participant_id: ada.id, kind: 'human' },
    ]);
    // The blocks' own last writers: the agent's paragraph stays the agent's.
    const authors = await appTool(server, ada.cookie, 'ui_pad_history', { pad_id: padId });
    expect(authors.status).toBe(200);
    const byBlock = authors.body.view.authors as Record<string, { id: string; kind: string }>;
    expect(byBlock[ids[1]!]).toMatchObject({ id: ada.id, kind: 'human' });
    expect(byBlock[ids[3]!]).toMatchObject({ id: agent.id, kind: 'agent' });
    expect(byBlock[ids[4]!]).toMatchObject({ id: ada.id, kind: 'human' });
    person.provider.destroy();
  });

  it('ui_pad_history lists versions newest first with writer and kind, and only to readers of the pad', async () => {
    const padId = await newPad('First words');
    const { version } = (await openPad({ pad_id: padId })).body.data;
    const ids = (await openPad({ pad_id: padId, mode: 'full' })).body.data.blocks as string[];
    const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: ids[0], text: 'Second words' }] });
    const history = await appTool(server, ada.cookie, 'ui_pad_history', { pad_id: padId });
    expect(history.status).toBe(200);
    expect(history.body.data.versions).toEqual([
      { version: 2, kind: 'edit', at: expect.any(String), blocks: 1, writer: { participant_id: agent.id, kind: 'agent' }, edit_id: edited.body.data.edit_id },
      { version: 1, kind: 'create', at: expect.any(String), blocks: 1, writer: { participant_id: agent.id, kind: 'agent' } },
    ]);
    // Ada owns the hub: she may undo the agent's edit; the view says so.
    expect(history.body.view.versions[0]).toMatchObject({ editId: edited.body.data.edit_id, undoable: true, snippet: 'Second words', writer: { name: 'Scribe' } });
    // Participant text stays out of data.
    expect(JSON.stringify(history.body.data)).not.toContain('Second words');

    // The next page: versions before the one given.
    const page = await appTool(server, ada.cookie, 'ui_pad_history', { pad_id: padId, before: 2 });
    expect(page.body.data.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    expect(page.body.data.next_before).toBeUndefined();

    // Past 50 versions, a page ends with where the next starts.
    let at = 2;
    while (at < 52) {
      const next = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: at, edits: [{ block_id: ids[0], text: `Words ${at}` }] });
      at = next.body.data.version;
    }
    const first = await appTool(server, ada.cookie, 'ui_pad_history', { pad_id: padId });
    expect(first.body.data.versions.map((v: { version: number }) => v.version)).toEqual(Array.from({ length: 50 }, (_, i) => 52 - i));
    expect(first.body.data.next_before).toBe(3);
    const rest2 = await appTool(server, ada.cookie, 'ui_pad_history', { pad_id: padId, before: 3 });
    expect(rest2.body.data.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    const stranger = await signIn(server, 'Stranger', 'stranger@example.test');
    const refused = await appTool(server, stranger.cookie, 'ui_pad_history', { pad_id: padId });
    expect(refused.status).toBe(404);
    // App-only: agents do not see it.
    expect((await rest(server, agent.key, 'ui_pad_history', { pad_id: padId })).status).toBe(404);
  });
});
