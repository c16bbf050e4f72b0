/**
 * The read benchmarks' baselines, each in a process of its own (started by `startBaseline` in
 * readSetup.ts) so that it shares neither event loop nor heap with the server it is set beside:
 *
 * - `mcp`: a bare stateless MCP server as the SDK documents it, with one trivial tool: a new
 *   `McpServer` and `StreamableHTTPServerTransport` per POST on `node:http`, answering in JSON as
 *   Dotpad does. No authentication, database or rendering: what the SDK alone costs per call.
 * - `koa`: one plain Koa route answering GET /t/:id with a fixed Markdown body and its ETag, or `304`
 *   when `If-None-Match` holds it. No middleware, no authentication, no database.
 * - `relay`: Hocuspocus' own `Server` with no extension and no hook but one that loads each pad
 *   from the state it was given: what relaying live changes alone costs, with no authentication,
 *   storage, limits or versions.
 * - `hocuspocus`: `@hocuspocus/server`'s own `Server` with a Database-style extension, as Hocuspocus'
 *   Database extension keeps documents: one row per document holding its whole state, read in one
 *   query and applied as one update. It writes the states it is given into a table of its own in the
 *   same database when it starts, and accepts any token. No access rules, size limit, versions or
 *   storing of changes: what Hocuspocus alone costs to open a stored document. It answers the
 *   benchmark's probes (probes.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { Server as HocuspocusServer, type onLoadDocumentPayload } from '@hocuspocus/server';
import Koa from 'koa';
import pg from 'pg';
import * as Y from 'yjs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { answerProbes, countStatements } from './probes.ts';

/** What the parent asks for, and what it is told once the baseline listens. */
export type BaselineRequest =
  | { kind: 'mcp' }
  | { kind: 'koa'; body: string; etag: string }
  /** `states`: each pad's Yjs state as an update, base64, by pad id. */
  | { kind: 'relay'; states: Record<string, string> }
  | { kind: 'hocuspocus'; databaseUrl: string; documents: { name: string; state: string }[] };
export type BaselineReady = { url: string };

/** The SDK's stateless example: a server and a transport per request, one trivial tool. */
function bareMcp() {
  const serverOf = () => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool(
      'echo',
      { description: 'Says the text back.', inputSchema: { text: z.string().describe('What to say back.') } },
      async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    return server;
  };
  const readBody = (request: IncomingMessage) =>
    new Promise<unknown>((resolve, reject) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (error) {
          reject(error);
        }
      });
      request.on('error', reject);
    });
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') {
      // Stateless, as the SDK's example: no stream to GET and no session to DELETE.
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    void (async () => {
      const server = serverOf();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, await readBody(request));
    })().catch((error: Error) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: error.message }));
    });
  });
}

/** One route on Koa and its router, with the headers the Markdown view sets for a signed-out reader. */
function plainKoa(body: string, etag: string) {
  const app = new Koa();
  const router = new Router();
  router.get('/t/:id', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=15');
    ctx.set('ETag', etag);
    if (ctx.get('if-none-match') === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'text/markdown; charset=utf-8';
    ctx.body = body;
  });
  app.use(router.routes());
  return createServer(app.callback());
}

/** Bare Hocuspocus, its pads loaded from the states given; a pad not given starts empty. */
function bareRelay(states: Record<string, string>) {
  const server = new HocuspocusServer({
    quiet: true,
    async onLoadDocument({ document, documentName }) {
      const state = states[documentName];
      if (state) Y.applyUpdate(document, Buffer.from(state, 'base64'));
    },
  });
  return server.httpServer;
}

/** Hocuspocus as its documentation sets it up, each document (`documents`, states in base64) one row of the table `bare_documents`. */
async function bareHocuspocus(databaseUrl: string, documents: { name: string; state: string }[]): Promise<BaselineReady> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await pool.query('CREATE TABLE IF NOT EXISTS bare_documents (name text PRIMARY KEY, state bytea NOT NULL)');
  for (const { name, state } of documents) {
    await pool.query('INSERT INTO bare_documents (name, state) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET state = excluded.state', [name, Buffer.from(state, 'base64')]);
  }
  countStatements();
  const server = new HocuspocusServer({
    quiet: true,
    stopOnSignals: false,
    address: '127.0.0.1',
    port: 0,
    extensions: [
      {
        async onAuthenticate() {},
        // What the Database extension's `fetch` does: one query, one update applied.
        async onLoadDocument({ documentName, document }: onLoadDocumentPayload) {
          const { rows } = await pool.query<{ state: Buffer }>('SELECT state FROM bare_documents WHERE name = $1', [documentName]);
          if (rows[0]) Y.applyUpdate(document, rows[0].state);
        },
      },
    ],
  });
  await server.listen();
  answerProbes(server.hocuspocus);
  process.on('message', (message: unknown) => {
    if (message !== 'stop') return;
    void server.destroy().then(() => pool.end()).then(() => process.exit(0));
  });
  return { url: `http://127.0.0.1:${server.address.port}` };
}

process.once('message', (request: BaselineRequest) => {
  if (request.kind === 'hocuspocus') {
    void bareHocuspocus(request.databaseUrl, request.documents).then((ready) => process.send!(ready satisfies BaselineReady));
    return;
  }
  const server = request.kind === 'relay' ? bareRelay(request.states) : request.kind === 'mcp' ? bareMcp() : plainKoa(request.body, request.etag);
  server.listen(0, '127.0.0.1', () => {
    process.on('message', (message: unknown) => {
      if (message !== 'stop') return;
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
    process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } satisfies BaselineReady);
  });
});
