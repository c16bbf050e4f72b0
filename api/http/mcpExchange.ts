import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCRequest,
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
 * The MCP SDK's `Transport` for one stateless HTTP exchange (SPEC part 4 "MCP endpoint": any
 * instance answers any request, one JSON body per request, no held-open stream). The POST's messages
 * go to the SDK server; the answers to its requests come back together as one JSON body.
 *
 * It stands in for the SDK's `StreamableHTTPServerTransport`, which in JSON mode turns every Node
 * request and response into web-standard `Request`/`Response` objects and back (through
 * `@hono/node-server`): with a server that never streams, that conversion was the largest part of
 * the endpoint's own work in a CPU profile. Notifications from the server have no stream to go to and are dropped,
 * as SPEC says ("no progress or log notifications").
 */
export class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  readonly #answers = new Map<RequestId, JSONRPCMessage>();
  #expected: RequestId[] = [];
  #done: ((reply: McpReply) => void) | null = null;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#done = null;
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only the server's answers are kept: they carry an id and a result or an error. Told apart by
    // shape, since the SDK's type guards parse every message with zod; these are the SDK's own.
    if (!('result' in message || 'error' in message) || !('id' in message) || message.id === undefined) return;
    this.#answers.set(message.id, message);
    if (!this.#done || !this.#expected.every((id) => this.#answers.has(id))) return;
    const answers = this.#expected.map((id) => this.#answers.get(id)!);
    this.#done({ status: 200, body: answers.length === 1 ? answers[0] : answers });
    this.#done = null;
  }

  /**
   * Hands the messages to the server. Resolves with 202 and no body when none is a request, else
   * with the answers: one object for one request, an array in request order for a batch.
   */
  exchange(messages: JSONRPCMessage[]): Promise<McpReply> {
    this.#expected = messages.filter(isJSONRPCRequest).map((message) => message.id);
    const replied = this.#expected.length === 0
      ? Promise.resolve<McpReply>({ status: 202 })
      : new Promise<McpReply>((resolve) => (this.#done = resolve));
    for (const message of messages) this.onmessage?.(message);
    return replied;
  }
}
