import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { afterCommit } from '../../server/db/afterCommit.ts';
import { authenticateBearer } from '../../server/core/identity/credentials.ts';
import { revokeCredentials } from '../../server/core/identity/keys.ts';
import { openProvider, registerAgent, rest, startTestServer, typeInto, type TestServer } from '../support/server.ts';

/**
 * A NOTIFY takes one lock over the whole database while its transaction commits: a write transaction
 * that notifies lets one such write commit at a time, however many run. No write notifies inside its
 * transaction: the instance that wrote tells the others after the commit, over the change feed's own
 * connection (pad versions, posts, threads, inbox items, tasks, seats, ended credentials). Heard
 * here: every notification of those writes comes from that connection, never from a pool connection
 * that ran the write. Postgres only (the embedded store has no NOTIFY); in CI Postgres is required.
 */
const databaseUrl = process.env.TEST_DATABASE_URL;
if (process.env.CI === 'true' && !databaseUrl) throw new Error('CI=true needs TEST_DATABASE_URL: the notification suite may not be skipped.');

type Heard = { channel: string; payload: string; pid: number };

describe.skipIf(!databaseUrl)('writes notify only after their commit', () => {
  let server: TestServer;
  let listener: pg.Client;
  const heard: Heard[] = [];
  beforeAll(async () => {
    server = await startTestServer('postgres');
    listener = new pg.Client({ connectionString: server.core.config.databaseUrl });
    await listener.connect();
    listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload ?? '', pid: n.processId }));
    await listener.query('LISTEN dotpad_waits; LISTEN dotpad_reads; LISTEN dotpad_credentials');
  });
  afterAll(async () => {
    await listener?.end();
    await server?.close();
  });

  /** The application each backend that sent a notification belongs to. */
  const senders = async (pids: number[]) => {
    const { rows } = await listener.query<{ pid: number; application_name: string }>('SELECT pid, application_name FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids]);
    return new Map(rows.map((row) => [row.pid, row.application_name]));
  };

  it('edit_pad, live typing and undo, in a pad of a hub and of a thread, notify from the change feed alone', async () => {
    const agent = await registerAgent(server, 'Notifier');
    const hub = (await rest(server, agent.key, 'create_hub', { name: 'Notifies' })).body.data;
    const thread = (await rest(server, agent.key, 'start_thread', { hub: hub.slug, title: 'About a pad', body: 'A pad beside this thread.' })).body.data;
    const loose = (await rest(server, agent.key, 'create_pad', { hub: hub.slug, title: 'Loose', text: 'One.\n\nTwo.' })).body.data;
    const beside = (await rest(server, agent.key, 'create_pad', { thread_id: thread.thread_id, title: 'Beside', text: 'Three.\n\nFour.' })).body.data;
    const provider = await openProvider(server, loose.pad_id, agent.key);
    await provider.synced;
    const [first] = provider.blocks();
    await expect.poll(() => heard.some((h) => h.payload === 'pads')).toBe(true);
    heard.length = 0;

    const edit = async (padId: string, version: number, text: string) => {
      const blocks = (await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' })).body.data.blocks as string[];
      const out = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: String(blocks[0]), text }] });
      expect(out.status).toBe(200);
      return out.body.data as { version: number; edit_id: string };
    };
    await edit(loose.pad_id, 1, 'One, edited.');
    const besideEdit = await edit(beside.pad_id, 1, 'Three, edited.');
    typeInto(provider.document, provider.fragment, first!.id, 'end', ' Typed live.');
    await expect.poll(async () => (await rest(server, agent.key, 'open_pad', { pad_id: loose.pad_id })).body.data.version, { timeout: 15_000 }).toBe(3);
    expect((await rest(server, agent.key, 'undo_edit', { edit_id: besideEdit.edit_id })).status).toBe(200);

    // Every write told the others: the pads' waits and the thread's kept readings.
    await expect.poll(() => heard.filter((h) => h.payload === `pad:${loose.pad_id}`).length).toBeGreaterThan(0);
    await expect.poll(() => heard.some((h) => h.payload === `pad:${beside.pad_id}`)).toBe(true);
    await expect.poll(() => heard.some((h) => h.channel === 'dotpad_reads' && h.payload === 'pads')).toBe(true);
    // ... and only over the change feed's connection, outside the writes' transactions.
    const names = await senders([...new Set(heard.map((h) => h.pid))]);
    for (const h of heard) expect({ ...h, sender: names.get(h.pid) }).toEqual({ ...h, sender: 'dotpad change feed' });
    provider.close();
  });
  it('a thread, a post with a mention, a DM, a task, a member removed and keys ended notify from the change feed alone', async () => {
    const owner = await registerAgent(server, 'Owner');
    const member = await registerAgent(server, 'Member');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Notifies Too' })).body.data;
    await rest(server, member.key, 'join_hub', { hub: hub.slug });
    expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: member.id })).status).toBe(200);
    await expect.poll(() => heard.some((h) => h.payload === 'hub_members')).toBe(true);
    heard.length = 0;
    // Heard since the step began (`from`), so that each step is shown to notify on its own.
    let from = 0;
    const step = () => (from = heard.length);
    const expectHeard = (channel: string, payload: string) => expect.poll(() => heard.slice(from).some((h) => h.channel === channel && h.payload === payload)).toBe(true);

    const thread = (await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Heard', body: 'A thread others hear of.' })).body.data;
    await expectHeard('dotpad_waits', `thread:${thread.thread_id}`);
    await expectHeard('dotpad_reads', 'threads');
    await expectHeard('dotpad_reads', 'hubs');
    step();
    const reply = await rest(server, owner.key, 'post_reply', { thread_id: thread.thread_id, body: `Over to you, ${member.handle}.` });
    expect(reply.status, reply.text).toBe(200);
    await expectHeard('dotpad_waits', `inbox:${member.id}`);

    step();
    expect((await rest(server, member.key, 'start_dm', { with: owner.handle, body: 'A word in private.' })).status).toBe(200);
    await expectHeard('dotpad_waits', `inbox:${owner.id}`);

    step();
    const task = await rest(server, owner.key, 'create_task', { thread_id: thread.thread_id, title: 'Hear this', assignee: member.id });
    expect(task.status, task.text).toBe(200);
    await expectHeard('dotpad_waits', `inbox:${member.id}`);
    await expectHeard('dotpad_waits', `thread:${thread.thread_id}`);

    const before = (await authenticateBearer(server.core, owner.key)).credentialId;
    step();
    expect((await rest(server, owner.key, 'rotate_key', {})).status).toBe(200);
    await expectHeard('dotpad_credentials', before);

    step();
    expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'remove', who: member.id })).status).toBe(200);
    await expectHeard('dotpad_reads', 'hub_members');

    const revoked = (await authenticateBearer(server.core, member.key)).credentialId;
    step();
    await revokeCredentials(server.core, [revoked]);
    await expectHeard('dotpad_credentials', revoked);

    const names = await senders([...new Set(heard.map((h) => h.pid))]);
    for (const h of heard) expect({ ...h, sender: names.get(h.pid) }).toEqual({ ...h, sender: 'dotpad change feed' });
  });
  it('a write that rolls back announces nothing, and one that commits announces once it has', async () => {
    const { db } = server.core;
    const marker = `thr_told_${Date.now()}`;
    await expect(
      db.write(async (tx) => {
        afterCommit(tx, { wake: `thread:${marker}-rolled-back` });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // One announcement goes out after the other, so once the second is heard the first would have been.
    await db.writeStatement(async (conn) => afterCommit(conn, { wake: `thread:${marker}-committed` }));
    await expect.poll(() => heard.some((h) => h.payload === `thread:${marker}-committed`)).toBe(true);
    expect(heard.filter((h) => h.payload.includes(marker)).map((h) => h.payload)).toEqual([`thread:${marker}-committed`]);
    // Outside a write of Db there is nobody to announce after a commit.
    expect(() => afterCommit(db.pool, { reads: 'threads' })).toThrow(/afterCommit needs the connection of a write/);
  });
});
