import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** What one POST to `/mcp` gets back: a status and, unless the status is 202, a JSON body. */
export type McpReply = { status: number; body?: unknown };

/** As the SDK's own transport: a batch longer than this is refused. */
const MAX_BATCH = 100;

/** A JSON-RPC error that answers the whole POST (no request id to answer). */
export const rpcError = (status: number, code: number, message: string): McpReply => ({
  status,
  body: { jsonrpc: '2.0', error: { code, message }, id: null },
});

/**
 * Checks one POST's JSON-RPC payload the way the streamable HTTP transport does, and returns either
 * the messages to hand to the server or the reply that refuses them.
 */
export function readMessages(payload: unknown, protocolVersion: string | undefined): { messages: JSONRPCMessage[] } | McpReply {
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
    return rpcError(400, -32000, `Bad Request: unsupported MCP-Protocol-Version ${protocolVersion} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`);
  }
  const batch = Array.isArray(payload) ? payload : [payload];
  if (batch.length === 0 || batch.length > MAX_BATCH) {
    return rpcError(400, -32600, `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages.`);
  }
  const messages: JSONRPCMessage[] = [];
  for (const item of batch) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return rpcError(400, -32600, 'Invalid Request: not a JSON-RPC 2.0 message.');
    messages.push(parsed.data);
  }
  return { messages };
}

/**
 * The MCP SDK's `Transport` between one SDK server and every POST to `/mcp` (SPEC part 4 "MCP
 * endpoint": stateless, any instance answers any request, one JSON body per request, no held-open
 * stream). Each POST's messages reach the server with the caller as their auth info; the answers to
 * its requests come back together as one JSON body. Clients number their requests as they like, so
 * each request is renumbered on its way in, uniquely on this server, and its answer numbered back.
 *
 * It stands in for the SDK's `StreamableHTTPServerTransport`, which in JSON mode turns every Node
 * request and response into web-standard `Request`/`Response` objects and back (through
 * `@hono/node-server`): with a server that never streams, that conversion was the largest part of
 * the endpoint's own work in a CPU profile. One server for all requests, rather than one built and
 * connected per request, spares every call the construction of the server and its handlers.
 * Notifications from the server have no stream to go to and are dropped, as SPEC says ("no
 * progress or log notifications"). A client's `notifications/cancelled` is dropped too: it names the
 * client's own request id, which on the shared server could be another caller's request, and the
 * SDK sends no answer at all to a cancelled request. Every request is answered in its own POST.
 */
export class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  #nextId = 0;
  readonly #waiting = new Map<RequestId, (answer: JSONRPCMessage) => void>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#waiting.clear();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only the server's answers are kept: they carry an id and a result or an error. Told apart by
    // shape, since the SDK's type guards parse every message with zod; these are the SDK's own.
    if (!('result' in message || 'error' in message) || !('id' in message) || message.id === undefined) return;
    const deliver = this.#waiting.get(message.id);
    this.#waiting.delete(message.id);
    deliver?.(message);
  }

  /**
   * Hands one POST's messages to the server on behalf of `authInfo`. Resolves with 202 and no body
   * when none is a request, else with the answers: one object for one request, an array in request
   * order for a batch.
   */
  exchange(messages: JSONRPCMessage[], authInfo: AuthInfo): Promise<McpReply> {
    const answers: Promise<JSONRPCMessage>[] = [];
    for (const message of messages) {
      if ('method' in message && message.method === 'notifications/cancelled') continue;
      // The messages were checked against the JSON-RPC schema: a request is one with a method and an id.
      if (!('method' in message && 'id' in message)) {
        this.onmessage?.(message, { authInfo });
        continue;
      }
      const id = this.#nextId++;
      answers.push(new Promise((resolve) => this.#waiting.set(id, (answer) => resolve({ ...answer, id: message.id }))));
      this.onmessage?.({ ...message, id }, { authInfo });
    }
    if (answers.length === 0) return Promise.resolve({ status: 202 });
    return Promise.all(answers).then((list) => ({ status: 200, body: list.length === 1 ? list[0] : list }));
  }
}
