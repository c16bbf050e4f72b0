import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { instancePair, mcpClient, registerAgent, request, rest, startTestServer, stores, type TestServer, poke } from '../support/server.ts';

const Count = z.object({ n: z.number() });

/**
 * The limits slot of the tool pipeline: the 20-a-day allowance of an agent nobody linked (SPEC parts 1,
 * 7 and 8), and the per-IP limit on registration. Both hold under concurrency.
 */
describe.each(stores())('limits on %s', (store) => {
  let server: TestServer;
  let owner: { key: string; id: string };
  let hubSlug: string;
  let threadId: string;

  const postsBy = (id: string) => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM posts WHERE author_id = ${id}`);
  /** An agent that registered itself, seated in the test hub. */
  const unlinkedMember = async (name: string) => {
    const agent = await registerAgent(server, name, { unlinked: true });
    await poke(server, sql.unsafe`
      INSERT INTO hub_members (hub_id, participant_id, role) SELECT id, ${agent.id}, 'member' FROM hubs WHERE slug = ${hubSlug}`);
    return agent;
  };

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await registerAgent(server, 'Linked Owner');
    hubSlug = (await rest(server, owner.key, 'create_hub', { name: 'Limits Desk' })).body.data.slug;
    threadId = (await rest(server, owner.key, 'start_thread', { hub: hubSlug, title: 'Counting', body: 'Start.' })).body.data.thread_id;
  });
  afterAll(() => server?.close());

  it('counts an unlinked agent’s writes, then answers 200 limit_reached with its link and saves nothing', async () => {
    const agent = await unlinkedMember('Counted');
    for (let i = 1; i <= 20; i++) {
      const reply = await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: `Post ${i}` });
      expect(reply.status).toBe(200);
      expect(reply.body.data.allowance).toMatchObject({ used: i, limit: 20, remaining: 20 - i, per: 'day' });
      expect(Date.parse(reply.body.data.allowance.resets_at)).toBeGreaterThan(Date.now());
      expect(reply.headers.get('ratelimit')).toMatch(new RegExp(`^"posts";r=${20 - i};t=\\d+$`));
      expect(reply.headers.get('ratelimit-limit')).toBe('20');
      expect(reply.headers.get('ratelimit-remaining')).toBe(String(20 - i));
    }
    const refused = await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: 'One too many', idempotency_key: 'one-too-many' });
    expect(refused.status).toBe(200);
    expect(refused.body.data).toMatchObject({ limit_reached: true, allowance: { used: 20, remaining: 0, limit: 20 } });
    expect(refused.body.data.link_url).toMatch(new RegExp(`^${server.core.config.baseUrl}/link#svcc_`));
    expect(refused.body.text).toContain(`The next write frees up at ${refused.body.data.allowance.resets_at}`);
    expect(refused.headers.get('ratelimit')).toMatch(/^"posts";r=0;t=\d+$/);
    expect(await postsBy(agent.id)).toBe(20);
    // A refused call never burns its idempotency key: nothing was stored under it.
    const keys = await server.core.db.pool.oneFirst(sql.type(Count)`
      SELECT count(*) AS n FROM idempotency_keys WHERE participant_id = ${agent.id} AND key = 'one-too-many'`);
    expect(keys).toBe(0);

    // Every counted write shares the pool, whatever the door and the tool; reads still work.
    const mcp = await mcpClient(server, agent.key);
    const viaMcp = await mcp.callTool({ name: 'start_thread', arguments: { hub: hubSlug, title: 'Late', body: 'Too late.' } });
    expect(viaMcp.isError).toBeFalsy();
    expect(viaMcp.structuredContent).toMatchObject({ limit_reached: true });
    await mcp.close();
    const read = await rest(server, agent.key, 'open_thread', { thread_id: threadId });
    expect(read.status).toBe(200);
    expect(read.body.data.allowance).toBeUndefined();
  });

  it('does not count reactions or joins, nor the writes of people and linked agents', async () => {
    const agent = await unlinkedMember('Reactor');
    const post = await rest(server, owner.key, 'post_reply', { thread_id: threadId, body: 'React to me' });
    expect(post.body.data.allowance).toBeUndefined();
    expect(post.headers.get('ratelimit')).toBeNull();
    const reacted = await rest(server, agent.key, 'react', { post_id: post.body.data.post_id, reaction: 'eyes' });
    expect(reacted.status).toBe(200);
    expect(reacted.body.data.allowance).toBeUndefined();
    const first = await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: 'My first counted write' });
    expect(first.body.data.allowance).toMatchObject({ used: 1, remaining: 19 });
  });

  it('replays a repeated idempotency_key without counting it again', async () => {
    const agent = await unlinkedMember('Retrier');
    const args = { thread_id: threadId, body: 'Said once', idempotency_key: 'retry-me-please' };
    const first = await rest(server, agent.key, 'post_reply', args);
    const again = await rest(server, agent.key, 'post_reply', args);
    expect(again.body.data).toMatchObject({ replayed: true, post_id: first.body.data.post_id });
    const next = await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: 'Said twice' });
    expect(next.body.data.allowance).toMatchObject({ used: 2, remaining: 18 });
  });

  it('admits exactly the writes left when twice as many arrive at once', async () => {
    const agent = await unlinkedMember('Racer');
    for (let i = 0; i < 10; i++) await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: `Warm ${i}` });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => rest(server, agent.key, 'post_reply', { thread_id: threadId, body: `Race ${i}` })),
    );
    expect(replies.map((r) => r.status)).toEqual(new Array(20).fill(200));
    expect(replies.filter((r) => r.body.data.limit_reached === true)).toHaveLength(10);
    expect(replies.filter((r) => r.body.data.post_id !== undefined)).toHaveLength(10);
    expect(await postsBy(agent.id)).toBe(20);
  });

  it('counts live pad edits too: of concurrent edits past the limit, those refused never reach the pad', async () => {
    const agent = await unlinkedMember('Editor');
    const created = await rest(server, owner.key, 'create_pad', {
      hub: hubSlug,
      title: 'Counted pad',
      text: Array.from({ length: 12 }, (_, i) => `Paragraph ${i}.`).join('\n\n'),
    });
    const padId = created.body.data.pad_id;
    const outline = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'full' });
    const blocks: string[] = outline.body.data.blocks;
    for (let i = 0; i < 14; i++) await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: `Filler ${i}` });
    // Six writes left; twelve edits of twelve different paragraphs arrive at once.
    const replies = await Promise.all(
      blocks.map((blockId, i) => rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: created.body.data.version, edits: [{ block_id: blockId, text: `Edited ${i}.` }] })),
    );
    const applied = replies.filter((r) => r.body.data.edit_id !== undefined);
    expect(replies.filter((r) => r.body.data.limit_reached === true)).toHaveLength(6);
    expect(applied).toHaveLength(6);
    const after = await rest(server, owner.key, 'open_pad', { pad_id: padId, mode: 'full' });
    expect(after.body.data.version).toBe(created.body.data.version + 6);
    const edited = after.body.text.match(/Edited \d+\./g) ?? [];
    expect(edited).toHaveLength(6);
    const markdown = await request(`${server.url}/p/${padId}.md`, { headers: { authorization: `Bearer ${owner.key}` } });
    expect(markdown.text.match(/Edited \d+\./g) ?? []).toHaveLength(6);
  });

  it('limits registration per network: of 2N at once, exactly N get a key, the rest 429 with Retry-After', { tags: ['heavy'] }, async () => {
    // Each server counts anew; this one has had a few registrations from 127.0.0.1 already.
    const fresh = await startTestServer(store);
    try {
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          request(`${fresh.url}/api/v1/agents/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Crowd ${i}` }),
          }),
        ),
      );
      const admitted = replies.filter((r) => r.status === 201);
      const refused = replies.filter((r) => r.status === 429);
      expect(admitted).toHaveLength(30);
      expect(refused).toHaveLength(30);
      for (const reply of refused) {
        expect(reply.body).toMatchObject({ error: 'rate_limited' });
        expect(reply.body.retry_after_seconds).toBeGreaterThan(0);
        expect(reply.headers.get('retry-after')).toBe(String(reply.body.retry_after_seconds));
        expect(reply.headers.get('ratelimit')).toBe(`"ip";r=0;t=${reply.body.retry_after_seconds}`);
      }
      const agents = await fresh.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM participants WHERE kind = 'agent'`);
      expect(agents).toBe(30);
    } finally {
      await fresh.close();
    }
  });
});

/** Limits hold across instances: the allowance in Postgres, the per-IP counts in Redis. */
const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
describe.skipIf(!databaseUrl || !redisUrl)('limits across two instances', { tags: ['heavy'] }, () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });
  // Each pair has a database of its own, so its per-IP counts in Redis are its own (ipLimitNamespace):
  // registrations counted by earlier runs on this Redis do not stand in its window.
  const pair = () => instancePair(redisUrl!, closers);

  it('admits exactly the writes left when they alternate between the instances', async () => {
    const [a, b] = await pair();
    const owner = await registerAgent(a, 'Pair Owner');
    const hub = (await rest(a, owner.key, 'create_hub', { name: 'Pair Desk' })).body.data;
    const thread = (await rest(a, owner.key, 'start_thread', { hub: hub.slug, title: 'Pairs', body: 'Go.' })).body.data.thread_id;
    const agent = await registerAgent(b, 'Pair Counter', { unlinked: true });
    await poke(a, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${agent.id}, 'member')`);
    for (let i = 0; i < 10; i++) await rest(i % 2 ? a : b, agent.key, 'post_reply', { thread_id: thread, body: `Warm ${i}` });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => rest(i % 2 ? a : b, agent.key, 'post_reply', { thread_id: thread, body: `Race ${i}` })),
    );
    expect(replies.filter((r) => r.body.data.post_id !== undefined)).toHaveLength(10);
    expect(replies.filter((r) => r.body.data.limit_reached === true)).toHaveLength(10);
    const posts = await a.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM posts WHERE author_id = ${agent.id}`);
    expect(posts).toBe(20);
  });

  it('counts registrations per network in Redis, so two instances share one limit', async () => {
    const [a, b] = await pair();
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        request(`${(i % 2 ? a : b).url}/api/v1/agents/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Shared ${i}` }),
        }),
      ),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(30);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(30);
  });
});

