import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, toAppError } from '../schema/errors.ts';
import { authenticateBearer } from '../server/core/identity/credentials.ts';
import { BODY_LIMITS, readText } from './http/body.ts';
import { bearerToken, challenge } from './http/auth.ts';
import { openCors, requestGone } from './http/middleware.ts';
import { invoke } from './tools/invoke.ts';
import { agentListing, hostListing } from './tools/listing.ts';
import { modelTools, tools } from './tools/registry.ts';
import { mcpError, mcpResult, type EncodedParts } from './tools/render.ts';
import { listViewResources, readViewResource } from './mcpApps.ts';

export const SERVER_VERSION = '0.1.0';

const MCP_PATH = /^\/mcp\/?$/i;

/** Built once: the listing agent keys see (`agentListing`), and the one assistant hosts see over OAuth (`hostListing`). */
const listing = agentListing(modelTools);
const hostTools = hostListing(tools);

/**
 * Built once: the SDK checks elicitation answers with it, which this server never asks for; left to
 * itself each server builds its own Ajv, formats and all.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

const mcpCors = openCors({
  methods: 'GET, POST, DELETE, OPTIONS',
  allowHeaders: 'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  exposeHeaders: 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
});

const PARAMS_SHAPE = 'params must be an object: {"name": <tool>, "arguments": {...}}';

/** `tools/call` params as MCP defines them. */
const CallParams = z.object(
  {
    name: z.string({ error: 'name must be the name of a tool, a string' }),
    // Not an object, they are the tool's input failure: the pipeline answers it.
    arguments: z.unknown().optional(),
  },
  { error: PARAMS_SHAPE },
);

const invalidParams = (detail: string) => new McpError(ErrorCode.InvalidParams, `Invalid params: ${detail}`);

/**
 * The request the `tools/call` handler is registered with. With the SDK's `CallToolRequestSchema`
 * there, params that did not fit failed the SDK's parse ahead of its own check, and came back as an
 * internal error (-32603) holding zod's issues. Here our schema checks them and throws the SDK's own
 * error, which leaves the parse as it is and is answered with its code: Invalid params (-32602).
 * The SDK's server checks the parsed params again, and would refuse `arguments` that are no object
 * as Invalid params; they go past that check as `input`, so the pipeline refuses them as it refuses
 * every other input, with an isError result (SPEC part 4 "MCP result shape").
 */
const CallRequest = z.object({
  method: z.literal('tools/call'),
  params: z.unknown().transform((params) => {
    const parsed = CallParams.safeParse(params);
    if (!parsed.success) throw invalidParams(parsed.error.issues.map((issue) => issue.message).join('; '));
    const { arguments: input, ...rest } = parsed.data;
    return { ...rest, input };
  }),
});

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A `tools/call` whose params is no object at all (a string, an array) is no JSON-RPC request to the
 * SDK's transport, which refuses the whole POST as unreadable (400, -32700). It is answered here as
 * the handler answers params that are an object but not `{name, arguments}`; inside a batch the
 * transport's refusal stands, as for any message it cannot read.
 */
function paramsNotAnObject(payload: unknown): object | undefined {
  if (!isObject(payload) || payload.jsonrpc !== '2.0' || payload.method !== 'tools/call') return undefined;
  const { id, params } = payload;
  if ((typeof id !== 'string' && typeof id !== 'number') || params === undefined || isObject(params)) return undefined;
  const { code, message } = invalidParams(PARAMS_SHAPE);
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * The caller, handed to the SDK with the request as its auth info; `encoded` is where the tool call's
 * handler leaves its result's text and data as JSON, for `encodeAnswer`.
 */
const callerInfo = (actor: Actor, gone: AbortSignal, encoded: { parts?: EncodedParts } = {}): AuthInfo => ({
  token: '',
  clientId: actor.id,
  scopes: [...actor.scopes],
  extra: { actor, gone, encoded },
});

function callerOf(extra: { authInfo?: AuthInfo }): Actor {
  const actor = extra.authInfo?.extra?.actor as Actor | undefined;
  if (!actor) throw new Error('an MCP request reached the server without its caller');
  return actor;
}

const goneOf = (extra: { authInfo?: AuthInfo }) => extra.authInfo?.extra?.gone as AbortSignal | undefined;
const encodedOf = (extra: { authInfo?: AuthInfo }) => extra.authInfo?.extra?.encoded as { parts?: EncodedParts } | undefined;

/** Stand-ins for the text and data of an answer while it is encoded: unguessable, and no JSON escape of anything else. */
const TEXT_MARK = `\u0000${randomUUID()}`;
const DATA_MARK = `\u0000${randomUUID()}`;
const TEXT_MARK_JSON = JSON.stringify(TEXT_MARK);
const DATA_MARK_JSON = JSON.stringify(DATA_MARK);

const sameEntries = (a: unknown, b: Record<string, unknown>) => {
  if (!isObject(a)) return false;
  const keys = Object.keys(a);
  const others = Object.keys(b);
  return keys.length === others.length && keys.every((key, i) => key === others[i] && a[key] === b[key]);
};

/**
 * `JSON.stringify(answer)`, the same text, as UTF-8, with a tool result's text and data not encoded a
 * second time: measuring them against the budget (`mcpResult`) encoded them already, and what a kept
 * page shows was encoded, to bytes too, once for all its readers (render.ts). The answer holds them as
 * the SDK passed them on (its check of the result copies the data's top level, the same values in the
 * same order); anything else is encoded whole.
 */
export function encodeAnswer(answer: JSONRPCMessage, parts: EncodedParts | undefined): Buffer {
  if (!parts || !('result' in answer)) return Buffer.from(JSON.stringify(answer));
  const { result } = answer;
  const content = result.content;
  if (!Array.isArray(content) || content.length !== 1 || !isObject(content[0]) || content[0].text !== parts.text || !sameEntries(result.structuredContent, parts.data)) {
    return Buffer.from(JSON.stringify(answer));
  }
  const json = JSON.stringify({ ...answer, result: { ...result, content: [{ ...content[0], text: TEXT_MARK }], structuredContent: DATA_MARK } });
  const marks = [
    { at: json.indexOf(TEXT_MARK_JSON), length: TEXT_MARK_JSON.length, pieces: parts.textJson },
    { at: json.indexOf(DATA_MARK_JSON), length: DATA_MARK_JSON.length, pieces: parts.dataJson },
  ].sort((x, y) => x.at - y.at);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const { at, length, pieces } of marks) {
    chunks.push(Buffer.from(json.slice(from, at)), ...pieces.bytes());
    from = at + length;
  }
  chunks.push(Buffer.from(json.slice(from)));
  return Buffer.concat(chunks);
}

/**
 * One SDK server per request: a server shared by concurrent stateless requests mixes up their
 * answers (DESIGN.md), and with the listing and the validator built once a server costs only its
 * handlers. `initialize` is answered alike for every client.
 */
function mcpServer(core: Core): Server {
  const server = new Server(
    { name: 'svc', title: 'Dotpad', version: SERVER_VERSION, websiteUrl: core.config.baseUrl },
    { capabilities: { tools: {}, resources: {} }, jsonSchemaValidator },
  );
  // What the transport refused has been answered already (400, 406, 415); what is left here is a
  // message the server could not send or read, which no client will see.
  server.onerror = (error) => core.log.debug('mcp protocol error', { message: error.message });
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => ({ tools: callerOf(extra).via === 'oauth' ? hostTools : listing }));
  // The MCP Apps view (api/mcpApps.ts): one resource, listed and read alike for every connection.
  server.setRequestHandler(ListResourcesRequestSchema, () => listViewResources(core));
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => {
    const read = readViewResource(core, params.uri);
    if (!read) throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${params.uri}: this server has one, ui://svc/view-v1.html.`);
    return read;
  });
  server.setRequestHandler(CallRequest, async ({ params }, extra) => {
    const caller = callerOf(extra);
    try {
      // An assistant host's connection also reaches the app-only tools its view calls.
      const { result, viewToken } = await invoke(core, caller, params.name, params.input ?? {}, caller.via === 'oauth' ? 'host' : 'model', goneOf(extra));
      return mcpResult(result, caller.via === 'oauth' ? { view: true, viewToken } : undefined, encodedOf(extra));
    } catch (error) {
      // Our own errors become isError results with the same code REST gives, before the SDK flattens them.
      const appError = toAppError(error);
      if (appError.code === 'internal') core.log.error('tool failed', { tool: params.name, error });
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

/**
 * The POST as the SDK's transport reads it: the headers it looks at, and the body unless it was
 * parsed here. Any Accept is answered, `application/json` alone too: one JSON body is all this
 * server sends, but the transport refuses a client that does not list `text/event-stream` as well.
 * The key stays out: the caller goes with the request as its auth info.
 */
function sdkRequest(ctx: Context, body: string | undefined): Request {
  return new Request(ctx.href, { method: 'POST', headers: sdkHeaders(ctx), body });
}

/** The headers of `sdkRequest`, as the SDK hands them to the server's handlers (names in order). */
function sdkHeaders(ctx: Context): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
  for (const name of ['content-type', 'mcp-protocol-version']) {
    const value = ctx.get(name);
    if (value) headers[name] = value;
  }
  return headers;
}

/**
 * The POST that is one request, other than `initialize`, that the SDK's transport would hand its
 * server as it is: JSON by its Content-Type, of a protocol version the SDK speaks (or none named), a
 * JSON-RPC request by the SDK's own schema. Anything else (batches, notifications, initialize, a
 * header the transport refuses) goes through the transport.
 */
function oneRequest(ctx: Context, payload: unknown): JSONRPCRequest | undefined {
  if (!isObject(payload) || ctx.get('content-type') !== 'application/json') return undefined;
  const version = ctx.get('mcp-protocol-version');
  if (version && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  const parsed = JSONRPCMessageSchema.safeParse(payload);
  if (!parsed.success || !isJSONRPCRequest(parsed.data) || parsed.data.method === 'initialize') return undefined;
  return parsed.data;
}

/**
 * One request answered by the server as the SDK's stateless transport has it answered, without the
 * web Request and Response the transport reads and writes: the server's answer comes back as the
 * message it sends, for this endpoint to send as JSON (what the transport does with it, in JSON mode).
 * What the server sends that is no answer (a notification, in JSON mode) is dropped, as there.
 */
function answerOf(server: Server, request: JSONRPCRequest, extra: MessageExtraInfo): Promise<JSONRPCMessage> {
  return new Promise((resolve, reject) => {
    const transport: Transport = {
      start: async () => {},
      close: async () => {},
      send: async (message) => {
        // The server's answer holds a result or an error (checking it by the SDK's schemas, a parse of
        // the whole answer, is a cost every call would pay).
        if ('result' in message || 'error' in message) resolve(message);
      },
    };
    server.connect(transport).then(() => transport.onmessage!(request, extra), reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The MCP endpoint, `/mcp` (SPEC part 4 "MCP endpoint"): the SDK's streamable HTTP transport,
 * stateless and answering in JSON, with a server of its own per request. A POST of one request
 * (every agent's call) skips the transport's web Request and Response: the server answers it as the
 * transport would have it answer (`oneRequest`, `answerOf`), and the answer is encoded once. The transport is the
 * web-standard one that the SDK's Node transport wraps: the wrapper writes the Node response itself,
 * past Koa's headers, log and error handling, and reads the Accept header from the raw request. One
 * path needs no router: a plain middleware, mounted before the routers, spares every agent call their
 * matching.
 */
export function mcpEndpoint(core: Core): Middleware {
  const handle = async (ctx: Context) => {
    if (ctx.method === 'GET' && ctx.accepts('html', 'text/event-stream', 'json') === 'html') {
      ctx.type = 'html';
      ctx.body = BROWSER_PAGE(core.config.baseUrl);
      return;
    }
    const token = bearerToken(ctx);
    let actor: Actor;
    try {
      if (!token) throw new AppError('unauthenticated', 'This endpoint needs "Authorization: Bearer <agent key or OAuth access token>"; an assistant host gets a token through OAuth, starting from resource_metadata.');
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
      // Stateless: there is no held-open stream to GET (the transport would open one) and no session to DELETE.
      ctx.set('Allow', 'POST, OPTIONS');
      ctx.status = 405;
      ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless; POST JSON-RPC requests.' }, id: null };
      return;
    }
    // Read here rather than by the transport, so an oversized body is refused as on every other route.
    const text = await readText(ctx, BODY_LIMITS.mcp);
    // Unparsed, the text goes to the transport, which answers it as it would (415 or -32700).
    const payload = parseJson(text);
    const refused = paramsNotAnObject(payload);
    if (refused) {
      ctx.body = refused;
      return;
    }
    const encoded: { parts?: EncodedParts } = {};
    const authInfo = callerInfo(actor, requestGone(ctx), encoded);
    const request = oneRequest(ctx, payload);
    if (request) {
      const answer = await answerOf(mcpServer(core), request, { authInfo, requestInfo: { headers: sdkHeaders(ctx), url: new URL(ctx.href) } });
      ctx.status = 200;
      ctx.set('Content-Type', 'application/json');
      // Encoded once, sent as it is (as below).
      ctx.body = encodeAnswer(answer, encoded.parts);
      return;
    }
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // Connecting only wires the handlers; the transport's start does nothing.
    await mcpServer(core).connect(transport);
    const response = await transport.handleRequest(sdkRequest(ctx, payload === undefined ? text : undefined), {
      authInfo,
      parsedBody: payload,
    });
    // The server and its transport are left to the collector: every request of the POST has been
    // answered and they hold no timers; closing them would abort each finished handler's
    // bookkeeping, an error built per request.
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    // Bytes as the SDK encoded them: Koa sends them as they are, with no decoding, measuring or
    // encoding again. The bodiless 202 becomes an empty body rather than null, which Koa would
    // answer with 204.
    ctx.body = Buffer.from(await response.arrayBuffer());
  };

  // As the router matched it: any case, with or without a trailing slash.
  return (ctx, next) => (MCP_PATH.test(ctx.path) ? mcpCors(ctx, () => handle(ctx)) : next());
}
