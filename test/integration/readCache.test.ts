import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { mcpClient, registerAgent, request, rest, startTestServer, stores, type TestServer, poke } from '../support/server.ts';

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

  it("answers each reader of a kept hub page by their own seat, and shows a change to the hub, a seat or a request in the next read", async () => {
    const hubOwner = await registerAgent(server, 'Hub owner');
    const reader = await registerAgent(server, 'Hub reader');
    const asker = await registerAgent(server, 'Hub asker');
    const made = (await rest(server, hubOwner.key, 'create_hub', { name: 'Kept hub page' })).body.data;
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${made.hub_id}, ${reader.id}, 'member')`);
    // Over MCP, whose answer is encoded from what the kept page's answer encoded once, and over REST.
    const clients = new Map<string, Awaited<ReturnType<typeof mcpClient>>>();
    const openHub = async (key: string) => {
      const client = clients.get(key) ?? (await mcpClient(server, key));
      clients.set(key, client);
      const over = (await client.callTool({ name: 'open_hub', arguments: { hub: made.slug } })) as { content: { text: string }[]; structuredContent: Record<string, any>; isError?: boolean };
      const rested = await rest(server, key, 'open_hub', { hub: made.slug });
      expect(over.structuredContent).toEqual(rested.body.data ?? rested.body);
      if (over.isError) return { text: over.content[0]!.text, data: over.structuredContent };
      expect(over.content[0]!.text).toBe(rested.body.text);
      return { text: rested.body.text as string, data: rested.body.data };
    };
    try {
      expect((await rest(server, asker.key, 'join_hub', { hub: made.slug, note: 'Let me in.' })).body.data.status).toBe('requested');
      // Alternately, so that each reads the page the other's read kept.
      for (let round = 0; round < 2; round++) {
        const owners = await openHub(hubOwner.key);
        expect(owners.data.seat).toEqual({ role: 'owner' });
        expect(owners.data.requests.map((r: { id: string }) => r.id)).toEqual([asker.id]);
        expect(owners.text).toContain('## Waiting to join (1)');
        const readers = await openHub(reader.key);
        expect(readers.data.seat).toEqual({ role: 'member' });
        expect(readers.data.requests).toBeUndefined();
        expect(readers.text).not.toContain('Waiting to join');
        expect(readers.data.members.map((m: { id: string }) => m.id)).toEqual([hubOwner.id, reader.id]);
      }

      // A helper now: the requests are theirs to see from the next read, on the page the owner reads too.
      expect((await rest(server, hubOwner.key, 'moderate', { hub: made.slug, action: 'name_helper', who: reader.id })).status).toBe(200);
      for (let round = 0; round < 2; round++) {
        const helpers = await openHub(reader.key);
        expect(helpers.data.seat).toEqual({ role: 'helper' });
        expect(helpers.data.requests.map((r: { id: string }) => r.id)).toEqual([asker.id]);
        expect(helpers.text).toContain('your seat: helper');
        expect((await openHub(hubOwner.key)).data.seat).toEqual({ role: 'owner' });
      }

      expect((await rest(server, hubOwner.key, 'set_hub_guide', { hub: made.slug, text: 'Read this first, kept or not.' })).status).toBe(200);
      expect((await rest(server, hubOwner.key, 'moderate', { hub: made.slug, action: 'let_in', who: asker.id })).status).toBe(200);
      for (const key of [hubOwner.key, reader.key, asker.key]) {
        const read = await openHub(key);
        expect(read.text).toContain('Read this first, kept or not.');
        expect(read.data.members.map((m: { id: string }) => m.id)).toEqual([hubOwner.id, reader.id, asker.id]);
        expect(read.data.requests ?? []).toEqual([]);
      }

      // Removed: nothing more of the hub, though its page was kept a moment ago.
      expect((await rest(server, hubOwner.key, 'moderate', { hub: made.slug, action: 'remove', who: reader.id })).status).toBe(200);
      expect((await openHub(reader.key)).data.error).toBe('not_found');
      expect((await openHub(hubOwner.key)).data.members.map((m: { id: string }) => m.id)).toEqual([hubOwner.id, asker.id]);
    } finally {
      await Promise.all([...clients.values()].map((client) => client.close()));
    }
  });
});
