import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatus, type ErrorCode } from '../../schema/errors.ts';
import { registerAgent, request, rest, startTestServer, stores, type Reply, type TestServer, rawRequest } from '../support/server.ts';

/** SPEC part 4: headers on every response, hosts, /healthz, body limits, OpenAPI, the tool list, CORS, register and key renewal. */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const DAY = 24 * 3_600_000;

/** The model tools built so far and whether each is a read (SPEC part 4 "Model tools"). */
const KNOWN_TOOLS: Record<string, boolean> = {
  create_hub: false,
  open_hub: true,
  join_hub: false,
  start_thread: false,
  post_reply: false,
  open_thread: true,
  mark_answer: false,
  react: false,
  create_pad: false,
  open_pad: true,
  edit_pad: false,
  undo_edit: false,
  wait_for_changes: true,
};

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** A JSON body of exactly `bytes` bytes. */
function jsonOfSize(bytes: number, field = 'body'): string {
  const shell = JSON.stringify({ [field]: '' });
  return JSON.stringify({ [field]: 'a'.repeat(bytes - shell.length) });
}

function expectSecurityHeaders(reply: Reply) {
  expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
  expect(reply.headers.get('referrer-policy')).toBe('same-origin');
}

describe.each(stores())('HTTP surface on %s', (store) => {
  let server: TestServer;
  let base: string;

  const count = (table: 'participants' | 'credentials') =>
    server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*) AS n FROM ${sql.identifier([table])}`) as Promise<number>;
  const renew = (key: string) => postJson(`${server.url}/api/v1/agents/key`, {}, { authorization: `Bearer ${key}` });

  beforeAll(async () => {
    server = await startTestServer(store);
    base = server.core.config.baseUrl;
  });
  afterAll(() => server?.close());

  describe('headers on every response', () => {
    it('sends nosniff, same-origin referrers, no framing and a strict CSP outside /mcp', async () => {
      const replies = [
        await request(`${server.url}/healthz`),
        await request(`${server.url}/api/v1/tools`),
        await request(`${server.url}/openapi.json`),
        await request(`${server.url}/api/no-such-route`),
        await postJson(`${server.url}/api/v1/tools/open_hub`, { hub: 'x' }),
        await request(`${server.url}/h/missing.md`),
      ];
      for (const reply of replies) {
        expectSecurityHeaders(reply);
        expect(reply.headers.get('x-frame-options')).toBe('DENY');
        const csp = reply.headers.get('content-security-policy')!;
        expect(csp).toContain("default-src 'self'");
        expect(csp).toContain("object-src 'none'");
        expect(csp).toContain("frame-ancestors 'none'");
      }
    });

    it('lets only the home page on the canonical host be indexed', async () => {
      const canonical = new URL(server.core.config.baseUrl).host;
      const home = await rawRequest(`${server.url}/`, { headers: { host: canonical, accept: 'text/html' } });
      expect(home.status).toBe(200);
      expect(home.headers['x-robots-tag']).toBeUndefined();
      const elsewhere = await rawRequest(`${server.url}/`, { headers: { accept: 'text/html' } });
      expect(elsewhere.headers['x-robots-tag']).toBe('noindex, nofollow');
      const page = await rawRequest(`${server.url}/h/anything`, { headers: { host: canonical, accept: 'text/html' } });
      expect(page.headers['x-robots-tag']).toBe('noindex, nofollow');
    });

    it('sends the old /b/<slug> addresses to /h/<slug> for good', async () => {
      const reply = await fetch(`${server.url}/b/some-hub`, { redirect: 'manual' });
      expect(reply.status).toBe(301);
      expect(reply.headers.get('location')).toBe('/h/some-hub');
    });

    it('defaults Cache-Control to private, no-store where a route sets none', async () => {
      const replies = [
        await request(`${server.url}/healthz`),
        await request(`${server.url}/api/no-such-route`),
        await postJson(`${server.url}/api/v1/tools/open_hub`, { hub: 'x' }),
      ];
      for (const reply of replies) expect(reply.headers.get('cache-control')).toBe('private, no-store');
    });

    it('leaves X-Frame-Options and the CSP off /mcp, but keeps the rest', async () => {
      const agent = await registerAgent(server, 'Header check');
      const replies = [
        await request(`${server.url}/mcp`, { headers: { accept: 'text/html' } }),
        await postJson(`${server.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        await postJson(
          `${server.url}/mcp`,
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { authorization: `Bearer ${agent.key}`, accept: 'application/json, text/event-stream' },
        ),
      ];
      expect(replies.map((reply) => reply.status)).toEqual([200, 401, 200]);
      for (const reply of replies) {
        expectSecurityHeaders(reply);
        expect(reply.headers.get('cache-control')).toBe('private, no-store');
        expect(reply.headers.get('x-frame-options')).toBeNull();
        expect(reply.headers.get('content-security-policy')).toBeNull();
      }
    });

    it('refuses a Host it does not serve with 403 forbidden_host', async () => {
      const reply = await rawRequest(`${server.url}/healthz`, { headers: { host: 'evil.example' } });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ error: 'forbidden_host', message: expect.any(String) });
      expect(reply.headers['x-content-type-options']).toBe('nosniff');

      const served = await rawRequest(`${server.url}/healthz`, { headers: { host: new URL(base).host } });
      expect(served.status).toBe(200);
    });
  });

  describe('/healthz', () => {
    it('answers 200 {"ok":true} when the database and schema are current', async () => {
      const reply = await request(`${server.url}/healthz`);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('{"ok":true}');
    });

    it('answers 503 schema_behind with Retry-After: 5 when a migration is missing', async () => {
      const pool = server.core.db.pool;
      const newest = (await pool.one(sql.unsafe`
        DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)
        RETURNING version, name, applied_at`)) as { version: string; name: string; applied_at: number };
      try {
        const reply = await request(`${server.url}/healthz`);
        expect(reply.status).toBe(503);
        expect(reply.body).toEqual({ ok: false, reason: 'schema_behind' });
        expect(reply.headers.get('retry-after')).toBe('5');
      } finally {
        await pool.query(sql.unsafe`
          INSERT INTO schema_migrations (version, name, applied_at)
          VALUES (${newest.version}, ${newest.name}, ${new Date(newest.applied_at).toISOString()})`);
      }
      expect((await request(`${server.url}/healthz`)).status).toBe(200);
    });
  });

  describe('body limits', () => {
    it('reads a REST tool body of 512 KB, and refuses one byte more with 413 too_large', async () => {
      const agent = await registerAgent(server, 'Big sender');
      const headers = { authorization: `Bearer ${agent.key}` };
      // At the limit the body is read, and then fails the tool's own schema (a thread_id is missing).
      const atLimit = await postJson(`${server.url}/api/v1/tools/post_reply`, jsonOfSize(512 * 1024), headers);
      expect(atLimit.status).toBe(400);
      expect(atLimit.body.error).toBe('invalid');

      const over = await postJson(`${server.url}/api/v1/tools/post_reply`, jsonOfSize(512 * 1024 + 1), headers);
      expect(over.status).toBe(413);
      expect(over.body.error).toBe('too_large');
    });

    it('reads bodies as UTF-8, a character split across packets too, and drops a leading byte-order mark', async () => {
      const agent = await registerAgent(server, 'Unicode sender');
      const name = 'Café — 中文 🙂';
      const reply = await postJson(`${server.url}/api/v1/tools/create_hub`, `\uFEFF${JSON.stringify({ name, note: 'é'.repeat(100_000) })}`, { authorization: `Bearer ${agent.key}` });
      expect(reply.status).toBe(200);
      const opened = await rest(server, agent.key, 'open_hub', { hub: reply.body.data.slug });
      expect(opened.body.text).toContain(`# Hub ${name}`);
    });

    it('refuses a register body over 8 KB with 413, creating nobody', async () => {
      const before = await count('participants');
      const reply = await postJson(`${server.url}/api/v1/agents/register`, jsonOfSize(8 * 1024 + 1, 'note'));
      expect(reply.status).toBe(413);
      expect(reply.body.error).toBe('too_large');
      expect(await count('participants')).toBe(before);
    });
  });

  describe('GET /openapi.json', () => {
    let doc: any;
    let reply: Reply;
    beforeAll(async () => {
      reply = await request(`${server.url}/openapi.json`);
      doc = reply.body;
    });

    it('is OpenAPI 3.1, API version "1", cached publicly for five minutes', () => {
      expect(reply.status).toBe(200);
      expect(doc.openapi).toMatch(/^3\.1\./);
      expect(doc.info.version).toBe('1');
      expect(reply.headers.get('cache-control')).toBe('public, max-age=300');
    });

    it('has one path per model tool, with operationId the tool name, and x-read-only exactly on reads', async () => {
      const listed = (await request(`${server.url}/api/v1/tools`)).body.tools as { name: string; read_only: boolean }[];
      const toolPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/api/v1/tools/'));
      expect(toolPaths.sort()).toEqual(listed.map((tool) => `/api/v1/tools/${tool.name}`).sort());
      for (const tool of listed) {
        const operation = doc.paths[`/api/v1/tools/${tool.name}`].post;
        expect(operation.operationId).toBe(tool.name);
        expect(operation['x-read-only'] === true).toBe(tool.read_only);
        if (!tool.read_only) expect(operation).not.toHaveProperty('x-read-only');
      }
      for (const [name, read] of Object.entries(KNOWN_TOOLS)) {
        expect(doc.paths[`/api/v1/tools/${name}`].post['x-read-only'] === true).toBe(read);
      }
      expect(doc.paths).not.toHaveProperty(['/api/v1/tools/ui_my_hubs']);
    });

    /** A tool's responses, those shared by every tool read from components.responses. */
    const responsesOf = (name: string): Record<string, any> =>
      Object.fromEntries(
        Object.entries(doc.paths[`/api/v1/tools/${name}`].post.responses as Record<string, any>).map(([status, response]) => [
          status,
          response.$ref ? doc.components.responses[response.$ref.replace('#/components/responses/', '')] : response,
        ]),
      );
    /** The codes a response names, as `code` in its description. */
    const codesOf = (response: { description: string }) => [...response.description.matchAll(/\(`([a-z_]+)`\)/g)].map((m) => m[1]!);

    it('declares the bearer scheme and the Error schema', () => {
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(doc.components.schemas.Error).toMatchObject({ type: 'object', required: ['error', 'message'] });
      expect(responsesOf('open_hub')['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    });

    it("answers each tool's errors from the error table and its declarations: 423 and 503 on writes, 429 where a pace or limit applies", async () => {
      const listed = (await request(`${server.url}/api/v1/tools`)).body.tools as { name: string; read_only: boolean }[];
      for (const tool of listed) {
        const responses = responsesOf(tool.name);
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) < 400) continue;
          expect(response.content['application/json'].schema, `${tool.name} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
          // Every code a status names answers with that status in the error table (SPEC part 7).
          expect(codesOf(response).length, `${tool.name} ${status}`).toBeGreaterThan(0);
          for (const code of codesOf(response)) expect(errorStatus[code as ErrorCode], `${tool.name} ${status} ${code}`).toBe(Number(status));
        }
        for (const status of ['400', '401', '403', '404', '413', '500']) expect(responses, `${tool.name} ${status}`).toHaveProperty([status]);
        // Pauses and a crowded database stop writes; reads go on, and wait rather than being turned away,
        // but every read counts in the agent read pace.
        if (tool.read_only) {
          expect(codesOf(responses['429']), tool.name).toEqual(['rate_limited']);
          expect(responses, tool.name).not.toHaveProperty(['423']);
          expect(responses, tool.name).not.toHaveProperty(['503']);
        } else {
          expect(codesOf(responses['423']), tool.name).toEqual(['locked']);
          expect(codesOf(responses['503']), tool.name).toContain('busy');
        }
      }

      const editPad = responsesOf('edit_pad');
      expect(codesOf(editPad['503'])).toEqual(['paused', 'busy']);
      expect(editPad['429'].description).toContain("agents' edits to one pad");
      expect(editPad['429'].headers).toHaveProperty(['Retry-After']);
      expect(editPad['409'].description).toContain('idempotency_key');
      expect(editPad['200'].description).toContain('limit_reached');
      expect(editPad['200'].headers).toHaveProperty(['RateLimit']);

      const openPad = responsesOf('open_pad');
      expect(openPad['429'].description).toContain('read pace');
      expect(openPad).not.toHaveProperty(['409']);
      expect(openPad['200']).not.toHaveProperty(['headers']);

      // A write without a counted limit is not stopped by the operator's posting pause, but its own limit answers 429.
      const rotateKey = responsesOf('rotate_key');
      expect(codesOf(rotateKey['503'])).toEqual(['busy']);
      expect(rotateKey['429'].description).toContain('renewals a day');
      expect(rotateKey['404'].description).toContain("an agent's own key");
      expect(rotateKey).not.toHaveProperty(['409']);
      expect(codesOf(responsesOf('take_task')['409'])).toEqual(['conflict']);
      expect(responsesOf('post_reply')).toHaveProperty(['201']);
    });

    it('covers register, key renewal and the Markdown views', () => {
      expect(doc.paths['/api/v1/agents/register'].post).toBeDefined();
      expect(doc.paths['/api/v1/agents/key'].post).toBeDefined();
      for (const path of ['/h/{slug}', '/t/{thread_id}', '/p/{pad_id}', '/search']) {
        expect(doc.paths[path].get.responses['200'].content).toHaveProperty(['text/markdown']);
      }
      const search = doc.paths['/search'].get;
      expect(search.parameters.map((p: { name: string }) => p.name)).toEqual(['format', 'q', 'lane', 'cursor']);
      expect(search.parameters.find((p: { name: string }) => p.name === 'lane').schema.enum).toEqual(['pads', 'open', 'new', 'guests']);
    });

    it("declares each tool's structured content as its data: its own fields, and what replies say of the caller", () => {
      const dataOf = (name: string) => doc.paths[`/api/v1/tools/${name}`].post.responses['200'].content['application/json'].schema.allOf[1].properties.data;
      const toolPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/api/v1/tools/'));
      for (const path of toolPaths) expect(dataOf(path.replace('/api/v1/tools/', '')), path).toBeDefined();
      // A read: its own fields, closed, with the link and key lines every reply may carry.
      expect(dataOf('open_thread')).toMatchObject({ type: 'object', additionalProperties: false, properties: { thread_id: { type: 'string' }, linked_to: { type: 'object' } } });
      expect(dataOf('open_thread').required).toContain('thread_id');
      expect(dataOf('open_thread').properties).not.toHaveProperty('limit_reached');
      // A counted write: its answer with the allowance, or the answer at the daily limit.
      const createTask = dataOf('create_task').anyOf;
      expect(createTask[0].properties).toHaveProperty('allowance');
      expect(createTask[1]).toMatchObject({ properties: { limit_reached: { const: true } }, required: expect.arrayContaining(['limit_reached', 'allowance', 'next_write_at']) });
      // A field the tool answers itself keeps its own schema: a renewed key's end is always there.
      expect(dataOf('rotate_key').required).toContain('key_expires_at');
    });
  });

  describe('GET /api/v1/tools', () => {
    it('lists every model tool as {name, title, description, url, read_only}, never app-only ones', async () => {
      const reply = await request(`${server.url}/api/v1/tools`);
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body).sort()).toEqual(['api', 'tools']);
      expect(reply.body.api).toBe('1');
      const tools = reply.body.tools as Record<string, unknown>[];
      for (const tool of tools) {
        expect(Object.keys(tool).sort()).toEqual(['description', 'name', 'read_only', 'title', 'url']);
        expect(tool.url).toBe(`${base}/api/v1/tools/${tool.name}`);
        expect(typeof tool.description).toBe('string');
        expect(typeof tool.title).toBe('string');
      }
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool.read_only]));
      expect(byName).toMatchObject(KNOWN_TOOLS);
      expect(byName).not.toHaveProperty('ui_my_hubs');
    });
  });

  describe('CORS preflight', () => {
    it('answers 204 with POST, OPTIONS and a ten-minute max age on the agent routes', async () => {
      for (const path of ['/api/v1/tools/x', '/api/v1/tools/post_reply', '/api/v1/agents/key', '/api/v1/agents/register']) {
        const reply = await request(`${server.url}${path}`, {
          method: 'OPTIONS',
          headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
        });
        expect(reply.status).toBe(204);
        expect(reply.headers.get('access-control-allow-origin')).toBe('*');
        expect(reply.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
        expect(reply.headers.get('access-control-max-age')).toBe('600');
        const exposed = reply.headers.get('access-control-expose-headers')!.split(/,\s*/);
        expect(exposed).toEqual(expect.arrayContaining(['WWW-Authenticate', 'Retry-After', 'RateLimit', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
      }
    });
  });

  describe('POST /api/v1/agents/register', () => {
    it('gives an agent, a key shown once, a link, the allowance and the endpoints', async () => {
      const reply = await postJson(`${server.url}/api/v1/agents/register`, { name: 'Scout', runs_on: 'Own code' });
      expect(reply.status).toBe(201);
      const body = reply.body;
      expect(body.agent).toMatchObject({ id: expect.any(String), handle: '@scout', displayName: 'Scout' });
      expect(body.agent_key).toMatch(/^svca_[A-Za-z0-9_-]{43}$/);
      expect(Math.abs(Date.parse(body.key_expires_at) - (Date.now() + 90 * DAY))).toBeLessThan(60_000);
      expect(body.link_url).toMatch(new RegExp(`^${base}/link#svcc_[A-Za-z0-9_-]{43}$`));
      expect(body.allowance).toEqual({ limit: 20, remaining: 20, per: 'day' });
      expect(typeof body.note).toBe('string');
      expect(body.mcp).toBe(`${base}/mcp`);
      expect(body.rest).toBe(`${base}/api/v1/tools`);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');

      const used = await rest(server, body.agent_key, 'create_hub', { name: 'Scout camp' });
      expect(used.status).toBe(200);
    });

    it('refuses invite together with hub as 400 invalid', async () => {
      const before = await count('participants');
      const reply = await postJson(`${server.url}/api/v1/agents/register`, { name: 'Both', hub: 'some-hub', invite: 'svci_x' });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid');
      expect(await count('participants')).toBe(before);
    });

    it('answers a missing hub as a private one (a request, no hub named) and still returns the key', async () => {
      const reply = await postJson(`${server.url}/api/v1/agents/register`, { name: 'Lost', hub: 'no-such-hub' });
      expect(reply.status).toBe(201);
      expect(reply.body.agent_key).toMatch(/^svca_/);
      expect(reply.body).toMatchObject({ joined: false, requested: true });
      expect(reply.body).not.toHaveProperty('hub');
      expect(reply.body.next).toEqual([{ call: 'join_hub', url: `${base}/api/v1/tools/join_hub`, body: { hub: 'no-such-hub' } }]);
      expect((await rest(server, reply.body.agent_key, 'create_hub', { name: 'Own place' })).status).toBe(200);
    });
  });

  describe('POST /api/v1/agents/key', () => {
    it('renews the key: the new one works and the old one keeps working for an hour', async () => {
      const agent = await registerAgent(server, 'Renewer');
      const reply = await renew(agent.key);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        text: expect.any(String),
        data: {
          agent_key: expect.stringMatching(/^svca_[A-Za-z0-9_-]{43}$/),
          key_expires_at: expect.any(String),
          previous_key_expires_at: expect.any(String),
          status: 'rotated',
          // As in every reply of a linked agent.
          linked_to: { id: expect.any(String), name: expect.any(String), handle: expect.any(String) },
        },
        api: '1',
      });
      const { agent_key: fresh, key_expires_at, previous_key_expires_at } = reply.body.data;
      expect(fresh).not.toBe(agent.key);
      expect(Math.abs(Date.parse(key_expires_at) - (Date.now() + 90 * DAY))).toBeLessThan(60_000);
      expect(Math.abs(Date.parse(previous_key_expires_at) - (Date.now() + 3_600_000))).toBeLessThan(60_000);

      const made = await rest(server, fresh, 'create_hub', { name: 'Renewed' });
      expect(made.status).toBe(200);
      const opened = await rest(server, agent.key, 'open_hub', { hub: made.body.data.slug });
      expect(opened.status).toBe(200);
    });

    it('allows five renewals a day; the sixth is 429 rate_limited with Retry-After', async () => {
      const agent = await registerAgent(server, 'Eager renewer');
      for (let n = 1; n <= 5; n++) expect((await renew(agent.key)).status).toBe(200);
      const sixth = await renew(agent.key);
      expect(sixth.status).toBe(429);
      expect(sixth.body.error).toBe('rate_limited');
      const retry = Number(sixth.headers.get('retry-after'));
      expect(retry).toBe(sixth.body.retry_after_seconds);
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(24 * 3600);
    });

    it('needs a Bearer key', async () => {
      const reply = await postJson(`${server.url}/api/v1/agents/key`, {});
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('unauthenticated');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    });
  });

  it('stores only SHA-256 hashes of keys and links', async () => {
    const reply = await postJson(`${server.url}/api/v1/agents/register`, { name: 'Hashed' });
    const key: string = reply.body.agent_key;
    const link = reply.body.link_url.split('#')[1] as string;
    const renewed: string = (await renew(key)).body.data.agent_key;

    const rows = (await server.core.db.pool.anyFirst(sql.unsafe`SELECT row_to_json(c)::text AS row FROM credentials c`)) as string[];
    for (const secret of [key, link, renewed]) {
      const random = secret.slice(secret.indexOf('_') + 1);
      expect(rows.some((row) => row.includes(random))).toBe(false);
    }
    const hashes = (await server.core.db.pool.anyFirst(sql.unsafe`SELECT secret_hash FROM credentials`)) as string[];
    expect(hashes).toEqual(expect.arrayContaining([sha256(key), sha256(link), sha256(renewed)]));
  });

  describe('with registration closed (SVC_GUEST_AGENTS unset)', () => {
    let closed: TestServer;
    beforeAll(async () => {
      closed = await startTestServer(store, { SVC_GUEST_AGENTS: '' });
    });
    afterAll(() => closed?.close());

    it('answers 403 registration_not_open with sign_in_url and invite_help_url, creating nothing', async () => {
      const closedBase = closed.core.config.baseUrl;
      const reply = await postJson(`${closed.url}/api/v1/agents/register`, { name: 'Hopeful' });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({
        error: 'registration_not_open',
        message: expect.any(String),
        sign_in_url: expect.stringMatching(new RegExp(`^${closedBase}/`)),
        invite_help_url: expect.stringMatching(new RegExp(`^${closedBase}/`)),
      });
      const rows = (await closed.core.db.pool.oneFirst(sql.unsafe`
        SELECT (SELECT count(*) FROM participants) + (SELECT count(*) FROM credentials) AS n`)) as number;
      expect(rows).toBe(0);
    });
  });
});
