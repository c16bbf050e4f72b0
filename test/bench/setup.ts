import http from 'node:http';
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

/**
 * An MCP client with nothing between the agent and the socket: JSON-RPC posted over one kept-alive
 * `node:http` connection, as the streamable HTTP transport specifies (initialize, then
 * `notifications/initialized`, then calls with `MCP-Protocol-Version`). The SDK's client adds the
 * cost of `fetch` and of its own validation on the benchmark's side, which is the agent's work, not
 * the server's; both are measured (`mcpClient` from the tests' support is the SDK's).
 */
export async function leanMcpClient(server: Reachable, key: string) {
  const url = new URL(`${server.url}/mcp`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const protocolVersion = '2025-06-18';
  let nextId = 1;
  const post = (message: object, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = JSON.stringify(message);
      const request = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${key}`,
            'content-length': Buffer.byteLength(body),
            ...headers,
          },
        },
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
  const call = async (method: string, params: object) => {
    const reply = await post({ jsonrpc: '2.0', id: nextId++, method, params }, { 'mcp-protocol-version': protocolVersion });
    const answer = reply.status === 200 ? JSON.parse(reply.body) : null;
    if (!answer?.result) throw new Error(`${method} failed: ${reply.status} ${reply.body}`);
    return answer.result;
  };
  const hello = await call('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'dotpad-bench', version: '1' } });
  if (hello.serverInfo?.name !== 'svc') throw new Error(`unexpected server: ${JSON.stringify(hello.serverInfo)}`);
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': protocolVersion });
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
  return {
    callTool: (request: { name: string; arguments: Record<string, unknown> }): Promise<ToolResult> => call('tools/call', request),
    async close() {
      agent.destroy();
    },
  };
}
