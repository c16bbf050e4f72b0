import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { registerAgent, request, rest, startTestServer, stores, type TestServer, poke } from '../support/server.ts';

/**
 * Pages of posts are kept by thread version (server/core/threads/posts.ts `postPages`): a page read once is
 * not loaded again while the thread is unchanged. These reads come after the same page was read, so
 * a kept page that outlived its version, or kept what the version does not cover, shows here.
 */
describe.each(stores())('reads after a kept page on %s', (store) => {
  let server: TestServer;
  let owner: { key: string; id: string };
  let member: { key: string; id: string };
  let hub: { id: string; slug: string };

  const openThread = async (threadId: string, key = member.key) => {
    const reply = await rest(server, key, 'open_thread', { thread_id: threadId });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const markdown = async (threadId: string) => {
    const reply = await request(`${server.url}/t/${threadId}.md`, { headers: { authorization: `Bearer ${member.key}` } });
    expect(reply.status).toBe(200);
    return reply.text;
  };

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await registerAgent(server, 'Owner');
    member = await registerAgent(server, 'Member');
    const created = await rest(server, owner.key, 'create_hub', { name: 'Kept pages' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${member.id}, 'member')`);
  });
  afterAll(() => server?.close());

  it('shows a reaction, an answer mark and a new post at once, in open_thread and the Markdown view', async () => {
    const started = await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Kept', body: 'The first post.' });
    const threadId = started.body.data.thread_id as string;
    const postId = started.body.data.post_id as string;
    const read = async () => ({ tool: await openThread(threadId), view: await markdown(threadId) });

    const before = await read();
    expect(before.tool.data.posts[0].reactions).toBeUndefined();
    expect(before.view).not.toContain('❤️ 1');
    expect((await read()).view).toBe(before.view);

    expect((await rest(server, member.key, 'react', { post_id: postId, reaction: 'heart' })).status).toBe(200);
    const reacted = await read();
    expect(reacted.tool.data.posts[0].reactions).toEqual({ heart: 1 });
    expect(reacted.view).toContain('❤️ 1');

    expect((await rest(server, owner.key, 'mark_answer', { post_id: postId })).status).toBe(200);
    const marked = await read();
    expect(marked.tool.data.posts[0].is_answer).toBe(true);
    expect(marked.view).toContain('**marked as the answer**');

    expect((await rest(server, member.key, 'post_reply', { thread_id: threadId, body: 'A later post.' })).status).toBe(200);
    const replied = await read();
    expect(replied.tool.data.posts.map((p: { seq: number }) => p.seq)).toEqual([1, 2]);
    expect(replied.view).toContain('A later post.');
  });

  it("reads open_thread's members' seats and the thread's pads afresh, which the version does not cover", async () => {
    const started = await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Seats', body: 'Who is here?' });
    const threadId = started.body.data.thread_id as string;
    await rest(server, member.key, 'post_reply', { thread_id: threadId, body: 'I am.' });
    const before = await openThread(threadId);
    expect(before.data.members).toContainEqual({ id: member.id, kind: 'agent', role: 'member' });
    expect(before.data.pads).toEqual([]);

    await poke(server, sql.unsafe`UPDATE hub_members SET role = 'helper' WHERE hub_id = ${hub.id} AND participant_id = ${member.id}`);
    const pad = await rest(server, owner.key, 'create_pad', { thread_id: threadId, title: 'Notes', text: 'One line.' });
    expect(pad.status).toBe(200);
    const after = await openThread(threadId);
    expect(after.data.version).toBe(before.data.version);
    expect(after.data.members).toContainEqual({ id: member.id, kind: 'agent', role: 'helper' });
    expect(after.data.pads).toEqual([{ id: pad.body.data.pad_id, version: 1 }]);
    await poke(server, sql.unsafe`UPDATE hub_members SET role = 'member' WHERE hub_id = ${hub.id} AND participant_id = ${member.id}`);
  });
});
