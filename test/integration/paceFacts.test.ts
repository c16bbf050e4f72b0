import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factsOf, type FactsAsked } from '../../server/core/limits/paceRules.ts';
import { poke, registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * The limits' facts of many writes read by one statement (`factsOf`) answer each write as it would be
 * answered alone. Whether someone else takes part is asked once per place and human, however many of
 * that human's writes are read together: each answer must still be its own write's.
 */
describe.each(stores())('the facts of several writes at once on %s', (store) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers each write as alone, whatever else is read with it', async () => {
    const agent = await registerAgent(server, 'Facts Agent');
    const outsider = await registerAgent(server, 'Facts Outsider');
    const humanOf = (id: string) => server.core.db.pool.oneFirst(sql.type(z.object({ linked_human: z.string() }))`SELECT linked_human FROM participants WHERE id = ${id}`);
    const human = await humanOf(agent.id);
    const alone = (await rest(server, agent.key, 'create_hub', { name: 'Facts Alone' })).body.data.hub_id as string;
    const shared = (await rest(server, agent.key, 'create_hub', { name: 'Facts Shared' })).body.data.hub_id as string;
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${shared}, ${outsider.id}, 'member')`);

    const write = (over: Partial<FactsAsked>): FactsAsked => ({ actorId: agent.id, agent: true, human, hub: alone, thread: null, withShared: true, ...over });
    const asked = [
      write({}),
      write({ hub: shared }),
      write({}),
      write({ hub: shared, withShared: false }),
      write({ actorId: outsider.id, human: await humanOf(outsider.id), hub: alone }),
      write({ hub: null }),
    ];
    const now = Date.now();
    const together = await factsOf(server.core.db.pool, asked, now);
    expect(together.map((facts) => facts.shared)).toEqual([false, true, false, false, true, false]);
    for (const [i, one] of asked.entries()) expect(together[i]).toEqual((await factsOf(server.core.db.pool, [one], now))[0]);
  });
});
