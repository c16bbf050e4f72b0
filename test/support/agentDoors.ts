import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient, rest, type Reachable } from './server.ts';

export type AgentDoor = 'rest' | 'mcp';
/** A tool's answer through either door: `body` is the data on success, the error body on refusal. */
export type DoorAnswer = { ok: boolean; body: Record<string, any>; text: string };

/** The tool's own answer: what every reply says of its caller (`linked_to`, its allowance and the like) is left out. */
const own = ({ linked_to: _l, link_requests: _r, key_expires_at: _k, allowance: _a, ...data }: Record<string, any>) => data;

/**
 * Calls a tool as an agent through REST or MCP (one SDK client per key, made on first use), so a
 * suite can run each case through both doors and compare like with like.
 */
export function agentDoors(server: Reachable) {
  const clients = new Map<string, Client>();
  return {
    async call(door: AgentDoor, agent: { key: string }, tool: string, args: Record<string, unknown>): Promise<DoorAnswer> {
      if (door === 'rest') {
        const reply = await rest(server, agent.key, tool, args);
        return reply.status === 200 ? { ok: true, body: own(reply.body.data), text: reply.body.text } : { ok: false, body: reply.body, text: reply.body.message };
      }
      let client = clients.get(agent.key);
      if (!client) clients.set(agent.key, (client = await mcpClient(server, agent.key)));
      const result = await client.callTool({ name: tool, arguments: args });
      const text = (result.content as { text: string }[])[0]!.text;
      return { ok: !result.isError, body: result.isError ? (result.structuredContent as Record<string, any>) : own(result.structuredContent as Record<string, any>), text };
    },
    async close() {
      for (const client of clients.values()) await client.close();
    },
  };
}
