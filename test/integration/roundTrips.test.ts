import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgent, rest, startTestServer, stores, type Store, type TestServer } from '../support/server.ts';

/**
 * The fast path of a durable edit: an agent's `edit_pad` sends the store a fixed number of statements,
 * whatever the layers in between. Every statement the server's pg clients send is counted (they
 * still run); the count is the contract the commit hook (server/db/plannedWrite.ts) keeps. What the
 * instance tells other instances after the commit goes over the change feed's connection, batched
 * with other writes' (server/db/changeFeed.ts), and is not on the edit's path.
 */
/** Every statement the server's pg clients send while `counting` is on, for the suite's server. */
function countedServer(store: Store) {
  const counted = { server: undefined as unknown as TestServer, sent: [] as string[], counting: false };
  const query = pg.Client.prototype.query;
  beforeAll(async () => {
    (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      // The change feed's own connection tells other instances after the commit, off the write's path.
      const feed = (this as unknown as { connectionParameters?: { application_name?: string } }).connectionParameters?.application_name === 'dotpad change feed';
      if (counted.counting && !feed) counted.sent.push(typeof config === 'string' ? config : String((config as { text?: string }).text ?? config));
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    };
    counted.server = await startTestServer(store);
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await counted.server?.close();
  });
  return counted;
}

describe.each(stores())('round trips of an agent edit on %s', (store) => {
  const counted = countedServer(store);

  // The limits looked at from memory (the facts read by the warm-up edits are kept a few seconds, and
  // no window was found full), then one statement, with no transaction around it: the version, with the
  // edit's windows counted inside it (`pace_count_or_refuse`). The lock bound a turned-away write needs
  // (SVC_WRITE_WAIT_MS) is every Postgres session's own (database.ts `withLockTimeout`).
  const expected = 1;

  it("a member's edit_pad by block, against the current version, sends a fixed few statements", async () => {
    // A member's edit: an owner's or helper's also looks for flags the edit settles (one statement more).
    const { server, sent } = counted;
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
    counted.counting = true;
    await edit(2);
    counted.counting = false;
    expect(sent, sent.join('\n---\n')).toHaveLength(expected);
    expect(sent[0]).toContain('pace_count_or_refuse(');
  });

  it('an edit into a full window is refused by its one statement and taken back; the next is refused from memory, with none', async () => {
    const { server, sent } = counted;
    const owner = await registerAgent(server, 'Full Owner');
    const agent = await registerAgent(server, 'Full Writer');
    const second = await registerAgent(server, 'Full Second');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Full Window' })).body.data;
    for (const member of [agent, second]) {
      await rest(server, member.key, 'join_hub', { hub: hub.slug });
      expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: member.id })).status).toBe(200);
    }
    const pad = (await rest(server, agent.key, 'create_pad', { hub: hub.slug, title: 'Full', text: 'One.\n\nTwo.' })).body.data;
    const [, block] = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body.data.blocks as string[];
    let version = pad.version as number;
    // Two writers take turns, so that neither runs out of its own writes (60 a minute) before the pad's window.
    const edit = (i: number) => rest(server, (i % 2 ? second : agent).key, 'edit_pad', { pad_id: pad.pad_id, base_version: version, edits: [{ block_id: block, text: `Two, take ${i}.` }] });
    const statementsOf = async (call: () => Promise<Awaited<ReturnType<typeof edit>>>) => {
      sent.length = 0;
      counted.counting = true;
      const reply = await call();
      counted.counting = false;
      return { reply, sent: [...sent] };
    };
    // Agent edits to one pad, 60 a minute, at a twentieth: 3. Edits 3 and 5 are the second writer's.
    server.core.pace.scale = 0.05;
    try {
      for (let i = 0; i < 3; i++) {
        const made = await edit(i);
        expect(made.status, made.text).toBe(200);
        version = made.body.data.version;
      }
      const refused = await statementsOf(() => edit(3));
      expect(refused.reply.status, refused.reply.text).toBe(429);
      expect(refused.reply.body.limit).toBe('agent_edits_to_pad');
      expect(refused.sent).toHaveLength(1);
      const again = await statementsOf(() => edit(5));
      expect(again.reply.status, again.reply.text).toBe(429);
      expect(again.reply.body.limit).toBe('agent_edits_to_pad');
      expect(again.sent).toHaveLength(0);
    } finally {
      server.core.pace.scale = 1;
    }
    const read = (await rest(server, agent.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body;
    expect(read.data.version).toBe(version);
    expect(read.text).toContain('Two, take 2.');
    expect(read.text).not.toContain('Two, take 3.');
  });
});

/**
 * The reads an agent polls (issue 25): `open_hub` in at most one round trip, none while what it read
 * stands unchanged, and `check_inbox`'s page with its count in one.
 */
describe.each(stores())('round trips of the reads an agent polls on %s', (store) => {
  const counted = countedServer(store);
  const statementsOf = async (call: () => Promise<unknown>) => {
    counted.sent.length = 0;
    counted.counting = true;
    await call();
    counted.counting = false;
    return [...counted.sent];
  };

  it('open_hub reads the hub in one statement after a change, and from memory until the next', async () => {
    const { server } = counted;
    const owner = await registerAgent(server, 'Owner');
    const member = await registerAgent(server, 'Member');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Polled' })).body.data;
    await rest(server, member.key, 'join_hub', { hub: hub.slug });
    expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: member.id })).status).toBe(200);
    const openHub = async () => {
      const reply = await rest(server, member.key, 'open_hub', { hub: hub.slug });
      expect(reply.status, reply.text).toBe(200);
      return reply.body.data;
    };
    await openHub();
    // A change drops what was kept: the seat and hub in one statement, the page in another.
    expect((await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'New', body: 'Something new.' })).status).toBe(200);
    const afterChange = await statementsOf(openHub);
    expect(afterChange, afterChange.join('\n---\n')).toHaveLength(2);
    // Unchanged: the seat stays kept; the page too, or (past a second) read again in one statement.
    const unchanged = await statementsOf(openHub);
    expect(unchanged.length, unchanged.join('\n---\n')).toBeLessThanOrEqual(1);
    expect((await openHub()).threads).toHaveLength(1);
  });

  it("check_inbox reads its first page and the unread count in one statement", async () => {
    const { server } = counted;
    const agent = await registerAgent(server, 'Inbox');
    await rest(server, agent.key, 'check_inbox', {});
    const sent = await statementsOf(async () => expect((await rest(server, agent.key, 'check_inbox', {})).status).toBe(200));
    expect(sent, sent.join('\n---\n')).toHaveLength(1);
  });
});
