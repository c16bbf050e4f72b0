import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { appTool, mcpClient, openProvider, poke, registerAgent, request, rest, signIn, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

type Hit = { type: string; id: string; hub: string; thread_id?: string; pad_id?: string; state: string; link: string };

const SectionRow = z.object({ section_id: z.string(), after_id: z.string().nullable(), title: z.string(), level: z.number(), body: z.string(), version: z.number() });
const HANDBOOK = '# Dingo habitats\n\nThey roam the grasslands.\n\n## Burrow depth\n\nBilbies dig very deep.\n\n# Feeding\n\nEucalyptus only, for some.';

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
  let handbook: string;
  let walrusPad: string;
  let numbatTask: string;
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
    handbook = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Marsupial handbook', text: HANDBOOK })).body.data.pad_id;
    walrusPad = (await rest(server, owner.key, 'create_pad', { thread_id: walrusThread, title: 'Ivory ledger', text: '# Ivory counts\n\nNarwhals excluded.' })).body.data.pad_id;
    numbatTask = (await rest(server, owner.key, 'create_task', { thread_id: quokkaThread, title: 'Count the numbats' })).body.data.task_id;
    // create_task takes no details; the column is searched all the same.
    await poke(server, sql.unsafe`UPDATE tasks SET details = 'Termite mounds at dawn.' WHERE id = ${numbatTask}`);
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
    expect((await find(owner.key, 'quok type:task')).data.results).toEqual([]);
    const unmatched = await find(owner.key, 'quok type:pad is:answered');
    expect(unmatched.data.results).toEqual([]);
    expect(unmatched.text).toContain('Nothing you named takes is:answered');
    // Filters alone browse what they name.
    expect(ids((await find(owner.key, `type:thread hub:${hub.slug}`)).data.results)).toEqual([quokkaThread, otherThread].sort());
    const bad = await rest(server, owner.key, 'search_dotpad', { q: 'quok type:planet' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid' });
    expect(bad.body.message).toContain('type: takes hub, pad, section, thread, task, post');
  });

  const sectionRows = (padId: string) =>
    server.core.db.pool.any(sql.type(SectionRow)`SELECT section_id, after_id, title, level, body, version FROM pad_sections WHERE pad_id = ${padId} ORDER BY section_id`);
  const outline = async (padId: string) => {
    const read = await rest(server, owner.key, 'open_pad', { pad_id: padId });
    return { version: read.body.data.version as number, ids: (read.body.data.sections as { id: string }[]).map((section) => section.id) as [string, string, string] };
  };
  const editText = async (padId: string, text: string) => {
    const edited = await rest(server, owner.key, 'edit_pad', { pad_id: padId, base_version: (await outline(padId)).version, text });
    expect(edited.status, edited.text).toBe(200);
  };

  it('finds pad sections by heading and text, each as its pad allows, kept current by every version', async () => {
    const [dingo, burrow, feeding] = (await outline(handbook)).ids;
    const grass = await find(owner.key, 'grassl');
    expect(grass.data.results).toEqual([expect.objectContaining({ type: 'section', id: dingo, pad_id: handbook, hub: hub.slug, state: 'settled' })]);
    expect(grass.data.results[0]!.link).toBe(`${server.core.config.baseUrl}/p/${handbook}?section=${dingo}`);
    expect(grass.text).toContain('## Sections (1)');
    expect(grass.text).toContain('~~~markdown\nThey roam the grasslands.\n~~~');
    // A heading matches; type:section keeps sections only (the pad's title has no such word).
    expect(ids((await find(owner.key, 'burrow')).data.results)).toEqual([burrow]);
    expect(ids((await find(owner.key, 'type:section bilbies')).data.results)).toEqual([burrow]);
    expect(ids((await find(owner.key, 'handbook type:section')).data.results)).toEqual([]);

    // An edit rewrites only the section it changed, in the statement that records the version.
    const before = await sectionRows(handbook);
    await editText(handbook, HANDBOOK.replace('Bilbies dig very deep.', 'Bandicoots dig shallow.'));
    expect((await find(owner.key, 'bilbies')).data.results).toEqual([]);
    expect(ids((await find(owner.key, 'bandicoot')).data.results)).toEqual([burrow]);
    // The version wrote the section's number; its text followed before the search read it, and the pad is no longer named stale.
    const after = await sectionRows(handbook);
    expect(after.find((row) => row.section_id === burrow)!.body).toBe('Bandicoots dig shallow.');
    expect(await server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM pad_sections_stale WHERE pad_id = ${handbook}`)).toBe(0);
    const version = (rows: typeof after, id: string) => rows.find((row) => row.section_id === id)!.version;
    expect(version(after, burrow)).toBeGreaterThan(version(before, burrow));
    expect([version(after, dingo), version(after, feeding)]).toEqual([version(before, dingo), version(before, feeding)]);

    // A section put in first, and one taken out: the map follows, and the one gone is not found.
    await editText(handbook, `Opening words on koalas.\n\n${HANDBOOK.replace('Bilbies dig very deep.', 'Bandicoots dig shallow.').replace('\n\n# Feeding\n\nEucalyptus only, for some.', '')}`);
    expect((await find(owner.key, 'eucalypt')).data.results).toEqual([]);
    const intro = await find(owner.key, 'koalas');
    expect(intro.data.results).toEqual([expect.objectContaining({ type: 'section', pad_id: handbook })]);
    const map = await sectionRows(handbook);
    expect(map.map((row) => row.title).sort()).toEqual(['Burrow depth', 'Dingo habitats', 'Introduction']);
    expect(map.find((row) => row.title === 'Dingo habitats')!.after_id).toBe(intro.data.results[0]!.id);

    // What the versions kept is what the migration's rebuild makes from the stored versions.
    const kept = (await sectionRows(handbook)).map(({ version: _v, ...row }) => row);
    await poke(server, sql.unsafe`SELECT rebuild_pad_sections(${handbook})`);
    expect((await sectionRows(handbook)).map(({ version: _v, ...row }) => row)).toEqual(kept);
  });

  it('indexes what a person types live into a pad, once its version is written', async () => {
    const live = await openProvider(server, handbook, owner.key);
    try {
      await live.synced;
      const block = live.blocks().find((b) => b.text.startsWith('They roam'))!;
      typeInto(live.document, live.fragment, block.id, 'end', ' Platypuses too.');
      await expect.poll(async () => ids((await find(owner.key, 'platypus')).data.results)).toEqual([(await outline(handbook)).ids[1]]);
    } finally {
      live.close();
    }
  });

  it('brings a quiet pad\'s section text up to date with no search asking', async () => {
    const notes = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Field notes', text: '# Diggers\n\nBilbies dig deep.' })).body.data.pad_id as string;
    await editText(notes, '# Diggers\n\nWombats dig wide.');
    const named = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM pad_sections_stale WHERE pad_id = ${notes}`);
    // The instance's sweep takes the pad once it has been quiet 5 s.
    await expect.poll(named, { timeout: 20_000, interval: 500 }).toBe(0);
    expect((await sectionRows(notes)).map((row) => row.body)).toEqual(['Wombats dig wide.']);
  });

  it('finds tasks by title, details and state, with is: where it applies', async () => {
    const found = await find(owner.key, 'numbat');
    expect(found.data.results).toEqual([expect.objectContaining({ type: 'task', id: numbatTask, thread_id: quokkaThread, state: 'open' })]);
    expect(found.text).toContain('## Tasks (1)');
    expect(ids((await find(owner.key, 'termite dawn')).data.results)).toEqual([numbatTask]);
    expect(ids((await find(owner.key, 'type:task numb')).data.results)).toEqual([numbatTask]);
    expect(ids((await find(owner.key, 'numbat is:open')).data.results)).toEqual([numbatTask]);
    expect((await find(owner.key, 'numbat is:taken')).data.results).toEqual([]);
    const taken = await appTool(server, person.cookie, 'take_task', { task_id: numbatTask });
    expect(taken.status, taken.text).toBe(200);
    expect(ids((await find(owner.key, 'numbat is:taken')).data.results)).toEqual([numbatTask]);
    expect((await find(owner.key, 'numbat is:open')).data.results).toEqual([]);
    // A state's words are searched as well.
    expect(ids((await find(owner.key, 'type:task taken')).data.results)).toEqual([numbatTask]);
    expect((await find(owner.key, 'numbat is:answered')).data.results).toEqual([]);
  });

  it('never shows a section of a private pad or a task of a private thread; a grant keeps to its threads', async () => {
    for (const q of ['grassl', 'bandicoot', 'numbat', 'termite', 'type:task', 'type:section']) {
      const hits = (await find(outsider.key, q)).data.results;
      expect(hits.filter((hit) => hit.type !== 'section' || hit.pad_id !== walrusPad)).toEqual([]);
    }
    // A pad of a public hub's thread is read by anyone, its sections too.
    expect((await find(outsider.key, 'narwhal')).data.results).toEqual([expect.objectContaining({ type: 'section', pad_id: walrusPad })]);
    const sub = (await rest(server, owner.key, 'mint_subagent', { thread_ids: [quokkaThread] })).body.data.agent_key as string;
    expect(ids((await find(sub, 'numbat')).data.results)).toEqual([numbatTask]);
    expect((await find(sub, 'grassl')).data.results).toEqual([]);
    expect((await find(sub, 'narwhal')).data.results).toEqual([]);
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

  it('GET /search as Markdown quotes a section or a task as the best match, with the same table', async () => {
    const base = server.core.config.baseUrl;
    const section = await markdown('q=bandicoot', { cookie: person.cookie });
    const sectionId = (await find(owner.key, 'bandicoot')).data.results[0]!.id;
    expect(section.text).toContain(`Best match: section [Burrow depth](${base}/p/${handbook}.md?section=${sectionId}) in Marsupial handbook · Zebra crossing`);
    expect(section.text).toContain('~~~markdown\nBandicoots dig shallow.\n~~~');
    expect(section.text).toContain(`| Section | Burrow depth | Marsupial handbook · Zebra crossing | settled | ${base}/p/${handbook}.md?section=${sectionId} |`);
    const task = await markdown('q=numbat', { cookie: person.cookie });
    expect(task.text).toContain(`Best match: task [Count the numbats](${base}/t/${quokkaThread}.md) in Quokka migration plan · Zebra crossing`);
    expect(task.text).toMatch(new RegExp(`\\| Task \\| Count the numbats \\| Quokka migration plan · Zebra crossing \\| task \\w+ \\| ${base}/t/${quokkaThread}\\.md \\|`));
    // Signed out, neither is there.
    expect((await markdown('q=numbat')).text).not.toContain('numbats');
  });

  it('GET /search?lane= browses pads with their section map, open, new and guest threads, with a cursor', async () => {
    const base = server.core.config.baseUrl;
    const pads = await markdown('lane=pads', { cookie: person.cookie });
    expect(pads.status).toBe(200);
    expect(pads.text).toContain('# Search: pads and their sections');
    const [intro, dingo, burrow] = (await outline(handbook)).ids;
    const rows = [
      `| Pad | Marsupial handbook | Zebra crossing | version ${(await outline(handbook)).version} | ${base}/p/${handbook}.md |`,
      `| Section | Introduction | Marsupial handbook · Zebra crossing | settled | ${base}/p/${handbook}.md?section=${intro} |`,
      `| Section | Dingo habitats | Marsupial handbook · Zebra crossing | settled | ${base}/p/${handbook}.md?section=${dingo} |`,
      `| Section |   Burrow depth | Marsupial handbook · Zebra crossing | settled | ${base}/p/${handbook}.md?section=${burrow} |`,
    ];
    const at = rows.map((row) => pads.text.indexOf(row));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(pads.text).toContain('| Pad | Ivory ledger |');
    // Signed out: only what anyone reads.
    const publicPads = await markdown('lane=pads');
    expect(publicPads.text).toContain('| Section | Ivory counts | Ivory ledger · Walrus commons |');
    expect(publicPads.text).not.toContain('Marsupial');

    const opened = await markdown('lane=open', { cookie: person.cookie });
    expect(opened.text).toContain(`| Thread | Quokka migration plan | Zebra crossing | open · `);
    expect((await markdown('lane=new')).text.match(/^\| Thread \|/gm)).toHaveLength(1);

    await poke(server, sql.unsafe`UPDATE threads SET accepts_guests = true WHERE id IN (${walrusThread}, ${otherThread})`);
    const guests = await markdown('lane=guests');
    expect(guests.text).toContain(`| Thread | Walrus census | Walrus commons | open · 1 posts | ${base}/t/${walrusThread}.md |`);
    expect(guests.text).not.toContain('Lunch orders');

    for (let n = 1; n <= 21; n++) {
      await poke(server, sql.unsafe`INSERT INTO threads (id, hub_id, title, started_by) VALUES (${`thr_lane${n}`}, ${hub.id}, ${`Lane filler ${n}`}, ${owner.id})`);
    }
    const newest = await markdown('lane=new', { cookie: person.cookie });
    expect(newest.text.match(/^\| Thread \|/gm)).toHaveLength(20);
    const more = /More: (\S+)/.exec(newest.text)?.[1];
    expect(more).toContain('lane=new');
    const next = await request(more!, { headers: { cookie: person.cookie } });
    // 21 fillers, the two other threads of the hub the person reads, and the public one.
    expect(next.text.match(/^\| Thread \|/gm)).toHaveLength(4);
    expect(next.text).not.toContain('More:');
    const cursor = new URL(more!).searchParams.get('cursor')!;
    const crossed = await markdown(`lane=open&cursor=${cursor}`, { cookie: person.cookie });
    expect(crossed.status).toBe(400);
    expect(crossed.text).toContain('another lane');
    const unknown = await markdown('lane=everything');
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('lane takes pads, open, new, guests');
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
    expect(answered).toBeGreaterThan(90);
    expect(answered).toBeLessThan(120);
    expect(refused!.headers.get('content-type')).toContain('text/markdown');
    expect(refused!.text).toContain('Too many requests');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  const postOf = async (threadId: string) =>
    server.core.db.pool.oneFirst(sql.unsafe`SELECT id FROM posts WHERE thread_id = ${threadId} ORDER BY seq LIMIT 1`) as Promise<string>;
});
