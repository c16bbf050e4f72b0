import pg from 'pg';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poke, registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Durable edits made at the same moment are written together, one statement for many pads
 * (sync/versionGroup.ts), each edit counted in its own windows and made or refused on its own.
 * 70 edits at once by one agent on 70 pads: its minute holds 60 writes (SPEC part 8), so exactly 60
 * are made, whatever statements they shared, and the other 10 are refused with the limit, unmade.
 */
describe.each(stores())('durable edits written together on %s', (store) => {
  const PADS = 70;
  let server: TestServer;
  const query = pg.Client.prototype.query;
  /** The statements that wrote versions of several pads together, and those of them that made their versions. */
  let grouped = 0;
  let groupedMade = 0;

  beforeAll(async () => {
    (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, config: unknown, ...more: unknown[]) {
      const text = typeof config === 'string' ? config : String((config as { text?: string } | null)?.text ?? '');
      const sent = (query as (...args: unknown[]) => unknown).call(this, config, ...more);
      if (text.includes('pace_count_or_refuse_many')) {
        grouped++;
        if (sent instanceof Promise) sent.then(() => groupedMade++, () => {});
      }
      return sent;
    };
    server = await startTestServer(store);
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await server?.close();
  });

  /** `n` pads of a hub the writer is seated in, each with its second block, made by their owner. */
  async function padsFor(name: string, n: number) {
    const owner = await registerAgent(server, `${name} Owner`);
    const hub = (await rest(server, owner.key, 'create_hub', { name: `${name} Desk` })).body.data;
    const writer = await registerAgent(server, `${name} Writer`);
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${writer.id}, 'member')`);
    const pads: { id: string; version: number; block: string }[] = [];
    for (let i = 0; i < n; i++) {
      const made = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: `Pad ${i}`, text: 'One.\n\nTwo.\n\nThree.' })).body.data;
      const full = (await rest(server, owner.key, 'open_pad', { pad_id: made.pad_id, mode: 'full' })).body.data;
      pads.push({ id: made.pad_id, version: made.version, block: full.blocks[1] });
    }
    return { owner, writer, pads };
  }

  it('makes each edit its minute holds and refuses each other one alone, unmade', async () => {
    const { owner, writer, pads } = await padsFor('Group', PADS);

    // The writer's own windows at the spec's numbers: 60 writes a minute.
    server.core.pace.scale = 1;
    grouped = 0;
    const replies = await Promise.all(
      pads.map((pad, i) => rest(server, writer.key, 'edit_pad', { pad_id: pad.id, base_version: pad.version, edits: [{ block_id: pad.block, text: `Two, edit ${i}.` }] })),
    );
    server.core.pace.scale = 100;

    const made = replies.flatMap((reply, i) => (reply.status === 200 ? [i] : []));
    const refused = replies.filter((reply) => reply.status !== 200);
    expect(made).toHaveLength(60);
    for (const reply of refused) {
      expect(reply.status, reply.text).toBe(429);
      expect(reply.body).toMatchObject({ error: 'rate_limited', limit: 'writes' });
    }
    // Written together, not one by one.
    expect(grouped).toBeGreaterThan(0);

    // Each made edit is its pad's next version, with its text; each refused one left its pad as it was.
    for (const [i, pad] of pads.entries()) {
      const opened = (await rest(server, owner.key, 'open_pad', { pad_id: pad.id, mode: 'full' })).body;
      const full = { version: opened.data.version, text: String(opened.text) };
      if (made.includes(i)) {
        expect(replies[i]!.body.data).toMatchObject({ pad_id: pad.id, version: pad.version + 1, edit_id: `edt_${pad.id.slice(4)}-${pad.version + 1}` });
        expect(full.version).toBe(pad.version + 1);
        expect(full.text).toContain(`Two, edit ${i}.`);
      } else {
        expect(full.version).toBe(pad.version);
        expect(full.text).not.toContain(`Two, edit ${i}.`);
      }
    }
    // Each made edit is a version of the writer's, undoable as any: the first one taken back, once the
    // writer's minute has passed.
    server.core.pace.now = () => Date.now() + 2 * 60_000;
    const first = made[0]!;
    const undone = await rest(server, writer.key, 'undo_edit', { edit_id: replies[first]!.body.data.edit_id });
    expect(undone.status, undone.text).toBe(200);
  });

  it('counts the edits of a group in their windows as the same edits one by one would', async () => {
    const { writer, pads } = await padsFor('Counted', 65);
    const edit = (i: number) => rest(server, writer.key, 'edit_pad', { pad_id: pads[i]!.id, base_version: pads[i]!.version, edits: [{ block_id: pads[i]!.block, text: `Two, edit ${String(i).padStart(2, '0')}.` }] });
    const windows = async () => {
      const rows = await poke(server, sql.unsafe`
        SELECT (SELECT count(*) FROM pace_rings g, unnest(g.marks) AS m(at) WHERE g.key = ${`w:${writer.id}`} AND m.at > ${Date.now() - 60_000})::int AS writes,
          (SELECT coalesce(sum(weight), 0) FROM pace_marks WHERE key = ${`ps:${writer.id}`})::int AS saved,
          (SELECT count(*) FROM pace_rings g, unnest(g.marks) AS m(at) WHERE g.key = ANY(${sql.array(pads.map((pad) => `pe:${pad.id}`), 'text')}) AND m.at > ${Date.now() - 60_000})::int AS to_pads`);
      return rows.rows[0] as { writes: number; saved: number; to_pads: number };
    };
    server.core.pace.now = () => Date.now();
    server.core.pace.scale = 1;
    try {
      // One edit alone: what it counts in each window.
      expect((await edit(0)).status).toBe(200);
      const one = await windows();
      expect(one).toMatchObject({ writes: 1, to_pads: 1 });
      expect(one.saved).toBeGreaterThan(0);

      // 39 more at once, written together: their windows hold 40 writes, and 40 times the text saved.
      groupedMade = 0;
      const together = await Promise.all(Array.from({ length: 39 }, (_, i) => edit(i + 1)));
      expect(together.map((reply) => reply.status)).toEqual(together.map(() => 200));
      expect(groupedMade).toBeGreaterThan(0);
      expect(await windows()).toEqual({ writes: 40, saved: 40 * one.saved, to_pads: 40 });

      // The writer's minute holds 20 more: of 25 at once, exactly 20 are made and 5 refused, unmade.
      const more = await Promise.all(Array.from({ length: 25 }, (_, i) => edit(i + 40)));
      expect(more.filter((reply) => reply.status === 200)).toHaveLength(20);
      for (const reply of more.filter((reply) => reply.status !== 200)) expect(reply.body).toMatchObject({ error: 'rate_limited', limit: 'writes' });
      expect(await windows()).toMatchObject({ writes: 60, to_pads: 60 });
      // Every ring keeps its marks newest first, whichever way they were written.
      const unordered = await poke(server, sql.unsafe`SELECT count(*)::int AS n FROM pace_rings WHERE marks <> ARRAY(SELECT m FROM unnest(marks) AS m ORDER BY m DESC)`);
      expect(unordered.rows[0]).toEqual({ n: 0 });
    } finally {
      server.core.pace.scale = 100;
    }
  });

  it("writes an owner's edits together, and the one on a pad with an open flag again on its own, settling the flag it fixes", async () => {
    const owner = await registerAgent(server, 'Flag Owner');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Flag Desk' })).body.data;
    const flagger = await registerAgent(server, 'Flagger');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${flagger.id}, 'member')`);
    // Flagging takes a verified account: the flagger's human confirmed an email.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${flagger.id})`);
    const pads: { id: string; version: number; block: string; risks: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const made = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: `Plan ${i}`, text: '# Goals\n\nShip it.\n\n# Risks\n\nNone at all.' })).body.data;
      const full = (await rest(server, owner.key, 'open_pad', { pad_id: made.pad_id, mode: 'full' })).body.data;
      const outline = (await rest(server, owner.key, 'open_pad', { pad_id: made.pad_id })).body.data;
      pads.push({ id: made.pad_id, version: made.version, block: full.blocks[3], risks: outline.sections[1].id });
    }
    const flagged = pads[5]!;

    const editAll = (round: number) =>
      Promise.all(pads.map((pad) => rest(server, owner.key, 'edit_pad', { pad_id: pad.id, base_version: pad.version, edits: [{ block_id: pad.block, text: `The weather could turn (${round}).` }] })));
    const made = (replies: Awaited<ReturnType<typeof editAll>>) => {
      for (const [i, reply] of replies.entries()) {
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body.data).toMatchObject({ pad_id: pads[i]!.id, version: pads[i]!.version + 1 });
        pads[i]!.version = reply.body.data.version;
      }
    };

    // No flag open: the owner's edits are written together, as anyone's.
    groupedMade = 0;
    made(await editAll(1));
    expect(groupedMade).toBeGreaterThan(0);

    // A flag open on one pad: every edit is made, the one of the flagged section in a transaction of its
    // own that settles the flag; no other edit settles anything.
    const thread = await rest(server, flagger.key, 'start_thread', { hub: hub.slug, title: 'Risks are wrong', body: 'There are risks.', pad_id: flagged.id, anchor_block: flagged.risks, flag: true });
    expect(thread.status, thread.text).toBe(200);
    const replies = await editAll(2);
    made(replies);
    expect(replies[5]!.body.text).toContain(`settled the flag of ${thread.body.data.thread_id}`);
    for (const [i, reply] of replies.entries()) if (i !== 5) expect(reply.body.text).not.toContain('settled the flag');
    const row = await poke(server, sql.unsafe`SELECT flag FROM threads WHERE id = ${thread.body.data.thread_id}`);
    expect(row.rows[0]).toEqual({ flag: 'settled' });
  });
});
