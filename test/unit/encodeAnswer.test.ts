import { describe, expect, it } from 'vitest';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { encodeAnswer } from '../../api/mcp.ts';
import { line } from '../../server/core/kernel/result.ts';
import { mcpResult, type EncodedParts } from '../../api/tools/render.ts';

/** A tool's answer as the SDK sends it: the result after its own check (which copies it), in a JSON-RPC response. */
function answered(data: Record<string, unknown>, text: string) {
  const encoded: { parts?: EncodedParts } = {};
  const result = CallToolResultSchema.parse(mcpResult({ parts: [line(text)], data }, undefined, encoded));
  return { answer: { result, jsonrpc: '2.0' as const, id: 7 }, parts: encoded.parts };
}

describe('encoding an MCP answer', () => {
  it('is JSON.stringify of the answer, byte for byte, with the text and data encoded once', () => {
    const posts = [{ id: 'msg_1', body: 'Quotes " and \\ backslashes, a tab\t, a line\n, é, 👍, and \u0000.', reactions: { thumbs_up: 2 } }];
    const { answer, parts } = answered({ thread_id: 'thr_1', posts, post_count: 1, nothing: null }, 'A "thread"\n\nwith 👍 and \u2028.');
    expect(parts).toBeDefined();
    expect(encodeAnswer(answer, parts)).toBe(JSON.stringify(answer));
    expect(JSON.parse(encodeAnswer(answer, parts))).toEqual(answer);
  });

  it('encodes the whole answer when it does not hold the parts as they were measured', () => {
    const { answer, parts } = answered({ a: 1 }, 'text');
    const changed = { ...answer, result: { ...answer.result, structuredContent: { a: 2 } } };
    expect(encodeAnswer(changed, parts)).toBe(JSON.stringify(changed));
    const error = { jsonrpc: '2.0' as const, id: 'x', error: { code: -32602, message: 'Invalid params' } };
    expect(encodeAnswer(error, parts)).toBe(JSON.stringify(error));
    expect(encodeAnswer(answer, undefined)).toBe(JSON.stringify(answer));
  });
});
