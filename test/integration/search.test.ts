import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { appTool, mcpClient, poke, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

type Hit = { type: string; id: string; hub: string; thread_id?: string; state: string; link: string };

/** search_dotpad and the Markdown /search (SPEC parts 4 and 8), through REST, MCP, the web app and Markdown. */
describe.each(stores())('search on %s', (store) => {
  let server: TestServer;
  let owner: { key: string; id: string };
  let outsider: { key: string; id: string };
  let person: { cookie: string; id: string };
  let hub: { id: string; slug: string };
  let open: { id: string; slug: string };
  let quokkaThread: string;
  let quokkaPost: string;
  let quokkaPad: string;
  let otherThread: string;
  let walrusThread: string;
  let ownerMcp: Client;
  let outsiderMcp: Client;

  const find = async (key: string, q: string, extra: Record<string, unknown> = {}) => {
    const reply = await rest(server, key, 'search_dotpad', { q, ...extra });
    expect(reply.status, reply.text).toBe(200);
    return reply.body as { text: string; data: { results: Hit[]; next_cursor?: string } };
  };
  const viaMcp = async (client: Client, q: string) => {
    const reply = await client.callTool({ name: 'search_dotpad', arguments: { q } });
    expect(reply.isError).toBeFalsy();
    return (reply.structuredContent as { results: Hit[] }).results;
  };
  const ids = (hits: Hit[]) => hits.map((hit) => hit.id).sort();
  const markdown = (query: string, headers: Record<string, string> = {}) => request(`${server.url}/search?${query}`, { headers: { accept: 'text/markdown', ...headers } });

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    owner = await registerAgent(server, 'Searcher');
    outsider = await registerAgent(server, 'Outsider');
    person = await signIn(server, 'Seated Person', 'seated-search@example.com');
    const made = await rest(server, owner.key, 'create_hub', { name: 'Zebra crossing' });
    hub = { id: made.body.data.hub_id, slug: made.body.data.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${person.id}, 'member')`);
    const started = await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Quokka migration plan', body: 'Where do the marsupials go next spring?' });
    quokkaThread = started.body.data.thread_id;
    quokkaPost = (await rest(server, owner.key, 'post_reply', { thread_id: quokkaThread, body: 'The quokkas move northward tomorrow, with the wombats.' })).body.data.post_id;
    otherThread = (await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Lunch orders', body: 'Sandwiches for everyone.' })).body.data.thread_id;
    quokkaPad = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Quokka field notes', text: 'Notes.' })).body.data.pad_id;
    const second = await rest(server, owner.key, 'create_hub', { name: 'Walrus commons' });
    open = { id: second.body.data.hub_id, slug: second.body.data.slug };
    walrusThread = (await rest(server, owner.key, 'start_thread', { hub: open.slug, title: 'Walrus census', body: 'Counting tusks.' })).body.data.thread_id;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${open.id}`);
    ownerMcp = await mcpClient(server, owner.key);
    outsiderMcp = await mcpClient(server, outsider.key);
  });
  afterAll(async () => {
    await ownerMcp?.close();
    await outsiderMcp?.close();
    await server?.close();
  });

  it('is a read, open world, in tools/list', async () => {
    const { tools } = await ownerMcp.listTools();
    const tool = tools.find((t) => t.name === 'search_dotpad');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true, destructiveHint: false });
  });

  it('finds hubs, threads, pads and posts by word prefixes, grouped by kind, at once after the write', async () => {
    const { text, data } = await find(owner.key, 'quok');
    expect(ids(data.results)).toEqual([quokkaThread, quokkaPost, quokkaPad].sort());
    expect(data.results.find((hit) => hit.id === quokkaPost)).toMatchObject({ type: 'post', thread_id: quokkaThread, hub: hub.slug, state: 'open' });
    // Grouped: each kind under its heading; participant text fenced.
    expect(text.indexOf('## Pads')).toBeGreaterThan(-1);
    expect(text.indexOf('## Pads')).toBeLessThan(text.indexOf('## Threads'));
    expect(text.indexOf('## Threads')).toBeLessThan(text.indexOf('## Posts'));
    expect(text).toContain('~~~markdown\nThe quokkas move northward tomorrow');
    // Every word must match (as a prefix), case aside.
    expect(ids((await find(owner.key, 'QUOKKAS WOMB')).data.results)).toEqual([quokkaPost]);
    expect((await find(owner.key, 'quokkas giraffe')).data.results).toEqual([]);
    // The hub by its name; a new post is found in the same breath as it is written.
    expect(ids((await find(owner.key, 'zebra')).data.results)).toEqual([hub.id]);
    const fresh = (await rest(server, owner.key, 'post_reply', { thread_id: otherThread, body: 'Xylophonic sandwiches arrive.' })).body.data.post_id;
    expect(ids((await find(owner.key, 'xylophon')).data.results)).toEqual([fresh]);
    // The same over MCP.
    expect(ids(await viaMcp(ownerMcp, 'quok'))).toEqual([quokkaThread, quokkaPost, quokkaPad].sort());
  });

  it('filters: type:, in:posts, hub:, is:', async () => {
    expect(ids((await find(owner.key, 'quok type:thread')).data.results)).toEqual([quokkaThread]);
    expect(ids((await find(owner.key, 'quok type:pad type:thread')).data.results)).toEqual([quokkaThread, quokkaPad].sort());
    expect(ids((await find(owner.key, 'quok in:posts')).data.results)).toEqual([quokkaPost]);
    expect(ids((await find(owner.key, `census hub:${open.slug}`)).data.results)).toEqual([walrusThread]);
    expect((await find(owner.key, `census hub:${hub.slug}`)).data.results).toEqual([]);
    expect(ids((await find(owner.key, 'quok is:open')).data.results)).toEqual([quokkaThread, quokkaPost].sort());
    expect((await find(owner.key, 'quok is:answered')).data.results).toEqual([]);
    const tasks = await find(owner.key, 'quok type:task');
    expect(tasks.data.results).toEqual([]);
    expect(tasks.text).toContain('not searchable yet');
    // Filters alone browse what they name.
    expect(ids((await find(owner.key, `type:thread hub:${hub.slug}`)).data.results)).toEqual([quokkaThread, otherThread].sort());
    const bad = await rest(server, owner.key, 'search_dotpad', { q: 'quok type:planet' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid' });
    expect(bad.body.message).toContain('type: takes hub, pad, section, thread, task, post');
  });

  it('pages 20 at a time (at most 25) with a cursor, and cuts the query at 200 characters', async () => {
    for (let n = 1; n <= 23; n++) {
      await poke(server, sql.unsafe`INSERT INTO posts (id, thread_id, seq, author_id, body) VALUES (${`msg_page${n}`}, ${otherThread}, ${1000 + n}, ${owner.id}, ${`Pagination marker number ${n}`})`);
    }
    const first = await find(owner.key, 'paginat');
    expect(first.data.results).toHaveLength(20);
    expect(first.data.next_cursor).toEqual(expect.any(String));
    expect(first.text).toContain(`cursor "${first.data.next_cursor}"`);
    const second = await find(owner.key, 'paginat', { cursor: first.data.next_cursor });
    expect(second.data.results).toHaveLength(3);
    expect(second.data.next_cursor).toBeUndefined();
    expect(new Set([...ids(first.data.results), ...ids(second.data.results)]).size).toBe(23);
    expect((await find(owner.key, 'paginat', { limit: 25 })).data.results).toHaveLength(23);
    expect((await rest(server, owner.key, 'search_dotpad', { q: 'paginat', limit: 26 })).status).toBe(400);
    // A cursor belongs to its query.
    const other = await rest(server, owner.key, 'search_dotpad', { q: 'quok', cursor: first.data.next_cursor });
    expect(other.status).toBe(400);
    expect(other.body.message).toContain('another query');
    // Past 200 characters the words are not searched.
    expect(ids((await find(owner.key, `${'a'.repeat(199)} quok`)).data.results)).toEqual([]);
    expect((await find(owner.key, `quok ${'b'.repeat(150)}`)).data.results).toEqual([]);
    expect(ids((await find(owner.key, `quok${' '.repeat(196)}zzz`)).data.results)).toEqual([quokkaThread, quokkaPost, quokkaPad].sort());
  });

  it('never shows a private hub, thread, pad or post to an outsider; public hubs show to everyone', async () => {
    for (const q of ['quok', 'zebra', 'marsupials', 'lunch', 'xylophon', 'paginat']) {
      expect((await find(outsider.key, q)).data.results).toEqual([]);
      expect(await viaMcp(outsiderMcp, q)).toEqual([]);
    }
    expect(ids((await find(outsider.key, 'walrus')).data.results)).toEqual([open.id, walrusThread].sort());
    expect(ids(await viaMcp(outsiderMcp, 'census tusk'))).toEqual([]);
    expect(ids(await viaMcp(outsiderMcp, 'tusk'))).toEqual([(await postOf(walrusThread))]);
  });

  it('a sub-agent key finds only what its grant covers', async () => {
    const minted = await rest(server, owner.key, 'mint_subagent', { thread_ids: [quokkaThread] });
    expect(minted.status).toBe(200);
    const sub = minted.body.data.agent_key as string;
    // The granted thread and its posts; not the hub, nor the pad of the hub, nor the public hub.
    expect(ids((await find(sub, 'quok')).data.results)).toEqual([quokkaThread, quokkaPost].sort());
    expect((await find(sub, 'zebra')).data.results).toEqual([]);
    expect((await find(sub, 'walrus')).data.results).toEqual([]);
    expect((await find(sub, 'lunch')).data.results).toEqual([]);
    const client = await mcpClient(server, sub);
    try {
      expect(ids(await viaMcp(client, 'quok'))).toEqual([quokkaThread, quokkaPost].sort());
      expect(await viaMcp(client, 'paginat')).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('the web app searches with the session, and shows the results grouped', async () => {
    const reply = await appTool(server, person.cookie, 'search_dotpad', { q: 'quok' });
    expect(reply.status).toBe(200);
    expect(reply.body.view.groups.map((group: { type: string }) => group.type)).toEqual(['pad', 'thread', 'post']);
    expect(reply.body.view.groups[1].hits[0]).toMatchObject({ id: quokkaThread, title: 'Quokka migration plan' });
  });

  it('GET /search as Markdown: best match quoted, the table, the cursor; a cookie personalises, a Bearer key does not', async () => {
    const signedOut = await markdown('q=quok');
    expect(signedOut.status).toBe(200);
    expect(signedOut.headers.get('content-type')).toContain('text/markdown');
    expect(signedOut.text).toContain('Nothing you can read matches');
    expect(signedOut.text).not.toContain('Quokka');
    expect(signedOut.headers.get('cache-control')).toBe('public, max-age=15');

    const withKey = await markdown('q=quok', { authorization: `Bearer ${owner.key}` });
    expect(withKey.status).toBe(200);
    expect(withKey.text).not.toContain('Quokka');
    expect((await markdown('q=quok', { authorization: 'Bearer svca_made_up' })).status).toBe(401);

    const seated = await markdown('q=quokkas', { cookie: person.cookie });
    expect(seated.status).toBe(200);
    expect(seated.headers.get('cache-control')).toBe('private, no-store');
    expect(seated.text).toContain(`Best match: post [Quokka migration plan](${server.core.config.baseUrl}/t/${quokkaThread}/m/${quokkaPost}.md) in Zebra crossing`);
    expect(seated.text).toContain('~~~markdown\nThe quokkas move northward tomorrow, with the wombats.\n~~~');
    expect(seated.text).toContain('| Type | Title | Where | State | Link |');
    expect(seated.text).toContain(`| Post | Quokka migration plan | Zebra crossing | post 2 · thread open | ${server.core.config.baseUrl}/t/${quokkaThread}/m/${quokkaPost}.md |`);

    const publicRow = await markdown('q=walrus&format=md');
    expect(publicRow.text).toContain(`| Thread | Walrus census | Walrus commons | open | ${server.core.config.baseUrl}/t/${walrusThread}.md |`);
    expect(publicRow.headers.get('etag')).toMatch(/^W\/"/);

    const paged = await markdown('q=paginat', { cookie: person.cookie });
    const more = /More: (\S+)/.exec(paged.text)?.[1];
    expect(more).toBeDefined();
    const next = await request(more!, { headers: { cookie: person.cookie } });
    expect(next.status).toBe(200);
    expect(next.text.match(/^\| Post \|/gm)).toHaveLength(3);
    expect((await markdown('q=type:planet')).status).toBe(400);
  });

  it('GET /search answers 120 a minute per network, then 429 in Markdown with Retry-After', async () => {
    let answered = 0;
    let refused: Awaited<ReturnType<typeof markdown>> | undefined;
    while (!refused && answered <= 120) {
      const reply = await markdown('q=walrus');
      if (reply.status === 429) refused = reply;
      else {
        expect(reply.status).toBe(200);
        answered++;
      }
    }
    expect(refused).toBeDefined();
    // The earlier tests of this suite read /search too: all of them count.
    expect(answered).toBeGreaterThan(100);
    expect(answered).toBeLessThan(120);
    expect(refused!.headers.get('content-type')).toContain('text/markdown');
    expect(refused!.text).toContain('Too many requests');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  const postOf = async (threadId: string) =>
    server.core.db.pool.oneFirst(sql.unsafe`SELECT id FROM posts WHERE thread_id = ${threadId} ORDER BY seq LIMIT 1`) as Promise<string>;
});
