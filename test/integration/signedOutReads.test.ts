import { randomInt, randomUUID } from 'node:crypto';
import http from 'node:http';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIpLimits } from '../../api/http/ipLimits.ts';
import { createLogger } from '../../server/log.ts';
import { ipLimitNamespace } from '../../api/http/ipLimits.ts';
import { poke, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * SPEC part 8 "Per-IP route limits": signed-out reads of `/`, `/explore`, `/t/…`, `/p/…` and `/h/…`,
 * 120 a minute per network, on a server at the spec's numbers (SVC_PACE_SCALE=1). Every request is
 * sent from a loopback address of its own drawing (127.0.0.0/8, the client socket bound to it), so
 * nothing else that reads from 127.0.0.1, nor an earlier run counted in the same Redis, shares its count.
 */

type Answer = { status: number; headers: http.IncomingHttpHeaders; text: string };

/** A loopback address nobody else uses: never 127.0.0.x. */
const freshAddress = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

function call(url: string, from: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const MARKDOWN = { accept: 'text/markdown' };
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const redisUrl = process.env.TEST_REDIS_URL;
const cases = stores().flatMap((store) => (['memory', ...(redisUrl ? ['redis'] : [])] as const).map((counted) => [store, counted] as const));

describe.each(cases)('signed-out reads on %s, counted in %s', (store, counted) => {
  let server: TestServer;
  let cookie: string;
  let agentKey: string;
  let hubSlug: string;
  let threadId: string;
  const setup = freshAddress();
  const get = (path: string, from: string, headers: Record<string, string> = {}) => call(`${server.url}${path}`, from, { headers });
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const reply = await call(`${server.url}${path}`, setup, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, ...headers },
      body: JSON.stringify(body),
    });
    if (reply.status >= 300) throw new Error(`POST ${path} answered ${reply.status}: ${reply.text}`);
    return { ...reply, body: JSON.parse(reply.text) };
  };

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PACE_SCALE: '1', SVC_PUBLIC_THREADS: '1', ...(counted === 'redis' ? { REDIS_URL: redisUrl! } : {}) });
    const signedIn = await post('/signin', { name: 'Reader', email: `reader-${randomUUID()}@example.com` });
    cookie = signedIn.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
    agentKey = (await post('/api/settings/create-agent', { name: 'Reading agent' }, { cookie })).body.agent_key;
    const hub = (await post('/api/tools/create_hub', { name: 'Open reading room' }, { cookie })).body.data;
    hubSlug = hub.slug;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    threadId = (await post('/api/tools/start_thread', { hub: hubSlug, title: 'Read me often', body: 'Much read.' }, { cookie })).body.data.thread_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A refusal of this limit: 429 with the three headers, nothing a CDN may keep, and its seconds. */
  function expectRefused(reply: Answer, type: string): number {
    expect(reply.status).toBe(429);
    const seconds = Number(reply.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(reply.headers['ratelimit']).toBe(`"ip";r=0;t=${seconds}`);
    expect(reply.headers['cache-control']).not.toMatch(/public/);
    expect(reply.headers['cdn-cache-control']).toBeUndefined();
    expect(reply.headers['content-type']).toBe(type);
    return seconds;
  }

  it('admits 120 signed-out reads of a public thread, 304s among them, and refuses the 121st in Markdown that says when and how to read on', async () => {
    const reader = freshAddress();
    const first = await get(`/t/${threadId}`, reader, MARKDOWN);
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=15');
    const etag = first.headers.etag!;
    for (let i = 1; i < 120; i++) {
      const again = i % 2 ? await get(`/t/${threadId}.md`, reader, { 'if-none-match': etag }) : await get(`/t/${threadId}?format=md`, reader);
      expect(again.status).toBe(i % 2 ? 304 : 200);
    }

    const refused = await get(`/t/${threadId}.md`, reader, { 'if-none-match': etag });
    const seconds = expectRefused(refused, 'text/markdown; charset=utf-8');
    expect(refused.text).toMatch(new RegExp(`^---\nerror: "rate_limited"\nretry_after_seconds: ${seconds}\n---\n# Too many reads\n`));
    expect(refused.text).toContain(`120 pages a minute from one network`);
    expect(refused.text).toContain(`Come back in ${seconds} s`);
    expect(refused.text).toContain(`sign in at ${server.core.config.baseUrl}/signin`);
    expect(refused.text).toContain(`${server.core.config.baseUrl}/mcp`);
    expect(refused.text).toContain(`${server.core.config.baseUrl}/api/v1/tools/<name>`);
    expect(refused.headers['access-control-allow-origin']).toBe('*');

    // Made-up credentials read as signed out, so they are refused too; the page as HTML as well.
    expectRefused(await get(`/t/${threadId}.md`, reader, { cookie: 'svc_session=svcs_made_up' }), 'text/markdown; charset=utf-8');
    expectRefused(await get(`/t/${threadId}.md`, reader, { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' }), 'text/markdown; charset=utf-8');
    const page = await get(`/t/${threadId}`, reader, HTML);
    expectRefused(page, 'text/html; charset=utf-8');
    expect(page.text).toContain(`<a href="${server.core.config.baseUrl}/signin">sign in</a>`);
    expect(page.text).toMatch(/Come back in \d+ s/);

    // From the same address meanwhile: signed-in readers are never counted; a bad key is 401, not signed out.
    const byCookie = await get(`/t/${threadId}.md`, reader, { cookie });
    expect(byCookie.status).toBe(200);
    expect(byCookie.headers['cache-control']).toBe('private, no-store');
    expect((await get(`/t/${threadId}.md`, reader, { authorization: `Bearer ${agentKey}` })).status).toBe(200);
    expect((await get(`/t/${threadId}`, reader, { ...HTML, cookie })).status).not.toBe(429);
    const badKey = await get(`/t/${threadId}.md`, reader, { authorization: 'Bearer svca_made_up_key' });
    expect(badKey.status).toBe(401);
    expect(JSON.parse(badKey.text).error).toBe('unauthenticated');

    // Another network reads on.
    expect((await get(`/t/${threadId}.md`, freshAddress())).status).toBe(200);

    if (counted === 'redis') {
      // Counted where every instance sees it, not in this instance's memory.
      const redis = new Redis(redisUrl!);
      try {
        expect(Number(await redis.get(`dotpad-ip-${ipLimitNamespace(server.core.config.databaseUrl)}-signedOutRead:net:${reader}`))).toBeGreaterThan(120);
      } finally {
        await redis.quit();
      }
    }
  });

  it('counts the hub view, the home page and Explore together, and refuses each in the form asked for', async () => {
    const reader = freshAddress();
    for (let i = 0; i < 120; i++) {
      const path = [`/h/${hubSlug}.md`, `/h/${hubSlug}`, '/', '/explore'][i % 4]!;
      const reply = await get(path, reader, path === '/' || path === '/explore' || path === `/h/${hubSlug}` ? (i % 8 < 4 ? HTML : MARKDOWN) : {});
      // The home page and Explore are the web app's (503 where it is not built); the hub view is Markdown or the app.
      expect(reply.status).not.toBe(429);
      if (path === `/h/${hubSlug}.md`) expect(reply.status).toBe(200);
    }

    const markdown = await get(`/h/${hubSlug}?format=md`, reader);
    expectRefused(markdown, 'text/markdown; charset=utf-8');
    expect(markdown.text).toContain('# Too many reads');
    const home = await get('/', reader, HTML);
    expectRefused(home, 'text/html; charset=utf-8');
    expect(home.text).toContain('<h1>Too many reads</h1>');
    const text = await get('/explore', reader, { accept: 'text/plain' });
    expectRefused(text, 'text/plain; charset=utf-8');
    expect(text.text).toMatch(/^Too many reads\n\nReading signed out is limited to 120 pages a minute from one network, and yours has read them all\. Come back in \d+ s/);
    const json = await get('/', reader, { accept: 'application/json' });
    const seconds = expectRefused(json, 'application/json; charset=utf-8');
    expect(JSON.parse(json.text)).toMatchObject({ error: 'rate_limited', retry_after_seconds: seconds, message: expect.stringContaining('/signin') });

    expect((await get(`/h/${hubSlug}.md`, reader, { cookie })).status).toBe(200);
    expect((await get('/', reader, { ...HTML, cookie })).status).not.toBe(429);
    expect((await get(`/h/${hubSlug}.md`, freshAddress())).status).toBe(200);
  });

  it('does not count other routes: search (its own limit), health and the API stay open to an address past its reads', async () => {
    const reader = freshAddress();
    for (let i = 0; i < 120; i++) expect((await get(`/t/${threadId}.md`, reader)).status).toBe(200);
    expect((await get(`/p/pad_00000000000000000000.md`, reader)).status).toBe(429);
    expect((await get('/search.md?q=read', reader)).status).toBe(200);
    expect((await get('/healthz', reader)).status).toBe(200);
    expect((await get('/api/v1/tools', reader)).status).toBe(200);
  });
});

describe('the signed-out read limit and SVC_PACE_SCALE', () => {
  it('is multiplied by the pace scale, which leaves the other per-IP routes at their numbers', async () => {
    const limits = await createIpLimits(undefined, createLogger('silent'), 2);
    try {
      expect(limits.points('signedOutRead')).toBe(240);
      expect(limits.points('search')).toBe(120);
      expect(limits.points('register')).toBe(30);
      for (let i = 0; i < 240; i++) await limits.take('signedOutRead', '127.0.0.1');
      await expect(limits.take('signedOutRead', '127.0.0.1')).rejects.toMatchObject({ code: 'rate_limited' });
    } finally {
      await limits.close();
    }
  });
});
