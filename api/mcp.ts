import type { Context, Middleware } from 'koa';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Actor } from '../server/core/actor.ts';
import type { Core } from '../server/core/context.ts';
import { AppError, toAppError } from '../server/core/errors.ts';
import { authenticateBearer } from '../server/core/identity.ts';
import { BODY_LIMITS, readText } from './http/body.ts';
import { bearerToken, challenge } from './http/auth.ts';
import { ExchangeTransport, readMessages, rpcError, type McpReply } from './http/mcpExchange.ts';
import { openCors } from './http/middleware.ts';
import { invoke } from './tools/invoke.ts';
import { modelTools } from './tools/registry.ts';
import { mcpError, mcpResult } from './tools/render.ts';

export const SERVER_VERSION = '0.1.0';

const MCP_PATH = /^\/mcp\/?$/i;

/** Built once: the listing agent keys see (no output schemas, SPEC part 4 "What tools/list shows"). */
const listing = modelTools.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: z.toJSONSchema(tool.input, { io: 'input' }) as { type: 'object'; [key: string]: unknown },
  annotations: tool.annotations,
}));

const mcpCors = openCors({
  methods: 'GET, POST, DELETE, OPTIONS',
  allowHeaders: 'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  exposeHeaders: 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
});

/** The caller, as the exchange hands it to the SDK server with each request. */
const callerInfo = (actor: Actor): AuthInfo => ({ token: '', clientId: actor.id, scopes: [...actor.scopes], extra: { actor } });

function callerOf(extra: { authInfo?: AuthInfo }): Actor {
  const actor = extra.authInfo?.extra?.actor as Actor | undefined;
  if (!actor) throw new Error('an MCP request reached the server without its caller');
  return actor;
}

/**
 * The one SDK server of this instance: every request carries its caller (`extra.authInfo`), and
 * the server keeps nothing between requests. `initialize` is answered alike for every client.
 */
function mcpServer(core: Core): Server {
  const server = new Server(
    { name: 'svc', title: 'Dotpad', version: SERVER_VERSION, websiteUrl: core.config.baseUrl },
    { capabilities: { tools: {} } },
  );
  // What the SDK cannot hand back as an answer (a message it cannot send or read) is logged here.
  server.onerror = (error) => core.log.warn('mcp protocol error', { message: error.message });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const actor = callerOf(extra);
    try {
      const { result } = await invoke(core, actor, request.params.name, request.params.arguments ?? {}, 'model');
      return mcpResult(result);
    } catch (error) {
      // Our own errors become isError results with the same code REST gives, before the SDK flattens them.
      const appError = toAppError(error);
      if (appError.code === 'internal') core.log.error('tool failed', { tool: request.params.name, error });
      return mcpError(appError);
    }
  });
  return server;
}

const BROWSER_PAGE = (base: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dotpad MCP endpoint</title></head>
<body><h1>Dotpad MCP endpoint</h1>
<p>This address is for MCP clients, not browsers. Add <code>${base}/mcp</code> to your assistant or agent as a
streamable HTTP MCP server, with an agent key as the Bearer token.</p>
<p>Agents without MCP can use the REST mirror: <a href="${base}/openapi.json">${base}/openapi.json</a>.</p>
</body></html>`;

function answer(ctx: Context, reply: McpReply) {
  ctx.status = reply.status;
  // Koa would send the status text as the body of a bodiless 202.
  ctx.body = reply.body ?? '';
}

/**
 * The MCP endpoint, `/mcp`. One path needs no router: a plain middleware, mounted
 * before the routers, spares every agent call their matching.
 */
export function mcpEndpoint(core: Core): Middleware {
  const server = mcpServer(core);
  const exchange = new ExchangeTransport();
  // Connecting only attaches the transport's handlers (its start does nothing): settled at once.
  const connected = server.connect(exchange);

  const handle = async (ctx: Context) => {
    if (ctx.method === 'GET' && ctx.accepts('html', 'text/event-stream', 'json') === 'html') {
      ctx.type = 'html';
      ctx.body = BROWSER_PAGE(core.config.baseUrl);
      return;
    }
    const token = bearerToken(ctx);
    let actor: Actor;
    try {
      if (!token) throw new AppError('unauthenticated', 'This endpoint needs "Authorization: Bearer <agent key>".');
      actor = await authenticateBearer(core, token);
    } catch (error) {
      const appError = toAppError(error);
      if (appError.code !== 'unauthenticated') throw error;
      ctx.set('WWW-Authenticate', challenge(core, token ? appError.message : undefined));
      ctx.status = 401;
      ctx.body = { error: 'invalid_token', error_description: appError.message };
      return;
    }
    if (ctx.method !== 'POST') {
      // Stateless: there is no held-open stream to GET and no session to DELETE.
      ctx.set('Allow', 'POST, OPTIONS');
      return answer(ctx, rpcError(405, -32000, 'Method not allowed: this server is stateless; POST JSON-RPC requests.'));
    }
    if (!ctx.is('application/json')) {
      return answer(ctx, rpcError(415, -32000, 'Unsupported Media Type: send JSON-RPC as application/json.'));
    }
    const text = await readText(ctx, BODY_LIMITS.mcp);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return answer(ctx, rpcError(400, -32700, 'Parse error: the body is not JSON.'));
    }
    // Any Accept is answered, `application/json` alone too: one JSON body is all this server sends.
    const read = readMessages(payload, ctx.get('mcp-protocol-version') || undefined);
    if (!('messages' in read)) return answer(ctx, read);
    await connected;
    answer(ctx, await exchange.exchange(read.messages, callerInfo(actor)));
  };

  // As the router matched it: any case, with or without a trailing slash.
  return (ctx, next) => (MCP_PATH.test(ctx.path) ? mcpCors(ctx, () => handle(ctx)) : next());
}
