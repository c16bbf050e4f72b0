/**
 * The read benchmarks' baselines, each in a process of its own (started by `startBaseline` in
 * readSetup.ts) so that it shares neither event loop nor heap with the server it is set beside:
 *
 * - `mcp`: a bare stateless MCP server as the SDK documents it, with one trivial tool: a new
 *   `McpServer` and `StreamableHTTPServerTransport` per POST on `node:http`, answering in JSON as
 *   Dotpad does. No authentication, database or rendering: what the SDK alone costs per call.
 * - `koa`: one plain Koa route answering GET /t/:id with a fixed Markdown body and its ETag, or `304`
 *   when `If-None-Match` holds it. No middleware, no authentication, no database.
 * - `hocuspocus`: Hocuspocus' own `Server` with no extension and no hook but one that loads each pad
 *   from the state it was given: what relaying live changes alone costs, with no authentication,
 *   storage, limits or versions.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as Y from 'yjs';
import { Server as HocuspocusServer } from '@hocuspocus/server';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** What the parent asks for, and what it is told once the baseline listens. */
export type BaselineRequest =
  | { kind: 'mcp' }
  | { kind: 'koa'; body: string; etag: string }
  /** `states`: each pad's Yjs state as an update, base64, by pad id. */
  | { kind: 'hocuspocus'; states: Record<string, string> };
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
function bareHocuspocus(states: Record<string, string>) {
  const server = new HocuspocusServer({
    quiet: true,
    async onLoadDocument({ document, documentName }) {
      const state = states[documentName];
      if (state) Y.applyUpdate(document, Buffer.from(state, 'base64'));
    },
  });
  return server.httpServer;
}

process.once('message', (request: BaselineRequest) => {
  const server = request.kind === 'hocuspocus' ? bareHocuspocus(request.states) : request.kind === 'mcp' ? bareMcp() : plainKoa(request.body, request.etag);
  server.listen(0, '127.0.0.1', () => {
    process.on('message', (message: unknown) => {
      if (message !== 'stop') return;
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
    process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } satisfies BaselineReady);
  });
});
