import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTool, registerAgent, request, signIn, startTestServer, stores, type Reply, type TestServer, poke } from '../support/server.ts';

/** SPEC part 4 "Markdown views": /h/:slug, /t/:id and /t/:id/m/:msg as Markdown. */

const MARKDOWN = 'text/markdown; charset=utf-8';
const NOT_FOUND = '# Not found\n';

/** The front matter as [key, value] pairs in order; every value must parse as JSON. */
function frontMatter(text: string): [string, unknown][] {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) throw new Error(`No front matter in:\n${text}`);
  return match[1]!.split('\n').map((line) => {
    const at = line.indexOf(': ');
    return [line.slice(0, at), JSON.parse(line.slice(at + 2))];
  });
}

/** The seq of every post rendered on a page, in page order (from the author lines). */
function renderedSeqs(text: string): number[] {
  return [...text.matchAll(/^\*\*.+\*\* · \S+ · msg_[0-9a-f]+ · seq (\d+)$/gm)].map((m) => Number(m[1]));
}

const marker = (n: number) => `Body of post <${n}>.`;

describe.each(stores())('Markdown views on %s', (store) => {
  let server: TestServer;
  let base: string;
  let owner: { cookie: string; id: string };
  let member: { key: string; id: string };
  let stranger: { key: string; id: string };
  let hub: { id: string; slug: string };

  /** Headers of a member reading with its Bearer key. */
  let asMember: Record<string, string>;
  const get = (path: string, headers: Record<string, string> = {}) => request(`${server.url}${path}`, { headers });
  const query = (text: ReturnType<typeof sql.unsafe>) => poke(server, text);

  async function createHub(name: string) {
    const reply = await appTool(server, owner.cookie, 'create_hub', { name });
    expect(reply.status).toBe(200);
    return { id: reply.body.data.hub_id as string, slug: reply.body.data.slug as string };
  }
  async function addMember(hubId: string, participantId: string) {
    await query(sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${participantId}, 'member')`);
  }
  const setAudience = (hubId: string, audience: 'public' | 'private') =>
    query(sql.unsafe`UPDATE hubs SET audience = ${audience} WHERE id = ${hubId}`);

  /** A thread in `inHub` started by the owner; returns its id and first post. */
  async function startThread(inHub: { slug: string }, title = 'A thread', body = marker(1)) {
    const reply = await appTool(server, owner.cookie, 'start_thread', { hub: inHub.slug, title, body });
    expect(reply.status).toBe(200);
    return { id: reply.body.data.thread_id as string, firstPost: reply.body.data.post_id as string };
  }
  async function post(threadId: string, body: string): Promise<string> {
    const reply = await appTool(server, owner.cookie, 'post_reply', { thread_id: threadId, body });
    expect(reply.status).toBe(200);
    return reply.body.data.post_id;
  }
  /** A thread whose posts say marker(1) … marker(count). */
  async function threadWithPosts(count: number) {
    const thread = await startThread(hub);
    for (let n = 2; n <= count; n++) await post(thread.id, marker(n));
    return thread;
  }
  const threadRow = (id: string) =>
    server.core.db.pool.one(sql.unsafe`SELECT version, updated_at FROM threads WHERE id = ${id}`) as Promise<{ version: number; updated_at: number }>;
  /** The front matter a private thread's view must have, from its row; `answer` only when answered. */
  const threadFrontMatter = (id: string, row: { version: number; updated_at: number }, status: string, answer?: string) => [
    ['id', id],
    ['type', 'thread'],
    ['version', String(row.version)],
    ['etag', `"thread:${id}:${row.version}"`],
    ['updated', new Date(row.updated_at).toISOString()],
    ['status', status],
    ...(answer ? [['answer', answer]] : []),
    ['audience', 'private'],
    ['accepts_guests', false],
  ];

  function expectNotFound(reply: Reply) {
    expect(reply.status).toBe(404);
    expect(reply.headers.get('content-type')).toBe(MARKDOWN);
    expect(reply.text).toBe(NOT_FOUND);
  }

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    base = server.core.config.baseUrl;
    owner = await signIn(server, 'Owner', 'owner@example.test');
    member = await registerAgent(server, 'Member');
    stranger = await registerAgent(server, 'Stranger');
    asMember = { authorization: `Bearer ${member.key}` };
    hub = await createHub('Team room');
    await addMember(hub.id, member.id);
  });
  afterAll(() => server?.close());

  describe('asking for Markdown', () => {
    it('gives the same Markdown for ?format=md, a .md suffix and Accept: text/markdown', async () => {
      const thread = await startThread(hub);
      const views = [`/t/${thread.id}`, `/h/${hub.slug}`, `/t/${thread.id}/m/${thread.firstPost}`];
      for (const path of views) {
        const byQuery = await get(`${path}?format=md`, asMember);
        const bySuffix = await get(`${path}.md`, asMember);
        const byAccept = await get(path, { ...asMember, accept: 'text/markdown' });
        for (const reply of [byQuery, bySuffix, byAccept]) {
          expect(reply.status).toBe(200);
          expect(reply.headers.get('content-type')).toBe(MARKDOWN);
          expect(reply.text).toBe(byQuery.text);
        }
        expect(byQuery.text.startsWith('---\n')).toBe(true);
      }
    });

    it('does not answer Markdown when none of the three asks for it', async () => {
      const thread = await startThread(hub);
      const reply = await get(`/t/${thread.id}`, { ...asMember, accept: 'text/html' });
      expect(reply.headers.get('content-type')).not.toContain('text/markdown');
    });
  });

  describe('front matter', () => {
    it('gives a hub its id, type, slug, audience and member flag as JSON values', async () => {
      const reply = await get(`/h/${hub.slug}.md`, asMember);
      expect(reply.text.startsWith(`---\nid: "${hub.id}"\ntype: "hub"\nslug: "${hub.slug}"\naudience: "private"\nmember: true\n---\n`)).toBe(true);
    });

    it('says member: false to a signed-out reader of a public hub', async () => {
      const open = await createHub('Open house');
      await setAudience(open.id, 'public');
      const reply = await get(`/h/${open.slug}.md`);
      expect(reply.status).toBe(200);
      expect(frontMatter(reply.text)).toEqual([
        ['id', open.id],
        ['type', 'hub'],
        ['slug', open.slug],
        ['audience', 'public'],
        ['member', false],
      ]);
    });

    it('gives a thread id, type, version as a string, etag, updated, status, audience and accepts_guests', async () => {
      const thread = await threadWithPosts(2);
      const row = await threadRow(thread.id);
      const reply = await get(`/t/${thread.id}.md`, asMember);
      expect(frontMatter(reply.text)).toEqual(threadFrontMatter(thread.id, row, 'open'));
      expect(reply.text).toContain(`\nversion: "${row.version}"\n`);
    });

    it('adds the marked answer to a thread and says it is answered', async () => {
      const thread = await threadWithPosts(1);
      const answer = await post(thread.id, 'This answers it.');
      expect((await appTool(server, owner.cookie, 'mark_answer', { post_id: answer })).status).toBe(200);
      const row = await threadRow(thread.id);
      const reply = await get(`/t/${thread.id}.md`, asMember);
      expect(frontMatter(reply.text)).toEqual(threadFrontMatter(thread.id, row, 'answered', answer));
    });

    it('gives a post its id, type, thread, seq as an integer and created', async () => {
      const thread = await threadWithPosts(1);
      const second = await post(thread.id, marker(2));
      const created = (await server.core.db.pool.oneFirst(sql.unsafe`SELECT created_at FROM posts WHERE id = ${second}`)) as number;
      const reply = await get(`/t/${thread.id}/m/${second}.md`, asMember);
      expect(reply.status).toBe(200);
      expect(frontMatter(reply.text)).toEqual([
        ['id', second],
        ['type', 'post'],
        ['thread', thread.id],
        ['seq', 2],
        ['created', new Date(created).toISOString()],
      ]);
      expect(reply.text).toContain('\nseq: 2\n');
      expect(reply.text).toContain(`~~~markdown\n${marker(2)}\n~~~`);
    });
  });

  describe('paging a thread of 31 posts', () => {
    let thread: { id: string };
    beforeAll(async () => {
      thread = await threadWithPosts(31);
    });

    it('shows only the newest 30 posts and links the older ones', async () => {
      const reply = await get(`/t/${thread.id}.md`, asMember);
      expect(renderedSeqs(reply.text)).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
      expect(reply.text).not.toContain(marker(1));
      expect(reply.text).toContain(marker(31));
      expect(reply.text).toContain(`Older posts: ${base}/t/${thread.id}.md?before=2`);
    });

    it('with before= shows up to 30 posts before that seq, and links the newer ones', async () => {
      const reply = await get(`/t/${thread.id}.md?before=11`, asMember);
      expect(renderedSeqs(reply.text)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(reply.text).not.toContain('Older posts:');
      expect(reply.text).toContain(`Newer posts: ${base}/t/${thread.id}.md?since=10`);
    });

    it('with since= shows up to 30 posts after that seq, oldest first, with a link to continue', async () => {
      const reply = await get(`/t/${thread.id}.md?since=0`, asMember);
      expect(renderedSeqs(reply.text)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(reply.text).toContain(`More: ${base}/t/${thread.id}.md?since=30`);
      expect(reply.text).not.toContain('Older posts:');
    });

    it('with since= lets since win over before', async () => {
      const reply = await get(`/t/${thread.id}.md?since=28&before=5`, asMember);
      expect(renderedSeqs(reply.text)).toEqual([29, 30, 31]);
    });

    it('with since= at the newest post says nothing is new', async () => {
      const reply = await get(`/t/${thread.id}.md?since=31`, asMember);
      expect(reply.status).toBe(200);
      expect(renderedSeqs(reply.text)).toEqual([]);
      expect(reply.text).toContain('Nothing new after seq 31.');
    });
  });

  it('clips a post over 3,000 characters with a notice naming its length and a link to the whole post', async () => {
    const thread = await threadWithPosts(1);
    const long = 'x'.repeat(3_500);
    const id = await post(thread.id, long);
    const page = await get(`/t/${thread.id}.md`, asMember);
    expect(page.text).toContain(`~~~markdown\n${'x'.repeat(3_000)}\n~~~\n`);
    expect(page.text).not.toContain('x'.repeat(3_001));
    expect(page.text).toContain(`(clipped: this post has 3500 characters; the whole post: ${base}/t/${thread.id}/m/${id}.md)`);

    const whole = await get(`/t/${thread.id}/m/${id}.md`, asMember);
    expect(whole.text).toContain(`~~~markdown\n${long}\n~~~`);
  });

  describe('framing participant text', () => {
    it('fences a post in more tildes than any run inside it', async () => {
      const thread = await threadWithPosts(1);
      const body = 'before\n~~~~~\n# not a heading of ours\n~~~';
      const id = await post(thread.id, body);
      const page = await get(`/t/${thread.id}.md`, asMember);
      expect(page.text).toContain(`\n~~~~~~markdown\n${body}\n~~~~~~\n`);
      const one = await get(`/t/${thread.id}/m/${id}.md`, asMember);
      expect(one.text).toContain(`\n~~~~~~markdown\n${body}\n~~~~~~\n`);
    });

    it('escapes titles and collapses their newlines', async () => {
      const thread = await startThread(hub, 'Ship *now* [x](y) #1\nplease');
      const page = await get(`/t/${thread.id}.md`, asMember);
      expect(page.text).toContain('\n# Ship \\*now\\* \\[x\\]\\(y\\) \\#1 please\n');
      const listing = await get(`/h/${hub.slug}.md`, asMember);
      expect(listing.text).toContain(`- [Ship \\*now\\* \\[x\\]\\(y\\) \\#1 please](${base}/t/${thread.id}.md)`);
    });
  });

  describe('who can read', () => {
    it('answers a private hub and a missing one with the same 404', async () => {
      const readers: Record<string, string>[] = [{}, { authorization: `Bearer ${stranger.key}` }];
      for (const headers of readers) {
        const hidden = await get(`/h/${hub.slug}.md`, headers);
        const missing = await get('/h/no-such-hub.md', headers);
        expectNotFound(hidden);
        expectNotFound(missing);
        expect(hidden.text).toBe(missing.text);
      }
    });

    it('answers a private thread and post, and missing ones, with the same 404', async () => {
      const thread = await startThread(hub);
      const reads = [
        `/t/${thread.id}.md`,
        '/t/thr_00000000000000000000.md',
        `/t/${thread.id}/m/${thread.firstPost}.md`,
        `/t/${thread.id}/m/msg_00000000000000000000.md`,
      ];
      for (const path of reads) {
        expectNotFound(await get(path));
        expectNotFound(await get(path, { authorization: `Bearer ${stranger.key}` }));
      }
    });

    it('answers a bad Bearer key with 401 and a challenge, never as signed out', async () => {
      const open = await createHub('Open to all');
      await setAudience(open.id, 'public');
      const thread = await startThread(open);
      expect((await get(`/t/${thread.id}.md`)).status).toBe(200);

      const reply = await get(`/t/${thread.id}.md`, { authorization: 'Bearer svca_made-up-key' });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('unauthenticated');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+", scope="svc:read svc:write", error="invalid_token"/);
    });

    it('refuses a session token sent as a Bearer key with 401, not as signed out', async () => {
      const open = await createHub('Sessions stay home');
      await setAudience(open.id, 'public');
      const token = owner.cookie.slice('svc_session='.length);
      const reply = await get(`/h/${open.slug}.md`, { authorization: `Bearer ${token}` });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ error: 'unauthenticated', message: expect.stringMatching(/session cannot be used here/i) });
      expect(reply.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });

    it('reads a made-up session cookie as signed out', async () => {
      const open = await createHub('Cookie test');
      await setAudience(open.id, 'public');
      const cookie = 'svc_session=svcs_made-up-session';
      const reply = await get(`/h/${open.slug}.md`, { cookie });
      expect(reply.status).toBe(200);
      expect(frontMatter(reply.text)).toContainEqual(['member', false]);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=15');
      // A CDN may only keep reads that came with no cookie at all.
      expect(reply.headers.get('cdn-cache-control')).toBeNull();
      expectNotFound(await get(`/h/${hub.slug}.md`, { cookie }));
    });

    it('reads a made-up Authorization header that is not a Bearer token as signed out', async () => {
      const open = await createHub('Basic test');
      await setAudience(open.id, 'public');
      const reply = await get(`/h/${open.slug}.md`, { authorization: 'Basic dXNlcjpwYXNz' });
      expect(reply.status).toBe(200);
      expect(frontMatter(reply.text)).toContainEqual(['member', false]);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=15');
      expect(reply.headers.get('cdn-cache-control')).toBeNull();
      expectNotFound(await get(`/h/${hub.slug}.md`, { authorization: 'Basic dXNlcjpwYXNz' }));
    });
  });

  describe('cache headers', () => {
    let open: { id: string; slug: string };
    let thread: { id: string; firstPost: string };
    beforeAll(async () => {
      open = await createHub('Cache house');
      await setAudience(open.id, 'public');
      await addMember(open.id, member.id);
      thread = await startThread(open);
    });
    const views = () => [`/h/${open.slug}.md`, `/t/${thread.id}.md`, `/t/${thread.id}/m/${thread.firstPost}.md`];

    it('keeps a member\'s read private, whether by Bearer key or session', async () => {
      for (const path of views()) {
        for (const headers of [asMember, { cookie: owner.cookie }]) {
          const reply = await get(path, headers);
          expect(reply.status).toBe(200);
          expect(reply.headers.get('cache-control')).toBe('private, no-store');
          expect(reply.headers.get('cdn-cache-control')).toBeNull();
          expect(reply.headers.get('vary')).toBe('Accept, Cookie, Authorization');
          expect(reply.headers.get('access-control-allow-origin')).toBe('*');
        }
      }
    });

    it('lets a signed-out read be cached briefly, by browsers and CDNs', async () => {
      for (const path of views()) {
        const reply = await get(path);
        expect(reply.status).toBe(200);
        expect(reply.headers.get('cache-control')).toBe('public, max-age=15');
        expect(reply.headers.get('cdn-cache-control')).toBe('public, s-maxage=15, stale-while-revalidate=60');
        expect(reply.headers.get('vary')).toBe('Accept, Cookie, Authorization');
        expect(reply.headers.get('access-control-allow-origin')).toBe('*');
        expect(reply.headers.get('last-modified')).toBeNull();
      }
    });
  });

  describe('ETag', () => {
    it('is "thread:<id>:<version>" and answers 304 with no body when unchanged', async () => {
      const thread = await threadWithPosts(2);
      const { version } = await threadRow(thread.id);
      const first = await get(`/t/${thread.id}.md`, asMember);
      expect(first.headers.get('etag')).toBe(`"thread:${thread.id}:${version}"`);

      const again = await get(`/t/${thread.id}.md`, { ...asMember, 'if-none-match': `"thread:${thread.id}:${version}"` });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
    });

    it('changes after a new post, so the old tag gets the new page', async () => {
      const thread = await threadWithPosts(1);
      const before = (await get(`/t/${thread.id}.md`, asMember)).headers.get('etag')!;
      await post(thread.id, 'Something new.');
      const { version } = await threadRow(thread.id);
      const after = await get(`/t/${thread.id}.md`, { ...asMember, 'if-none-match': before });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).toBe(`"thread:${thread.id}:${version}"`);
      expect(after.headers.get('etag')).not.toBe(before);
      expect(after.text).toContain('Something new.');
    });

    it('gives 404, never 304, for a thread that turned private', async () => {
      const room = await createHub('Briefly public');
      await setAudience(room.id, 'public');
      const thread = await startThread(room);
      const open = await get(`/t/${thread.id}.md`);
      expect(open.status).toBe(200);
      const etag = open.headers.get('etag')!;
      expect((await get(`/t/${thread.id}.md`, { 'if-none-match': etag })).status).toBe(304);

      await setAudience(room.id, 'private');
      const closed = await get(`/t/${thread.id}.md`, { 'if-none-match': etag });
      expectNotFound(closed);
      expect(closed.headers.get('etag')).toBeNull();
    });
  });

  describe('How to take part', () => {
    it('tells a member how to start a thread and how to make a pad, in a hub and in a thread', async () => {
      const thread = await startThread(hub, 'Taking part');
      for (const path of [`/h/${hub.slug}.md`, `/t/${thread.id}.md`]) {
        const text = (await get(path, asMember)).text;
        expect(text).toContain(`- start a thread: \`start_thread\` with \`{"hub": "${hub.slug}", "title": "…", "body": "…"}\``);
        expect(text).toContain(`- make a pad: \`create_pad\` with \`{"hub": "${hub.slug}", "title": "…", "text": "…"}\``);
      }
    });
  });

  describe('with SVC_PUBLIC_THREADS unset', () => {
    let closed: TestServer;
    beforeAll(async () => {
      closed = await startTestServer(store);
    });
    afterAll(() => closed?.close());

    it('reads a public hub as 404 when signed out, and in full for a member', async () => {
      const person = await signIn(closed, 'Owner', 'owner@example.test');
      const made = await appTool(closed, person.cookie, 'create_hub', { name: 'Public elsewhere' });
      const { hub_id: id, slug } = made.body.data;
      await poke(closed, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${id}`);
      const started = await appTool(closed, person.cookie, 'start_thread', { hub: slug, title: 'Hello', body: 'Hi.' });

      const hubRead = await request(`${closed.url}/h/${slug}.md`);
      expect(hubRead.status).toBe(404);
      expect(hubRead.text).toBe(NOT_FOUND);
      const threadRead = await request(`${closed.url}/t/${started.body.data.thread_id}.md`);
      expect(threadRead.status).toBe(404);
      expect(threadRead.text).toBe(NOT_FOUND);

      const asOwner = await request(`${closed.url}/h/${slug}.md`, { headers: { cookie: person.cookie } });
      expect(asOwner.status).toBe(200);
      expect(frontMatter(asOwner.text)).toContainEqual(['member', true]);
      // Nothing reads as public: the front matter says the audience the reader sees, as do the text and open_hub.
      expect(frontMatter(asOwner.text)).toContainEqual(['audience', 'private']);
      expect(asOwner.text).toContain('· private · your seat: owner');
      const threadAsOwner = await request(`${closed.url}/t/${started.body.data.thread_id}.md`, { headers: { cookie: person.cookie } });
      expect(frontMatter(threadAsOwner.text)).toContainEqual(['audience', 'private']);
      const opened = await appTool(closed, person.cookie, 'open_hub', { hub: slug });
      expect(opened.body.data.audience).toBe('private');
      expect(opened.body.text).toContain(`slug ${slug} · private ·`);
      const found = await request(`${closed.url}/search?q=${encodeURIComponent('type:hub Public elsewhere')}&format=md`, { headers: { cookie: person.cookie } });
      expect(found.text).toMatch(/\| Hub \| Public elsewhere \| [^|]* \| private \|/);
    });
  });
});
