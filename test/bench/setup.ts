import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import * as Y from 'yjs';
import WebSocket from 'ws';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import { readBlocks } from '../../sync/blocks.ts';
import { rest, type Reachable } from '../support/server.ts';

/** A tool call over REST that must succeed; returns its `data`. */
export async function restOk(server: Reachable, key: string, tool: string, args: unknown): Promise<any> {
  const reply = await rest(server, key, tool, args);
  if (reply.status !== 200 && reply.status !== 201) throw new Error(`${tool} failed: ${reply.status} ${reply.text}`);
  return reply.body.data;
}

/** A hub and a pad in it with the given Markdown; returns the pad id, its version and its block ids. */
export async function makePad(server: Reachable, key: string, hubSlug: string, title: string, text: string) {
  const data = await restOk(server, key, 'create_pad', { hub: hubSlug, title, text });
  return { padId: String(data.pad_id), version: Number(data.version) };
}

/**
 * A Node Yjs client on the pad, the way the web editor connects: `@hocuspocus/provider` over a
 * WebSocket (the `ws` package), the agent key as token. Resolves once the first sync is done.
 */
export async function connectProvider(server: Reachable, key: string, padId: string) {
  const socket = new HocuspocusProviderWebsocket({
    url: `${server.url.replace(/^http/, 'ws')}/sync`,
    WebSocketPolyfill: WebSocket,
  });
  const provider = new HocuspocusProvider({ websocketProvider: socket, name: padId, token: key });
  provider.attach();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`provider for ${padId} did not sync within 10 s`)), 10_000);
    provider.on('synced', () => {
      clearTimeout(timer);
      resolve();
    });
    provider.on('authenticationFailed', ({ reason }: { reason: string }) => {
      clearTimeout(timer);
      reject(new Error(`provider refused: ${reason}`));
    });
  });
  return {
    provider,
    doc: provider.document,
    close() {
      provider.destroy();
      socket.destroy();
    },
  };
}

/**
 * Resolves with `performance.now()` at the first document update after which block `blockId` (or,
 * with no id, the first block) reads `text` in `doc`, checked with the server's own `readBlocks`.
 */
export function whenText(doc: Y.Doc, blockId: string | null, text: string, timeoutMs = 5_000): Promise<number> {
  const fragment = doc.getXmlFragment('default');
  const shows = () => {
    const blocks = readBlocks(fragment);
    const block = blockId === null ? blocks[0] : blocks.find((b) => b.id === blockId);
    return block?.text === text;
  };
  if (shows()) return Promise.resolve(performance.now());
  return new Promise((resolve, reject) => {
    const onUpdate = () => {
      if (!shows()) return;
      const seen = performance.now();
      doc.off('update', onUpdate);
      clearTimeout(timer);
      resolve(seen);
    };
    const timer = setTimeout(() => {
      doc.off('update', onUpdate);
      reject(new Error(`the provider never showed ${JSON.stringify(text)} within ${timeoutMs} ms`));
    }, timeoutMs);
    doc.on('update', onUpdate);
  });
}

export type ToolResult = { isError?: boolean; content: { text: string }[]; structuredContent?: Record<string, any> };

type Post = (message: object, headers?: Record<string, string>) => Promise<{ status: number; body: string }>;

const PROTOCOL_VERSION = '2025-06-18';

/**
 * The MCP session an agent keeps over streamable HTTP, given a way to POST one JSON-RPC message:
 * `initialize`, then `notifications/initialized`, then calls with `MCP-Protocol-Version`.
 */
async function mcpSession(post: Post) {
  let nextId = 1;
  const call = async (method: string, params: object) => {
    const reply = await post({ jsonrpc: '2.0', id: nextId++, method, params }, { 'mcp-protocol-version': PROTOCOL_VERSION });
    const answer = reply.status === 200 ? JSON.parse(reply.body) : null;
    if (!answer?.result) throw new Error(`${method} failed: ${reply.status} ${reply.body}`);
    return answer.result;
  };
  const hello = await call('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'dotpad-bench', version: '1' } });
  if (hello.serverInfo?.name !== 'svc') throw new Error(`unexpected server: ${JSON.stringify(hello.serverInfo)}`);
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': PROTOCOL_VERSION });
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
  return {
    callTool: (request: { name: string; arguments: Record<string, unknown> }): Promise<ToolResult> => call('tools/call', request),
  };
}

/** The headers every agent request carries. */
const requestHeaders = (key: string, body: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${key}`,
  'content-length': String(Buffer.byteLength(body)),
});

/**
 * An MCP client as a Node agent without the SDK would write it: JSON-RPC posted over one kept-alive
 * `node:http` connection. The SDK's client adds the cost of `fetch` and of its own validation on the
 * benchmark's side (`mcpClient` from the tests' support is the SDK's).
 */
export async function httpMcpClient(server: Reachable, key: string) {
  const url = new URL(`${server.url}/mcp`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post: Post = (message, headers = {}) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(message);
      const request = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { ...requestHeaders(key, body), ...headers } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: text }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const session = await mcpSession(post);
  return { ...session, close: async () => agent.destroy() };
}

/**
 * JSON posted as HTTP/1.1 requests written whole on one kept-alive TCP socket (Nagle's algorithm
 * off), each reply read by its Content-Length: the least a client can spend on a request, with no
 * request object, header map or parser of its own per call (`node:http` builds all three). One
 * request at a time; a reply without a Content-Length is an error.
 */
export async function socketPoster(target: string, headers: Record<string, string> = {}) {
  const url = new URL(target);
  const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true });
  await once(socket, 'connect');
  let received: Buffer = Buffer.alloc(0);
  let waiting: { resolve: (reply: { status: number; body: string }) => void; reject: (error: Error) => void } | null = null;
  const fail = (error: Error) => {
    const pending = waiting;
    waiting = null;
    pending?.reject(error);
  };
  const readReply = () => {
    const end = received.indexOf('\r\n\r\n');
    if (end < 0 || !waiting) return;
    const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
    const replyHeaders = new Map(lines.map((header) => [header.slice(0, header.indexOf(':')).trim().toLowerCase(), header.slice(header.indexOf(':') + 1).trim()]));
    if (!replyHeaders.has('content-length')) return fail(new Error(`a reply without Content-Length: ${statusLine}`));
    const length = Number(replyHeaders.get('content-length'));
    if (received.length < end + 4 + length) return;
    const body = received.subarray(end + 4, end + 4 + length).toString('utf8');
    received = received.subarray(end + 4 + length);
    const pending = waiting;
    waiting = null;
    pending.resolve({ status: Number(statusLine!.split(' ')[1]), body });
  };
  socket.on('data', (chunk: Buffer) => {
    received = received.length ? Buffer.concat([received, chunk]) : chunk;
    readReply();
  });
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('the server closed the connection')));
  const post: Post = (message, extra = {}) =>
    new Promise((resolve, reject) => {
      if (waiting) throw new Error('one request at a time');
      waiting = { resolve, reject };
      const body = JSON.stringify(message);
      const lines = Object.entries({ host: url.host, 'content-type': 'application/json', ...headers, 'content-length': String(Buffer.byteLength(body)), ...extra });
      socket.write(`POST ${url.pathname} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`);
    });
  return { post, close: () => void socket.destroy() };
}

/**
 * The least an agent can spend on a call: MCP over `socketPoster`. It takes the agent's own HTTP
 * machinery out of the figure, so what is left is the server's work, the network and the editor.
 */
export async function socketMcpClient(server: Reachable, key: string) {
  const poster = await socketPoster(`${server.url}/mcp`, { accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` });
  const session = await mcpSession(poster.post);
  return { ...session, close: async () => poster.close() };
}
