import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import * as Y from 'yjs';
import { z } from 'zod';
import { recordVersions } from '../../sync/versions.ts';
import { appTool, personClient, poke, registerAgent, rest, signIn, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

/**
 * Live versions of several pads written by one statement (sync/liveVersionBatch.ts, `recordVersions`):
 * each pad's version is written or not on its own, and typing on several pads at once is versioned
 * and attributed on each as when it is written pad by pad.
 */
describe.each(stores())('live versions written together on %s', (store) => {
  let server: TestServer;
  let agent: { key: string; id: string };
  let ada: { cookie: string; id: string };
  let hub: { id: string; slug: string };

  const newPad = async (text: string) => {
    const created = await rest(server, agent.key, 'create_pad', { hub: hub.slug, title: 'Batch', text });
    expect(created.status).toBe(200);
    const padId = created.body.data.pad_id as string;
    const blocks = (await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' })).body.data.blocks as string[];
    return { padId, blocks };
  };
  const Row = z.object({ version: z.number(), kind: z.string(), actor_id: z.string().nullable() });
  const versionsOf = (padId: string) => server.core.db.pool.any(sql.type(Row)`SELECT version, kind, actor_id FROM pad_versions WHERE pad_id = ${padId} ORDER BY version`);
  const Count = z.object({ n: z.number() });
  const updatesOf = (padId: string) => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*)::int4 AS n FROM pad_updates WHERE pad_id = ${padId}`);
  const padVersion = (padId: string) => server.core.db.pool.oneFirst(sql.type(z.object({ version: z.number() }))`SELECT version FROM pads WHERE id = ${padId}`);

  beforeAll(async () => {
    server = await startTestServer(store);
    agent = await registerAgent(server, 'Batcher');
    ada = await signIn(server, 'Ada', 'ada@example.test');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Batch Hub' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${agent.id}, 'member')`);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('writes each pad that is at its previous version, and nothing of a pad past it', async () => {
    const a = await newPad('# One\n\nFirst pad.');
    const b = await newPad('# Two\n\nSecond pad.');
    const c = await newPad('Third pad.');
    const update = () => {
      const doc = new Y.Doc();
      doc.getText('t').insert(0, 'x');
      return Y.encodeStateAsUpdate(doc);
    };
    const author = { id: ada.id, kind: 'human' as const };
    const input = (padId: string, previous: number, blockId: string, text: string) => ({
      padId,
      kind: 'live' as const,
      author,
      previous,
      changed: [blockId],
      body: { delta: [[blockId, text] as [string, string]] },
      update: update(),
    });
    const before = { a: await updatesOf(a.padId), b: await updatesOf(b.padId), c: await updatesOf(c.padId) };
    // b is named at a version it is past (it is at 1): its writes are left out, the others' made.
    const recorded = await recordVersions(server.core.db.pool, [
      input(a.padId, 1, a.blocks[1]!, 'First pad, typed.'),
      input(b.padId, 0, b.blocks[1]!, 'Second pad, typed.'),
      input(c.padId, 1, c.blocks[0]!, 'Third pad, typed.'),
    ]);
    expect(recorded).toEqual([{ version: 2, threaded: false }, null, { version: 2, threaded: false }]);
    expect(await versionsOf(a.padId)).toEqual([{ version: 1, kind: 'create', actor_id: agent.id }, { version: 2, kind: 'live', actor_id: ada.id }]);
    expect(await versionsOf(b.padId)).toEqual([{ version: 1, kind: 'create', actor_id: agent.id }]);
    expect(await versionsOf(c.padId)).toEqual([{ version: 1, kind: 'create', actor_id: agent.id }, { version: 2, kind: 'live', actor_id: ada.id }]);
    expect([await padVersion(a.padId), await padVersion(b.padId), await padVersion(c.padId)]).toEqual([2, 1, 2]);
    expect({ a: await updatesOf(a.padId), b: await updatesOf(b.padId), c: await updatesOf(c.padId) }).toEqual({ a: before.a + 1, b: before.b, c: before.c + 1 });
  });

  it('versions typing on several pads at once, each attributed to its typist', async () => {
    const pads = await Promise.all([newPad('Alpha.'), newPad('Beta.'), newPad('Gamma.')]);
    const clients = pads.map(({ padId }) => personClient(server, padId, ada.cookie));
    await Promise.all(clients.map((client) => client.synced));
    pads.forEach(({ blocks }, i) => typeInto(clients[i]!.document, clients[i]!.fragment, blocks[0]!, 'end', ` Typed ${i}.`));
    await Promise.all(clients.map((client) => client.acknowledged()));
    // Every pad's typing versioned now, together.
    await server.core.sync.flush();
    for (const [i, { padId }] of pads.entries()) {
      expect((await versionsOf(padId)).map(({ kind, actor_id }) => [kind, actor_id])).toEqual([
        ['create', agent.id],
        ['live', ada.id],
      ]);
      const read = await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' });
      expect(read.body.text).toContain(`${['Alpha', 'Beta', 'Gamma'][i]}. Typed ${i}.`);
    }
    for (const client of clients) client.provider.destroy();
  });
});
