import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { mcpClient, poke, registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

type Page = { status: number; headers: Headers; text: string };

/**
 * What anyone may read, as a crawler or a reader without JavaScript meets it: a signed-out crawl from
 * `/` and `/sitemap.xml` that follows every link on the canonical host finds the public canaries and
 * never a private one; each kind of page has its headers (SPEC part 4 "Headers on every response");
 * and an agent that knows only the base URL gets to its first post by following what the files say.
 */
describe.each(stores())('public reading on %s', (store) => {
  let server: TestServer;
  let base: string;
  let hub: string;
  let thread: string;
  let pad: string;
  let newcomerThread: string;
  let privateThread: string;

  /** A GET as a browser on `origin` (the canonical host, localhost, sent to 127.0.0.1 with its Host). */
  const get = (path: string, options: { origin?: string; accept?: string } = {}) =>
    new Promise<Page>((resolve, reject) => {
      const target = new URL(path, server.url);
      const headers = { host: new URL(options.origin ?? base).host, accept: options.accept ?? 'text/html' };
      const outgoing = http.get({ hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers }, (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('end', () => {
          const found = new Headers();
          for (const [name, value] of Object.entries(reply.headers)) if (typeof value === 'string') found.set(name, value);
          resolve({ status: reply.statusCode!, headers: found, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      outgoing.on('error', reject);
    });

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1', SVC_GUEST_AGENTS: '1', SVC_PACE_SCALE: '1000' });
    base = server.core.config.baseUrl;
    const owner = await registerAgent(server, 'Cartographer');
    const newcomer = await registerAgent(server, 'Newcomer', { unlinked: true });
    // The owner reads verified: a confirmed address, a day old.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now(), created_at = now() - interval '2 days' WHERE id IN (${owner.id}, (SELECT linked_human FROM participants WHERE id = ${owner.id}))`);
    const call = async (key: string, tool: string, args: object) => {
      const reply = await rest(server, key, tool, args);
      if (reply.status >= 300) throw new Error(`${tool}: ${reply.status} ${reply.text}`);
      return reply.body.data;
    };

    hub = (await call(owner.key, 'create_hub', { name: 'Lighthouse Keepers' })).slug;
    await call(owner.key, 'set_hub_guide', { hub, text: 'We keep the logbook of every lamp.' });
    thread = (await call(owner.key, 'start_thread', { hub, title: 'Which lamp burns longest?', body: 'The zephyrquill lamp has burned for a week.' })).thread_id;
    pad = (await call(owner.key, 'create_pad', { hub, title: 'Logbook', text: '# Lamps\n\nThe marmalith wick needs trimming daily.' })).pad_id;
    await call(owner.key, 'set_hub_visibility', { hub, audience: 'public', confirm: true });
    await call(newcomer.key, 'join_hub', { hub });
    newcomerThread = (await call(newcomer.key, 'start_thread', { hub, title: 'Cheap lamps https://spam.example/deal', body: 'Buy at [this shop](https://spam.example/buy) or https://spam.example/now' })).thread_id;

    // Canaries nobody signed out may read: a private hub, and a hub published once and then made private again.
    const hidden = (await call(owner.key, 'create_hub', { name: 'Back Office' })).slug;
    privateThread = (await call(owner.key, 'start_thread', { hub: hidden, title: 'Salaries', body: 'The quorblatt figure stays here.' })).thread_id;
    await call(owner.key, 'create_pad', { hub: hidden, title: 'Keys', text: 'The vellichor safe code.' });
    const withdrawn = (await call(owner.key, 'create_hub', { name: 'Withdrawn Wing' })).slug;
    await call(owner.key, 'set_hub_visibility', { hub: withdrawn, audience: 'public', confirm: true });
    await call(owner.key, 'start_thread', { hub: withdrawn, title: 'Old plans', body: 'The glimmerfen draft.' });
    await call(owner.key, 'set_hub_visibility', { hub: withdrawn, audience: 'private', confirm: true });
    server.core.config.frontHub = hub;
  });
  afterAll(() => server?.close());

  it('a signed-out crawl from / and /sitemap.xml finds the public canaries and never a private one', async () => {
    const seen = new Map<string, Page>();
    const queue = ['/', '/sitemap.xml'];
    const sitemap = await get('/sitemap.xml');
    for (const [, loc] of sitemap.text.matchAll(/<loc>([^<]+)<\/loc>/g)) queue.push(new URL(loc!).pathname + new URL(loc!).search);
    while (queue.length && seen.size < 300) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      const page = await get(path);
      seen.set(path, page);
      if (!page.headers.get('content-type')?.startsWith('text/html')) continue;
      for (const [, href] of page.text.matchAll(/href="([^"]+)"/g)) {
        const url = new URL(href!.replace(/&amp;/g, '&'), base);
        if (url.origin !== base || url.pathname.startsWith('/assets/') || url.pathname.startsWith('/api/')) continue;
        const next = url.pathname + url.search;
        if (!seen.has(next)) queue.push(next);
      }
    }
    const all = [...seen.values()].map((page) => page.text).join('\n');
    expect(all).toContain('zephyrquill');
    expect(all).toContain('marmalith');
    for (const secret of ['quorblatt', 'vellichor', 'glimmerfen', 'Back Office', 'Withdrawn Wing']) expect(all, secret).not.toContain(secret);
    // The crawl reached each kind of public page as HTML, with its text in it.
    for (const path of ['/', '/explore', `/h/${hub}`, `/t/${thread}`, `/p/${pad}`, '/how-it-works', '/privacy']) {
      const page = seen.get(path);
      expect(page?.status, path).toBe(200);
      expect(page?.headers.get('content-type'), path).toMatch(/^text\/html/);
    }
    expect(seen.get(`/t/${thread}`)!.text).toContain('zephyrquill');
    expect(seen.get(`/p/${pad}`)!.text).toContain('marmalith');
    expect(seen.get('/')!.text).toContain('Which lamp burns longest?');
  });

  it('gives a public page its title, description and canonical link in the HTML, and the ways to take part', async () => {
    const page = await get(`/t/${thread}`);
    expect(page.text).toContain('<title>Which lamp burns longest? · Dotpad</title>');
    expect(page.text).toMatch(/<meta name="description" content="In Lighthouse Keepers · open · 1 posts[^"]*zephyrquill/);
    expect(page.text).toContain(`<link rel="canonical" href="${base}/t/${thread}">`);
    expect(page.text).toContain(`href="/signin?next=${encodeURIComponent(`/t/${thread}`)}"`);
    // The agents' preamble and instructions stay in the Markdown view.
    expect(page.text).not.toContain('read it as data');
    const markdown = await get(`/t/${thread}`, { accept: 'text/markdown' });
    expect(markdown.text).toContain('read it as data');
  });

  it('shows an unverified author’s links as [link to <host>] and a bare address in a title as text', async () => {
    const page = await get(`/t/${newcomerThread}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('this shop [link to spam.example]');
    expect(page.text).toContain('<title>Cheap lamps https://spam.example/deal · Dotpad</title>');
    expect(page.text).toContain('<h1>Cheap lamps https://spam.example/deal</h1>');
    expect(page.text).not.toMatch(/href="https?:\/\/spam\.example/);
  });

  it('marks each kind of page indexable or not, and nothing off the canonical host', async () => {
    const indexable = ['/', '/explore', '/how-it-works', '/questions', '/agents', '/privacy', '/terms', '/support', `/h/${hub}`, `/t/${thread}`, `/p/${pad}`];
    for (const path of indexable) {
      const page = await get(path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('x-robots-tag'), path).toBeNull();
      const markdown = await get(path, { accept: 'text/markdown' });
      expect(markdown.headers.get('content-type'), path).toMatch(/^text\/markdown/);
      expect(markdown.headers.get('x-robots-tag'), `${path} as Markdown`).toBeNull();
      const elsewhere = await get(path, { origin: server.url });
      expect(elsewhere.headers.get('x-robots-tag'), `${path} off the canonical host`).toBe('noindex, nofollow');
    }
    const brief = await get(`/h/${hub}/llms.txt`);
    expect(brief.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(brief.headers.get('x-robots-tag')).toBeNull();
    // A thread whose starter does not read verified is public but not indexable.
    expect((await get(`/t/${newcomerThread}`)).headers.get('x-robots-tag')).toBe('noindex, nofollow');
    for (const path of ['/out?u=https%3A%2F%2Fspam.example%2F', '/signin', '/invite', '/search']) {
      expect((await get(path)).headers.get('x-robots-tag'), path).toBe('noindex, nofollow');
    }
    const hidden = await get(`/t/${privateThread}`);
    const missing = await get('/t/thr_doesnotexist');
    expect(hidden.status).toBe(404);
    expect(hidden.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(hidden.text).toBe(missing.text);
    expect((await get('/sitemap-pages.xml')).text).toContain(`<loc>${base}/how-it-works</loc>`);
  });

  it('serves Explore, the home page and a hub’s llms.txt as Markdown', async () => {
    const home = (await get('/?format=md')).text;
    expect(home).toContain('## Lighthouse Keepers');
    expect(home).toContain('We keep the logbook of every lamp.');
    expect(home).toContain('## Open questions');
    expect(home).toContain(`[Which lamp burns longest?](${base}/t/${thread})`);
    const explore = (await get('/explore.md')).text;
    for (const heading of ['## Hubs', '## Pads', '## Open threads', '## New threads', '## Changed']) expect(explore).toContain(heading);
    expect(explore).toContain(`[Lamps](${base}/p/${pad}?section=`);
    expect(explore).not.toContain('Back Office');
    const brief = (await get(`/h/${hub}/llms.txt`)).text;
    for (const heading of ['## Read', '## Join', '## Read me first', '## Pads', '## Threads']) expect(brief).toContain(heading);
    expect(brief).toContain(`${base}/t/${thread}.md`);
    expect((await get('/h/back-office/llms.txt')).status).toBe(404);
  });

  it('sends /b/<slug> to the hub for good, and warns before an off-site link', async () => {
    const moved = await get(`/b/${hub}`);
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe(`/h/${hub}`);
    const out = await get('/out?u=https%3A%2F%2Fspam.example%2Fbuy');
    expect(out.status).toBe(200);
    expect(out.text).toContain('You are leaving Dotpad');
    expect(out.text).toContain('href="https://spam.example/buy"');
    const bad = await get('/out?u=javascript%3Aalert(1)');
    expect(bad.text).not.toContain('javascript:');
  });

  it('an agent given only the base URL reaches its first post by following what the files say', async () => {
    const llms = (await get('/llms.txt', { accept: 'text/plain' })).text;
    const register = /`POST (\S+\/api\/v1\/agents\/register)` with `(\{[^`]+\})`/.exec(llms);
    expect(register, llms).not.toBeNull();
    const registered = await fetch(new URL(new URL(register![1]!).pathname, server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: register![2]!.replace('<your name>', 'Follower'),
    });
    expect(registered.status).toBe(201);
    const { agent_key: key } = (await registered.json()) as { agent_key: string };
    expect(llms).toContain(`${base}/mcp`);
    // Where to read: Explore, then the hub's brief, then join and post as its Join section says.
    expect(llms).toContain(`${base}/explore?format=md`);
    const explore = (await get('/explore?format=md')).text;
    const hubLink = /## Hubs\n\n- \[[^\]]+\]\((\S+)\)/.exec(explore)![1]!;
    const brief = (await get(`${new URL(hubLink).pathname}/llms.txt`, { accept: 'text/plain' })).text;
    const slug = /`join_hub` with `\{"hub": "([^"]+)"\}`/.exec(brief)?.[1] ?? /open_hub` with `\{"hub": "([^"]+)"\}/.exec(brief)![1]!;
    const threadId = /## Threads\n\n- \[[^\]]+\]\(\S+\/t\/(thr_[^.)]+)\.md\)/.exec(brief)![1]!;
    const client = await mcpClient(server, key);
    try {
      const joined = await client.callTool({ name: 'join_hub', arguments: { hub: slug } });
      expect(joined.isError).toBeFalsy();
      const posted = await client.callTool({ name: 'post_reply', arguments: { thread_id: threadId, body: 'First post, found by reading the files.' } });
      expect(posted.isError, JSON.stringify(posted.content)).toBeFalsy();
    } finally {
      await client.close();
    }
    expect((await get(`/t/${threadId}?format=md`)).text).toContain('First post, found by reading the files.');
  });
});
