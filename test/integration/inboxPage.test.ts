import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { appTool, poke, registerAgent, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * The inbox items people get in the web app (a request to join, being let in or turned away, a task
 * handed in or done, a message request), and the inbox page's own read and archived marks, which
 * leave check_inbox, its cursor and its acks exactly as they were.
 */
describe.each(stores())('inbox items and the kept inbox page on %s', (store) => {
  let server: TestServer;
  let owner: { cookie: string; id: string };
  let helper: { cookie: string; id: string };
  let hub: { id: string; slug: string };

  const kept = async (who: { cookie: string }, args: Record<string, unknown> = {}) => {
    const reply = await appTool(server, who.cookie, 'ui_inbox', args);
    expect(reply.status).toBe(200);
    return reply.body.view as { items: { id: string; kind: string; from: { id: string }; read: boolean; archived: boolean; waiting: boolean | null; summary: string; hub_slug: string | null }[]; unread: number; next_before: number | null };
  };
  const inboxOf = async (key: string) => (await rest(server, key, 'check_inbox', {})).body.data as { items: { id: string; kind: string; hub_id?: string }[]; unread: number; next_cursor: string };

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await signIn(server, 'Olga', 'olga@example.test');
    helper = await signIn(server, 'Hal', 'hal@example.test');
    const made = await appTool(server, owner.cookie, 'create_hub', { name: 'Quiet room' });
    hub = { id: made.body.data.hub_id, slug: made.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${helper.id}, 'helper')`);
  });
  afterAll(() => server?.close());

  it('tells every owner and helper of a request to join, once; turning away tells the asker and names no hub', async () => {
    const asker = await registerAgent(server, 'Knocker');
    const asked = await rest(server, asker.key, 'join_hub', { hub: hub.slug, note: 'I index release notes.' });
    expect(asked.body.data).toEqual(expect.objectContaining({ status: 'requested' }));
    // Asking again makes no second item.
    await rest(server, asker.key, 'join_hub', { hub: hub.slug, note: 'Again' });
    for (const who of [owner, helper]) {
      const requests = (await kept(who)).items.filter((item) => item.kind === 'join_request');
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ from: { id: asker.id }, waiting: true, read: false, summary: 'I index release notes.', hub_slug: hub.slug });
    }
    // A request to a hub that does not exist answers alike and tells nobody.
    const missing = await rest(server, asker.key, 'join_hub', { hub: 'no-such-hub' });
    expect(missing.body.data).toEqual(asked.body.data);

    const away = await appTool(server, helper.cookie, 'moderate', { hub: hub.slug, action: 'turn_away', who: asker.id });
    expect(away.status).toBe(200);
    const told = (await inboxOf(asker.key)).items.filter((item) => item.kind === 'turned_away');
    expect(told).toHaveLength(1);
    expect(told[0]!.hub_id).toBeUndefined();
    // The request's item stays on the page, answered.
    expect((await kept(owner)).items.find((item) => item.kind === 'join_request' && item.from.id === asker.id)).toMatchObject({ waiting: false });
  });

  it('lets a person in from a request and tells them they are in', async () => {
    const person = await signIn(server, 'Pia', 'pia@example.test');
    await appTool(server, person.cookie, 'join_hub', { hub: hub.slug });
    const request = (await kept(owner)).items.find((item) => item.kind === 'join_request' && item.from.id === person.id)!;
    expect(request.waiting).toBe(true);
    const letIn = await appTool(server, owner.cookie, 'moderate', { hub: hub.slug, action: 'let_in', who: request.from.id });
    expect(letIn.status).toBe(200);
    expect((await kept(person)).items.map((item) => item.kind)).toContain('added');
  });

  it('tells a task’s creator it was handed in or done, and its reviewer to review', async () => {
    const worker = await registerAgent(server, 'Worker');
    const reviewer = await signIn(server, 'Rae', 'rae@example.test');
    for (const id of [worker.id, reviewer.id]) await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${id}, 'member')`);
    const thread = await appTool(server, owner.cookie, 'start_thread', { hub: hub.slug, title: 'Release', body: 'Notes for 2.0' });
    const threadId = thread.body.data.thread_id as string;

    const plain = await appTool(server, owner.cookie, 'create_task', { thread_id: threadId, title: 'Draft the notes', assignee: worker.id });
    await rest(server, worker.key, 'submit_result', { task_id: plain.body.data.task_id, url: 'https://example.org/notes' });
    expect((await kept(owner)).items.filter((item) => item.kind === 'task_done')).toHaveLength(1);

    const reviewed = await appTool(server, owner.cookie, 'create_task', { thread_id: threadId, title: 'Check the notes', assignee: worker.id, reviewer: reviewer.id });
    const taskId = reviewed.body.data.task_id as string;
    await rest(server, worker.key, 'submit_result', { task_id: taskId, url: 'https://example.org/notes-2' });
    expect((await kept(owner)).items.filter((item) => item.kind === 'task_submitted')).toHaveLength(1);
    expect((await kept(reviewer)).items.map((item) => item.kind)).toContain('review');
    const approved = await appTool(server, reviewer.cookie, 'update_task', { task_id: taskId, action: 'approve' });
    expect(approved.status).toBe(200);
    expect((await kept(owner)).items.filter((item) => item.kind === 'task_done')).toHaveLength(2);
    expect((await inboxOf(worker.key)).items.filter((item) => item.kind === 'task_done')).toHaveLength(1);
  });

  it('says a first message from a stranger is a request', async () => {
    const sender = await registerAgent(server, 'Stranger');
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${sender.id})`);
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${sender.id}`);
    const loner = await signIn(server, 'Lone', 'lone@example.test');
    const sent = await rest(server, sender.key, 'start_dm', { with: loner.id, body: 'May I ask about your hub?' });
    expect(sent.body.data.state).toBe('waiting');
    expect((await kept(loner)).items.map((item) => item.kind)).toEqual(['dm_request']);
  });

  it('keeps items read or unread until archived, and leaves check_inbox, its cursor and its acks as they were', async () => {
    const agent = await registerAgent(server, 'Reader');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${agent.id}, 'owner')`);
    // The agent, an owner too, is asked three times: it reads its inbox both ways.
    const askers = await Promise.all(['One', 'Two', 'Three'].map((name) => registerAgent(server, name)));
    for (const asker of askers) await rest(server, asker.key, 'join_hub', { hub: hub.slug });
    const before = await inboxOf(agent.key);
    expect(before.items.map((item) => item.kind)).toEqual(['join_request', 'join_request', 'join_request']);
    expect(before.unread).toBe(3);

    const ids = before.items.map((item) => item.id);
    const asAgent = (tool: string, args: unknown) => rest(server, agent.key, tool, args);
    // The page's tools are the web app's alone, and nobody marks another's items.
    expect((await asAgent('ui_inbox_mark', { action: 'read', item_ids: [ids[0]] })).status).not.toBe(200);
    expect((await appTool(server, owner.cookie, 'ui_inbox_mark', { action: 'archive', item_ids: [ids[0]] })).status).toBe(404);
    expect(await inboxOf(agent.key)).toEqual(before);

    // The agent's own page state, set straight in the table as the web page would (an agent has no
    // session): archived and read items still come from check_inbox, and acking leaves the page's marks.
    await poke(server, sql.unsafe`UPDATE inbox_items SET read_at = now() WHERE id = ${ids[0]!}`);
    await poke(server, sql.unsafe`UPDATE inbox_items SET archived_at = now() WHERE id = ${ids[1]!}`);
    expect(await inboxOf(agent.key)).toEqual(before);
    const acked = await rest(server, agent.key, 'check_inbox', { cursor: before.next_cursor, ack_up_to: before.next_cursor });
    expect(acked.body.data).toMatchObject({ acked: 3, unread: 0, items: [] });
    const marks = await server.core.db.pool.any(sql.type(z.object({ id: z.string(), read: z.boolean(), archived: z.boolean() }))`SELECT id, read_at IS NOT NULL AS read, archived_at IS NOT NULL AS archived FROM inbox_items WHERE id = ANY(${sql.array(ids, 'text')}) ORDER BY seq`);
    expect(marks.map((row) => [row.read, row.archived])).toEqual([[true, false], [false, true], [false, false]]);
  });

  it('marks a person’s own items: read, unread, archive, back, all read, archive the read ones', async () => {
    const person = await signIn(server, 'Mo', 'mo@example.test');
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${person.id}, 'helper')`);
    const askers = await Promise.all(['Ava', 'Ben', 'Cy'].map((name) => signIn(server, name, `${name.toLowerCase()}@example.test`)));
    for (const asker of askers) await appTool(server, asker.cookie, 'join_hub', { hub: hub.slug });
    const cursorBefore = (await appTool(server, person.cookie, 'check_inbox', {})).body.data;

    const page = await kept(person);
    expect(page.items).toHaveLength(3);
    expect(page.unread).toBe(3);
    const [newest, middle, oldest] = page.items.map((item) => item.id);
    const mark = async (action: string, item_ids?: string[]) => (await appTool(server, person.cookie, 'ui_inbox_mark', { action, ...(item_ids ? { item_ids } : {}) })).body.data;

    expect(await mark('read', [newest!])).toMatchObject({ changed: 1, unread: 2 });
    expect(await mark('unread', [newest!])).toMatchObject({ unread: 3 });
    expect(await mark('archive', [oldest!])).toMatchObject({ unread: 2 });
    expect((await kept(person)).items.map((item) => item.id)).toEqual([newest, middle]);
    expect((await kept(person, { archived: true })).items.map((item) => [item.id, item.read, item.archived])).toEqual([[oldest, true, true]]);
    await mark('unarchive', [oldest!]);
    expect((await kept(person)).items.map((item) => item.id)).toEqual([newest, middle, oldest]);

    await mark('read', [middle!]);
    expect(await mark('archive_read')).toMatchObject({ changed: 2, unread: 1 });
    expect((await kept(person)).items.map((item) => item.id)).toEqual([newest]);
    expect(await mark('read_all')).toMatchObject({ changed: 1, unread: 0 });
    // Read and archived stay listed where they belong; pages go by next_before.
    expect((await kept(person, { limit: 1 })).next_before).toBeNull();
    expect((await kept(person, { archived: true, limit: 1 })).next_before).not.toBeNull();

    // Nothing of it touched check_inbox: the same items, unacked, in the same order.
    expect((await appTool(server, person.cookie, 'check_inbox', {})).body.data).toEqual(cursorBefore);
    // Another's item is refused and changes nothing.
    expect((await appTool(server, owner.cookie, 'ui_inbox_mark', { action: 'archive', item_ids: [newest] })).status).toBe(404);
  });
});
