import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentDoors, type AgentDoor } from '../support/agentDoors.ts';
import { registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Writes whose retry could do a thing twice take `idempotency_key` (SPEC part 4 "Common inputs"):
 * the same key and arguments replay the first answer and write nothing more, through either door.
 */
describe.each(stores())('idempotency keys on writes on %s', (store) => {
  let server: TestServer;
  let doors: ReturnType<typeof agentDoors>;
  let owner: { key: string; id: string };
  let hubSlug: string;
  let threadId: string;
  let padId: string;

  const count = (table: string) => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM ${sql.identifier([table])}`);
  const firstAnswer = ({ replayed: _r, key_shown: _k, ...rest }: Record<string, any>) => rest;

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
    owner = await registerAgent(server, 'Keyed Owner');
    const hub = await rest(server, owner.key, 'create_hub', { name: 'Keyed Desk' });
    hubSlug = hub.body.data.slug;
    threadId = (await rest(server, owner.key, 'start_thread', { hub: hubSlug, title: 'Keyed', body: 'root' })).body.data.thread_id;
    padId = (await rest(server, owner.key, 'create_pad', { hub: hubSlug, title: 'Keyed pad', text: 'One.\n\nTwo.' })).body.data.pad_id;
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  /** Calls twice with one key: the second answer is the first, replayed, and `table` gained one row in all. */
  async function once(door: AgentDoor, tool: string, args: Record<string, unknown>, table: string) {
    const before = await count(table);
    const key = `${tool}-${door}-${Math.random().toString(36).slice(2, 10)}`;
    const first = await doors.call(door, owner, tool, { ...args, idempotency_key: key });
    expect(first.ok, first.text).toBe(true);
    const again = await doors.call(door, owner, tool, { ...args, idempotency_key: key });
    expect(again.ok, again.text).toBe(true);
    expect(again.body.replayed).toBe(true);
    expect(await count(table)).toBe(before + 1);
    const other = await doors.call(door, owner, tool, { ...args, ...(tool === 'create_task' ? { title: 'Something else' } : { uses: 3 }), idempotency_key: key });
    expect(other.ok).toBe(false);
    expect(other.body.error).toBe('conflict');
    expect(await count(table)).toBe(before + 1);
    return { first: first.body, again: again.body };
  }

  for (const door of ['rest', 'mcp'] as const) {
    it(`create_task and invite replay a repeated key through ${door}, and refuse it with other arguments`, async () => {
      const task = await once(door, 'create_task', { thread_id: threadId, title: 'Write the summary' }, 'tasks');
      expect(firstAnswer(task.again)).toEqual(task.first);
      const invite = await once(door, 'invite', { to: hubSlug }, 'invites');
      expect(firstAnswer(invite.again)).toEqual(invite.first);
    });

    it(`a replayed mint_subagent through ${door} does not show or keep the key it made`, async () => {
      const key = `mint-${door}-0001`;
      const args = { thread_ids: [threadId], idempotency_key: key };
      const before = await count('credentials');
      const first = await doors.call(door, owner, 'mint_subagent', args);
      expect(first.ok, first.text).toBe(true);
      const minted = String(first.body.agent_key);
      const again = await doors.call(door, owner, 'mint_subagent', args);
      expect(again.ok, again.text).toBe(true);
      expect(again.body).toMatchObject({ replayed: true, key_shown: 'first answer only', thread_ids: [threadId] });
      expect(again.body.agent_key).toBeUndefined();
      expect(again.text).not.toContain(minted);
      expect(again.text).toContain('call mint_subagent again with a new idempotency_key');
      expect(await count('credentials')).toBe(before + 1);
      const kept = await server.core.db.pool.anyFirst(sql.type(z.object({ result: z.string() }))`SELECT result::text AS result FROM idempotency_keys WHERE key = ${key}`);
      expect(kept).toHaveLength(1);
      expect(kept[0]).not.toContain(minted);
      // The key from the first answer works.
      const read = await rest(server, minted, 'open_thread', { thread_id: threadId });
      expect(read.status).toBe(200);
    });
  }

  it('link new with a key makes one fresh link, and its replay keeps no link code', async () => {
    const links = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM credentials WHERE kind = 'link'`);
    const before = await links();
    const args = { action: 'new', idempotency_key: 'link-new-0001' };
    const first = await rest(server, owner.key, 'link', args);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.link_url).toMatch(/\/link#/);
    const again = await rest(server, owner.key, 'link', args);
    expect(again.body.data).toMatchObject({ status: 'fresh_link', replayed: true, key_shown: 'first answer only' });
    expect(again.body.data.link_url).toBeUndefined();
    expect(again.body.text).not.toContain(first.body.data.link_url.split('#')[1]);
    expect(await links()).toBe(before + 1);
  });

  it('undo_edit with a key undoes once', async () => {
    const pad = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'full' });
    const edit = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: pad.body.data.version, edits: [{ block_id: pad.body.data.blocks[0], text: 'One, changed.' }] });
    const args = { edit_id: edit.body.data.edit_id, idempotency_key: 'undo-key-0001' };
    const versions = await count('pad_versions');
    const first = await rest(server, owner.key, 'undo_edit', args);
    const again = await rest(server, owner.key, 'undo_edit', args);
    expect(first.status).toBe(200);
    expect(again.body.data).toEqual({ ...first.body.data, replayed: true });
    expect(await count('pad_versions')).toBe(versions + 1);
  });
});
