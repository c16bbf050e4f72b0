// @module-tag heavy
import pg from 'pg';
import { sql } from 'slonik';
import * as Y from 'yjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readBlocks } from '../../sync/blocks.ts';
import { COMPACT_AFTER_UPDATES, loadInto, tailSize } from '../../sync/store.ts';
import { durableStore, openProvider, poke, registerAgent, rest, startTestServer, stores, type Store, type TestServer } from '../support/server.ts';

/** More updates than a load leaves outside the snapshot. */
const UPDATES = COMPACT_AFTER_UPDATES + 100;

/** The pad's text as a provider shows it, once synced. */
async function openedText(server: TestServer, padId: string, key: string): Promise<string> {
  const editor = await openProvider(server, padId, key);
  try {
    await editor.synced;
    return editor.text();
  } finally {
    editor.close();
  }
}

/**
 * A pad whose log holds many updates after its snapshot (a pad edited now and then, in sittings too
 * short for persistence to look at its log) opens cold through a provider with its exact text, and
 * the load folds its log, so the next cold open reads a snapshot: on both stores.
 */
describe.each(stores())('cold open of a pad with a long history on %s', (store: Store) => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it('a pad with more than 500 stored updates opens cold with its exact text, and the load folds its log', async () => {
    const durable = await durableStore(store);
    drops.push(durable.drop);
    // The pad is made through the API on one instance (which keeps it loaded a while), then opened
    // on another, which has never held it.
    const maker = await startTestServer(store, durable.env);
    const agent = await registerAgent(maker, 'Long history');
    const hub = await rest(maker, agent.key, 'create_hub', { name: 'History' });
    const pad = await rest(maker, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Long history', text: 'One.\n\nTwo.\n\nThree.' });
    const padId = pad.body.data.pad_id as string;
    await maker.close();

    const server = await startTestServer(store, durable.env);
    try {
      // The stored updates, one row each as persistence appends them (its update and the state
      // vector it brings the pad to), written in one statement.
      const doc = new Y.Doc();
      await loadInto(server.core.db, padId, doc);
      const updates: Buffer[] = [];
      doc.on('update', (update: Uint8Array) => updates.push(Buffer.from(update)));
      const fragment = doc.getXmlFragment('default');
      for (let i = 0; i < UPDATES; i++) {
        const paragraph = (fragment.get(i % 3) as Y.XmlElement).get(0) as Y.XmlText;
        doc.transact(() => (i % 10 === 9 ? paragraph.delete(paragraph.length - 2, 2) : paragraph.insert(paragraph.length, ` w${i}`)));
      }
      const text = readBlocks(fragment).map((b) => b.text).join('\n\n');
      const vectors = updates.map((update) => Buffer.from(Y.encodeStateVectorFromUpdate(update)));
      await poke(server, sql.unsafe`
        INSERT INTO pad_updates (pad_id, update, state_vector)
        SELECT ${padId}, u.update, u.vector FROM unnest(${sql.array(updates, 'bytea')}::bytea[], ${sql.array(vectors, 'bytea')}::bytea[]) WITH ORDINALITY AS u(update, vector, n)
        ORDER BY u.n`);
      expect((await tailSize(server.core.db.pool, padId)).n).toBe(UPDATES + 1);

      const hocuspocus = server.core.sync.hocuspocus;
      expect(await openedText(server, padId, agent.key)).toBe(text);
      // Folded by the load, off the open's path.
      await expect.poll(async () => (await tailSize(server.core.db.pool, padId)).n).toBe(0);
      const snapshots = await server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM pad_snapshots WHERE pad_id = ${padId}`);
      expect(snapshots).toBe(1);
      await expect.poll(() => hocuspocus.documents.has(padId)).toBe(false);
      // Again cold, from the snapshot, through a new provider.
      expect(await openedText(server, padId, agent.key)).toBe(text);
    } finally {
      await server.close();
    }
  });
});

/**
 * A cold open through a provider reads the connection's access and the pad's log in one statement
 * (sync/readAhead.ts): a pad this instance does not hold is read once, with who may open it. A
 * second connection to the pad while it is open reads the access alone; two at once both sync.
 */
describe.each(stores())('the statements of a cold open on %s', (store: Store) => {
  const drops: (() => Promise<void>)[] = [];
  const query = pg.Client.prototype.query;
  afterAll(async () => {
    pg.Client.prototype.query = query;
    for (const drop of drops) await drop();
  });

  it('a cold open reads the access and the pad in one statement, and an open of a loaded pad the access alone', async () => {
    const durable = await durableStore(store);
    drops.push(durable.drop);
    const maker = await startTestServer(store, durable.env);
    const agent = await registerAgent(maker, 'Cold opener');
    const hub = await rest(maker, agent.key, 'create_hub', { name: 'Cold opens' });
    const text = 'One.\n\nTwo.\n\nThree.';
    const pad = await rest(maker, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Cold', text });
    const padId = pad.body.data.pad_id as string;
    await maker.close();

    // Counted: the statements that read a pad's access (its edit-war marks) or its log.
    const sent: string[] = [];
    (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : String((config as { text?: string }).text ?? '');
      if (/section_marks|pad_updates/.test(text)) sent.push(text);
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    };
    const server = await startTestServer(store, durable.env);
    try {
      const hocuspocus = server.core.sync.hocuspocus;
      const opened = async (statements: number) => {
        sent.length = 0;
        const editor = await openProvider(server, padId, agent.key);
        await editor.synced;
        expect(editor.text()).toBe(text);
        expect(sent, sent.join('\n---\n')).toHaveLength(statements);
        return editor;
      };
      const first = await opened(1);
      expect(sent[0]).toMatch(/section_marks[\s\S]*pad_updates/);
      const second = await opened(1);
      expect(sent[0]).not.toMatch(/pad_updates/);
      first.close();
      second.close();
      await expect.poll(() => hocuspocus.documents.has(padId)).toBe(false);
      (await opened(1)).close();
      await expect.poll(() => hocuspocus.documents.has(padId)).toBe(false);

      // Two at once: each reads ahead, one loads, and both sync with the text.
      const both = await Promise.all([openProvider(server, padId, agent.key), openProvider(server, padId, agent.key)]);
      await Promise.all(both.map((editor) => editor.synced));
      for (const editor of both) expect(editor.text()).toBe(text);
      for (const editor of both) editor.close();
    } finally {
      await server.close();
    }
  });
});
