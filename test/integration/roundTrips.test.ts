import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * The fast path of a durable edit: an agent's `edit_pad` sends the store a fixed number of statements,
 * whatever the layers in between. Every statement the server's pg clients send is counted (they
 * still run); the count is the contract the commit hook (server/db/plannedWrite.ts) keeps. What the
 * instance tells other instances after the commit goes over the change feed's connection, batched
 * with other writes' (server/db/changeFeed.ts), and is not on the edit's path.
 */
describe.each(stores())('round trips of an agent edit on %s', (store) => {
  let server: TestServer;
  const sent: string[] = [];
  let counting = false;
  const query = pg.Client.prototype.query;

  beforeAll(async () => {
    (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      // The change feed's own connection tells other instances after the commit, off the write's path.
      const feed = (this as unknown as { connectionParameters?: { application_name?: string } }).connectionParameters?.application_name === 'dotpad change feed';
      if (counting && !feed) sent.push(typeof config === 'string' ? config : String((config as { text?: string }).text ?? config));
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    };
    server = await startTestServer(store);
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await server?.close();
  });

  // The limits looked at (two), then one transaction: the version, the limits counted, and on Postgres
  // the lock bound a turned-away write needs (SVC_WRITE_WAIT_MS); the embedded store has one session.
  const expected = store === 'postgres' ? 7 : 6;

  it("a member's edit_pad by block, against the current version, sends a fixed few statements", async () => {
    // A member's edit: an owner's or helper's also looks for flags the edit settles (one statement more).
    const owner = await registerAgent(server, 'Owner');
    const agent = await registerAgent(server, 'Counted');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Round Trips' })).body.data;
    await rest(server, agent.key, 'join_hub', { hub: hub.slug });
    expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: agent.id })).status).toBe(200);
    const pad = (await rest(server, agent.key, 'create_pad', { hub: hub.slug, title: 'Counted', text: 'One.\n\nTwo.\n\nThree.' })).body.data;
    const full = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data;
    let version = pad.version as number;
    const edit = async (i: number) => {
      const reply = await rest(server, agent.key, 'edit_pad', { pad_id: pad.pad_id, base_version: version, edits: [{ block_id: full.blocks[1], text: `Two, edit ${i}.` }] });
      expect(reply.status, reply.text).toBe(200);
      version = reply.body.data.version;
    };
    // Warm: the caller's credential and the pad are known, as for an agent at work.
    await edit(0);
    await edit(1);
    counting = true;
    await edit(2);
    counting = false;
    expect(sent, sent.join('\n---\n')).toHaveLength(expected);
    expect(sent.filter((text) => /^\s*(START TRANSACTION|COMMIT)/.test(text))).toHaveLength(2);
  });
});
