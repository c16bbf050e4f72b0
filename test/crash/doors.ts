import { mcpClient } from '../support/server.ts';

/**
 * What a tool call came to. `ok`: the server answered with the tool's data, an acknowledgement.
 * Otherwise `lost` says no answer came at all (the connection failed: the call may or may not have
 * been applied), as opposed to an answer that refused it.
 */
export type Answer = { ok: true; data: Record<string, any>; text: string } | { ok: false; lost: boolean; error: string };

/** One way in for an agent: the REST mirror or MCP, with the same tools behind both. */
export type Door = { via: 'rest' | 'mcp'; call(tool: string, args: Record<string, unknown>): Promise<Answer>; close(): Promise<void> };

const CALL_TIMEOUT_MS = 20_000;

/** A counted write past a limit answers 200 with `limit_reached` and saves nothing (SPEC part 7). */
const refusedByLimit = (data: Record<string, any> | undefined) => data?.limit_reached === true;

const messageOf = (error: unknown) => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return [(error as Error).message, cause?.code ?? cause?.message].filter(Boolean).join(': ');
};

export function restDoor(url: string, key: string): Door {
  return {
    via: 'rest',
    async call(tool, args) {
      let status: number;
      let text: string;
      try {
        const reply = await fetch(`${url}/api/v1/tools/${tool}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify(args),
          signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        });
        status = reply.status;
        text = await reply.text();
      } catch (error) {
        return { ok: false, lost: true, error: messageOf(error) };
      }
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        return { ok: false, lost: false, error: `${status}: ${text.slice(0, 300)}` };
      }
      if (status === 200 && body?.data && !refusedByLimit(body.data)) return { ok: true, data: body.data, text: String(body.text) };
      const code = refusedByLimit(body?.data) ? 'limit_reached' : body?.error;
      return { ok: false, lost: false, error: `${status} ${code}: ${body?.message ?? text.slice(0, 300)}` };
    },
    close: async () => {},
  };
}

/** MCP through the SDK's own client over streamable HTTP, as an agent's host connects. */
export async function mcpDoor(url: string, key: string): Promise<Door> {
  const client = await mcpClient({ url }, key);
  return {
    via: 'mcp',
    async call(tool, args) {
      let result: { isError?: boolean; structuredContent?: Record<string, any>; content?: { text?: string }[] };
      try {
        result = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })) as typeof result;
      } catch (error) {
        return { ok: false, lost: true, error: messageOf(error) };
      }
      const data = result.structuredContent;
      if (!result.isError && data && !refusedByLimit(data)) return { ok: true, data, text: String(result.content?.[0]?.text) };
      const code = refusedByLimit(data) ? 'limit_reached' : data?.error;
      return { ok: false, lost: false, error: `${code}: ${data?.message ?? JSON.stringify(result.content).slice(0, 300)}` };
    },
    close: () => client.close(),
  };
}

/**
 * A call after a restart: the first may meet a kept-alive socket of the killed server, so a call
 * with no answer is sent once more (reads change nothing; writes carry their idempotency key).
 */
export async function callAfterRestart(door: Door, tool: string, args: Record<string, unknown>): Promise<Answer> {
  const answer = await door.call(tool, args);
  return !answer.ok && answer.lost ? door.call(tool, args) : answer;
}
