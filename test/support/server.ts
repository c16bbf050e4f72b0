import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HocuspocusProvider } from '@hocuspocus/provider';
import * as Y from 'yjs';
import { readBlocks } from '../../sync/blocks.ts';
import { liveConnections } from '../../sync/syncContext.ts';
import pg from 'pg';
import WS from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, type Running } from '../../api/app.ts';
import { loadConfig } from '../../server/config.ts';
import { forgetFacts } from '../../server/core/kernel/pace.ts';

export type Store = 'pglite' | 'postgres';

/**
 * The stores every integration suite runs against: PGlite always, Postgres when TEST_DATABASE_URL
 * names a server. In CI Postgres is required: a suite that would skip it fails instead.
 */
export function stores(): Store[] {
  if (process.env.TEST_DATABASE_URL) return ['pglite', 'postgres'];
  if (process.env.CI === 'true') throw new Error('CI=true needs TEST_DATABASE_URL: the Postgres suites may not be skipped.');
  return ['pglite'];
}

/** A fresh, empty Postgres database for one test file, dropped when the file is done. */
async function freshPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `dotpad_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({ connectionString: adminUrl });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}

export type TestServer = Running & { store: Store };
/** Whatever answers HTTP at a URL: a test server, or one in another process. */
export type Reachable = Pick<TestServer, 'url'>;

/**
 * A store that outlives one server, for restart tests: a PGlite directory or a Postgres database.
 * Pass `env` to each server started on it; `drop()` when done.
 */
export async function durableStore(store: Store): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (store === 'postgres') {
    const database = await freshPostgres();
    return { env: { DATABASE_URL: database.url }, drop: () => database.drop() };
  }
  const dir = await mkdtemp(join(tmpdir(), 'dotpad-test-'));
  return { env: { SVC_DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
}

/** The real server on port 0 against a fresh database of the given store (or the one `env` names). */
export async function startTestServer(store: Store, env: Record<string, string> = {}): Promise<TestServer> {
  const ownsDatabase = store === 'postgres' && env.DATABASE_URL === undefined;
  const database = ownsDatabase ? await freshPostgres() : undefined;
  const config = loadConfig({
    PORT: '0',
    SVC_DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    SVC_GUEST_AGENTS: '1',
    // Suites make many writes fast: the pace is loosened a hundredfold, and pace.test.ts sets it back to 1.
    SVC_PACE_SCALE: '100',
    // A write waits for a connection as long as the server allows, not 2 s: on a loaded machine racing
    // writes queue longer, and only brakes.test.ts (which sets its own) means to see them turned away.
    SVC_WRITE_WAIT_MS: '30000',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const running = await startServer(config, { host: '127.0.0.1' });
  return {
    ...running,
    store,
    async close() {
      await running.close();
      await database?.drop();
    },
  };
}

/** Two instances of the server on one fresh Postgres database, with Redis between them (and `more` configuration); closed (and the database dropped) by `closers`. */
export async function instancePair(redisUrl: string, closers: (() => void | Promise<void>)[], more: Record<string, string> = {}) {
  const store = await durableStore('postgres');
  closers.push(() => store.drop());
  const env = { ...more, ...store.env, REDIS_URL: redisUrl };
  const a = await startTestServer('postgres', env);
  closers.push(() => a.close());
  const b = await startTestServer('postgres', env);
  closers.push(() => b.close());
  return [a, b] as const;
}

/**
 * A change made straight to the store, as the server's own writes are made (`db.writeStatement`):
 * reads the server keeps are dropped at once, as they are after any write of its own, and so are the
 * facts the limits keep a few seconds (a poke stands in for a flow that forgets them: a confirmed
 * address, a pause).
 */
export async function poke(server: Pick<TestServer, 'core'>, query: Parameters<TestServer['core']['db']['pool']['query']>[0]) {
  const done = await server.core.db.writeStatement((conn) => conn.query(query));
  forgetFacts(server.core);
  return done;
}

export type Reply = { status: number; headers: Headers; body: any; text: string };

export async function request(url: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: any = undefined;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body, text };
}

/** A REST tool call with a Bearer key. */
export function rest(server: Reachable, key: string | undefined, tool: string, args: unknown): Promise<Reply> {
  return request(`${server.url}/api/v1/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(args),
  });
}

/**
 * An agent and its key. By default a person adds it under Settings (linked to them, so it has no
 * daily allowance), as on the reference deployment; with `unlinked`, it registers itself the way an
 * agent does where registration is open, and has 20 writes a day.
 */
export async function registerAgent(server: Reachable, name = 'Agent', options: { unlinked?: boolean } = {}): Promise<{ key: string; id: string; handle: string }> {
  let reply: Reply;
  if (options.unlinked) {
    reply = await request(`${server.url}/api/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
  } else {
    const human = await signIn(server, `${name}'s person`, `person-${randomUUID()}@example.com`);
    reply = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: human.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name }),
    });
  }
  if (reply.status !== 201) throw new Error(`register failed: ${reply.status} ${reply.text}`);
  return { key: reply.body.agent_key, id: reply.body.agent.id, handle: reply.body.agent.handle };
}

/** The MCP SDK's own client over streamable HTTP, authenticated with an agent key. */
export async function mcpClient(server: Reachable, key: string): Promise<Client> {
  const client = new Client({ name: 'dotpad-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

/** A person signed in through the development form; returns the session cookie header. */
export async function signIn(server: Reachable, name: string, email: string): Promise<{ cookie: string; id: string }> {
  const reply = await request(`${server.url}/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1' },
    body: JSON.stringify({ name, email }),
  });
  if (reply.status !== 200) throw new Error(`sign-in failed: ${reply.status} ${reply.text}`);
  const cookie = reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
  return { cookie, id: reply.body.participant.id };
}

/** A tool call from the web app: session cookie and the x-svc header. */
export function appTool(server: Reachable, cookie: string, tool: string, args: unknown): Promise<Reply> {
  return request(`${server.url}/api/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc': '1', cookie },
    body: JSON.stringify(args),
  });
}

/** A request through node:http, for what fetch will not send (a `Host` header of our choosing, a source address: `localAddress`). */
export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, localAddress: options.localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The credentials of the live connections this instance holds now: one it closes leaves at once. */
export const liveCredentials = (server: Pick<TestServer, 'core'>) => [...liveConnections(server.core.sync.hocuspocus)].map(({ context }) => context?.credentialId ?? null);

/** A Yjs client of a pad over the real WebSocket, as an editor or another agent would connect. */
export async function openProvider(server: Pick<TestServer, 'url'>, padId: string, token: string | null) {
  const document = new Y.Doc();
  let denied: string | null = null;
  const provider = new HocuspocusProvider({
    url: `${server.url.replace('http', 'ws')}/sync`,
    name: padId,
    document,
    token,
    onAuthenticationFailed: ({ reason }) => {
      denied = reason;
    },
  });
  const synced = new Promise<void>((resolve) => {
    if (provider.isSynced) resolve();
    provider.on('synced', () => resolve());
  });
  const fragment = document.getXmlFragment('default');
  return {
    provider,
    document,
    fragment,
    synced,
    denied: () => denied,
    blocks: () => readBlocks(fragment),
    text: () => readBlocks(fragment).map((b) => b.text).join('\n\n'),
    close() {
      provider.destroy();
      document.destroy();
    },
  };
}

/**
 * `n` editors of a pad, opened one after another, each synced (within 10 s) before the next opens:
 * behind node:cluster or a round-robin proxy, consecutive connections go to the instances in turn.
 * Each is closed by `closers`.
 */
export async function openEditorsInTurn(server: Pick<TestServer, 'url'>, padId: string, token: string, n: number, closers: (() => void | Promise<void>)[]) {
  const editors: Awaited<ReturnType<typeof openProvider>>[] = [];
  for (let i = 0; i < n; i++) {
    const editor = await openProvider(server, padId, token);
    closers.push(() => editor.close());
    await Promise.race([editor.synced, new Promise((_, reject) => setTimeout(() => reject(new Error(`editor ${i + 1} did not sync within 10 s`)), 10_000))]);
    editors.push(editor);
  }
  return editors;
}

/**
 * What the web app's pad page does when the server closes its live connection with a reason (the pad
 * was locked, or its person must now suggest): a new socket, which authenticates again and learns its
 * new scope.
 */
export async function reconnect(provider: HocuspocusProvider) {
  const socket = provider.configuration.websocketProvider;
  const closed = new Promise((resolve) => socket.on('disconnect', resolve));
  socket.disconnect();
  await closed;
  await socket.connect();
}

/**
 * A person's Yjs client of a pad over the real WebSocket, with their session cookie as a browser
 * sends it: the page's provider, without the page.
 */
export function personClient(server: Reachable, padId: string, cookie: string) {
  const document = new Y.Doc();
  const socket = class extends WS {
    constructor(url: string) {
      super(url, { headers: { cookie, origin: server.url } });
    }
  };
  // The provider passes WebSocketPolyfill on to the socket it makes, though its type leaves it out.
  const provider = new HocuspocusProvider({ url: `${server.url.replace('http', 'ws')}/sync`, name: padId, document, WebSocketPolyfill: socket } as never as ConstructorParameters<typeof HocuspocusProvider>[0]);
  const synced = new Promise<void>((resolve) => provider.on('synced', () => resolve()));
  const fragment = document.getXmlFragment('default');
  /** Resolves once the server acknowledged everything sent. */
  const acknowledged = () =>
    new Promise<void>((resolve) => {
      if (provider.isSynced && provider.unsyncedChanges === 0) return resolve();
      const done = ({ number }: { number: number }) => {
        if (number !== 0) return;
        provider.off('unsyncedChanges', done);
        resolve();
      };
      provider.on('unsyncedChanges', done);
    });
  return { provider, document, fragment, synced, acknowledged, blocks: () => readBlocks(fragment) };
}

/** Types into the Y text of one block, as a person's editor would. */
export function typeInto(document: Y.Doc, fragment: Y.XmlFragment, blockId: string, at: number | 'end', text: string) {
  const element = fragment.toArray().find((child) => child instanceof Y.XmlElement && child.getAttribute('id') === blockId) as Y.XmlElement | undefined;
  if (!element) throw new Error(`no block ${blockId}`);
  const yText = element.toArray().find((child) => child instanceof Y.XmlText) as Y.XmlText;
  document.transact(() => yText.insert(at === 'end' ? yText.length : at, text));
}
