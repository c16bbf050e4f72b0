import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { mcpClient, poke, registerAgent, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * The discovery files of SPEC part 4, fetched as an agent or a crawler that knows only the base URL
 * would, and the 404 of a path that is no page.
 */
describe.each(stores())('discovery files on %s', (store) => {
  let server: TestServer;
  let base: string;
  let other: string;
  let toolNames: Set<string>;
  let published: { slug: string; thread: string; pad: string; quietThread: string };
  let privateHub: string;

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    // The canonical host is the base URL's (localhost); 127.0.0.1 on the same port is served too, but is not it.
    base = server.core.config.baseUrl;
    other = server.url;
    toolNames = new Set(((await request(`${other}/api/v1/tools`)).body.tools as { name: string }[]).map((t) => t.name));
    const owner = await registerAgent(server, 'Publisher');
    const newcomer = await registerAgent(server, 'Newcomer');
    // The owner reads verified: a confirmed address a day old.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now(), created_at = now() - interval '2 days' WHERE id IN (${owner.id}, (SELECT linked_human FROM participants WHERE id = ${owner.id}))`);
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Open Notes' })).body.data;
    const thread = (await rest(server, owner.key, 'start_thread', { hub: hub.slug, title: 'Public question', body: 'What do we know?' })).body.data;
    const pad = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Public pad', text: 'Known so far.' })).body.data;
    await rest(server, owner.key, 'set_hub_visibility', { hub: hub.slug, audience: 'public', confirm: true });
    await rest(server, newcomer.key, 'join_hub', { hub: hub.slug });
    const quiet = (await rest(server, newcomer.key, 'start_thread', { hub: hub.slug, title: 'New voice', body: 'Hello.' })).body.data;
    published = { slug: hub.slug, thread: thread.thread_id, pad: pad.pad_id, quietThread: quiet.thread_id };
    privateHub = (await rest(server, owner.key, 'create_hub', { name: 'Back Room' })).body.data.slug;
  });
  afterAll(() => server?.close());

  /** A GET to the server as `origin` names it: the canonical host (localhost, sent to 127.0.0.1 with its Host) or another it serves. */
  const get = (path: string, origin = base) =>
    new Promise<{ status: number; headers: Headers; text: string; body: any }>((resolve, reject) => {
      const target = new URL(path, other);
      const outgoing = http.get({ hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers: { host: new URL(origin).host, accept: 'text/html' } }, (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [name, value] of Object.entries(reply.headers)) if (typeof value === 'string') headers.set(name, value);
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: reply.statusCode!, headers, text, body });
        });
      });
      outgoing.on('error', reject);
    });

  it('serves each file with its type, any origin, its cache headers, and indexable on the canonical host', async () => {
    const files: [string, RegExp][] = [
      ['/llms.txt', /^text\/plain/],
      ['/llms-full.txt', /^text\/plain/],
      ['/skill.md', /^text\/markdown/],
      ['/.well-known/ai-catalog.json', /^application\/json/],
      ['/.well-known/agent-card.json', /^application\/json/],
      ['/mcp/server-card', /^application\/mcp-server-card\+json/],
      ['/robots.txt', /^text\/plain/],
      ['/sitemap.xml', /^application\/xml/],
    ];
    for (const [path, type] of files) {
      const reply = await get(path);
      expect(reply.status, path).toBe(200);
      expect(reply.headers.get('content-type'), path).toMatch(type);
      expect(reply.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(reply.headers.get('cache-control'), path).toBe(path === '/robots.txt' ? 'public, max-age=86400' : 'public, max-age=300');
      expect(reply.headers.get('cdn-cache-control'), path).toBe('public, s-maxage=3600, stale-while-revalidate=86400');
      expect(reply.headers.get('x-robots-tag'), path).toBeNull();
      // Off the canonical host, nothing is indexable.
      const elsewhere = await get(path, other);
      if (path === '/sitemap.xml') expect(elsewhere.status).toBe(404);
      else expect(elsewhere.headers.get('x-robots-tag'), path).toBe('noindex, nofollow');
    }
  });

  it('llms.txt and llms-full.txt name only tools that exist, and every model tool is in the full file', async () => {
    const short = (await get('/llms.txt')).text;
    const full = (await get('/llms-full.txt')).text;
    expect(short).toContain('# Dotpad');
    expect(short).toContain('## Start in five steps');
    expect(short).toContain('## Read without a key');
    expect(short).toContain(`${base}/api/v1/agents/register`);
    expect(short).toContain('20 writes a day');
    for (const text of [short, full]) {
      const named = [...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((word) => word.includes('_') && !/^(agent_key|link_url|base_version|idempotency_key|rate_limited|retry_after_seconds|registration_not_open|structured_content)$/.test(word));
      for (const name of named) expect(toolNames, name).toContain(name);
    }
    for (const name of toolNames) expect(full).toContain(`\`${name}\``);
  });

  it('skill.md has front matter whose version follows the text', async () => {
    const skill = (await get('/skill.md')).text;
    const front = /^---\nname: dotpad\ndescription: .+\nversion: ([0-9a-f]{12})\n---\n/.exec(skill);
    expect(front).not.toBeNull();
    const { createHash } = await import('node:crypto');
    const body = skill.slice(front![0].length + 1);
    expect(createHash('sha256').update(body).digest('hex').slice(0, 12)).toBe(front![1]);
  });

  it('the cards and the catalog point to the MCP endpoint and to each other', async () => {
    const catalog = (await get('/.well-known/ai-catalog.json')).body;
    expect(catalog.name).toBe('Dotpad');
    expect(catalog.entries.map((e: { type: string }) => e.type).sort()).toEqual(['a2a-agent-card', 'llms-full-txt', 'llms-txt', 'mcp-server', 'openapi']);
    expect(catalog.entries.find((e: { type: string }) => e.type === 'mcp-server')).toEqual({ type: 'mcp-server', url: `${base}/mcp`, serverCard: `${base}/mcp/server-card` });
    const card = (await get('/.well-known/agent-card.json')).body;
    expect(card).toMatchObject({ capabilities: { streaming: false, pushNotifications: false }, version: '0.1.0', api_version: '1', mcpServer: { url: `${base}/mcp`, serverCard: `${base}/mcp/server-card` } });
    expect(card.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(['threads', 'pads', 'hubs', 'tasks']);
    const serverCard = JSON.parse((await get('/mcp/server-card')).text);
    expect(serverCard).toEqual({
      name: 'svc',
      title: 'Dotpad',
      description: expect.any(String),
      remotes: [{ type: 'streamable-http', url: `${base}/mcp` }],
      documentation: `${base}/llms.txt`,
      version: '0.1.0',
      api_version: '1',
      openapi: `${base}/openapi.json`,
    });
  });

  it('robots.txt opens the public pages on the canonical host and closes every other host', async () => {
    const robots = (await get('/robots.txt')).text;
    for (const path of ['/$', '/explore', '/h/', '/t/', '/p/', '/llms', '/.well-known/', '/mcp/server-card', '/openapi.json', '/sitemap.xml']) expect(robots).toContain(`Allow: ${path}\n`);
    for (const path of ['/api', '/search', '/settings', '/invite', '/signin', '/']) expect(robots).toContain(`Disallow: ${path}\n`);
    expect(robots.match(/^Sitemap: /gm)).toHaveLength(2);
    expect((await get('/robots.txt', other)).text).toBe('User-agent: *\nDisallow: /\n');
  });

  it('the sitemap lists the published hub and what its verified owner wrote, never a private hub or a new account', async () => {
    const map = (await get('/sitemap.xml')).text;
    const locs = [...map.matchAll(/<loc>([^<]+)<\/loc><lastmod>([^<]+)<\/lastmod>/g)].map((m) => m[1]!);
    expect(locs).toEqual(expect.arrayContaining([`${base}/`, `${base}/llms.txt`, `${base}/h/${published.slug}`, `${base}/t/${published.thread}`, `${base}/p/${published.pad}`]));
    expect(locs).not.toContain(`${base}/t/${published.quietThread}`);
    expect(locs.some((loc) => loc.includes(privateHub))).toBe(false);
  });

  it('a path that is no page answers 404 with the app, and a page of the app 200', async () => {
    for (const path of ['/nonexistent-page', '/h/x/y/z', '/explorer']) {
      const reply = await get(path);
      expect(reply.status, path).toBe(404);
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
    }
    // A page of the app: 200, or 503 in a clone whose web app is not built yet (`npm run build`).
    expect([200, 503]).toContain((await get('/settings')).status);
  });

  it('a missing or private hub, thread or pad answers 404 signed out, and a published one does not', async () => {
    for (const path of ['/h/no-such-hub', '/t/thr_nope', '/p/pad_nope', `/h/${privateHub}`]) expect((await get(path)).status, path).toBe(404);
    for (const path of [`/h/${published.slug}`, `/t/${published.thread}`, `/p/${published.pad}`]) expect([200, 503], path).toContain((await get(path)).status);
  });

  it('an agent that knows only the base URL follows llms.txt to its first post over MCP', async () => {
    const steps = (await get('/llms.txt')).text;
    const register = /`POST (\S+\/api\/v1\/agents\/register)` with `(\{[^`]+\})`/.exec(steps)!;
    const url = register[1]!.replace('localhost', '127.0.0.1');
    const made = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: register[2]!.replace('<your name>', 'Follower') });
    expect(made.status).toBe(201);
    const mcpUrl = /Connect to (\S+\/mcp) /.exec(steps)![1]!;
    expect(mcpUrl).toBe(`${base}/mcp`);
    const client = await mcpClient(server, made.body.agent_key);
    try {
      const home = await client.callTool({ name: 'show_dotpad', arguments: {} });
      expect(home.isError).toBeFalsy();
      await client.callTool({ name: 'join_hub', arguments: { hub: published.slug } });
      const posted = await client.callTool({ name: 'post_reply', arguments: { thread_id: published.thread, body: 'Found you through llms.txt.' } });
      expect(posted.isError, JSON.stringify(posted.content)).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('with registration closed, llms.txt says so and what an agent can do now', async () => {
    const closed = await startTestServer(store, { SVC_GUEST_AGENTS: '0' });
    try {
      const text = (await request(`${closed.url}/llms.txt`)).text;
      expect(text).toContain('Registration without an invite is closed on this server');
      expect(text).toContain('403 registration_not_open');
      expect(text).toContain('"invite": "<token>"');
      expect(text).not.toContain('20 writes a day');
    } finally {
      await closed.close();
    }
  });
});
