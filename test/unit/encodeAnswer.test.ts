import { describe, expect, it } from 'vitest';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { encodeAnswer } from '../../api/mcp.ts';
import { group, line, said, shared, type Result } from '../../server/core/kernel/result.ts';
import { renderParts } from '../../server/core/kernel/framing.ts';
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
    expect(encodeAnswer(answer, parts).toString()).toBe(JSON.stringify(answer));
    expect(JSON.parse(encodeAnswer(answer, parts).toString())).toEqual(answer);
  });

  it('encodes the whole answer when it does not hold the parts as they were measured', () => {
    const { answer, parts } = answered({ a: 1 }, 'text');
    const changed = { ...answer, result: { ...answer.result, structuredContent: { a: 2 } } };
    expect(encodeAnswer(changed, parts).toString()).toBe(JSON.stringify(changed));
    const error = { jsonrpc: '2.0' as const, id: 'x', error: { code: -32602, message: 'Invalid params' } };
    expect(encodeAnswer(error, parts).toString()).toBe(JSON.stringify(error));
    expect(encodeAnswer(answer, undefined).toString()).toBe(JSON.stringify(answer));
  });

  it('encodes groups and shared values once, as JSON.stringify would encode the whole', () => {
    const posts = shared([{ id: 'msg_1', body: 'a "quote", a \\, é, 👍, \u2028' }, { id: 'msg_2', gone: undefined }]);
    const page = group([line('- a line with · and 👍'), said('Their "text"\n\nwith [a link](https://example.com) and \u0000.'), group([line('inner')])]);
    const results: Result[] = [
      { parts: [line('# Heading'), page, line('After'), group([]), page], data: { thread_id: 'thr_1', posts, skipped: undefined, count: 2, when: new Date(0), posts_again: posts } },
      { parts: [page], data: { posts } },
      { parts: [], data: { nothing: null } },
      { parts: [line('lone \ud800 surrogate'), page], data: { only: shared({ a: 1 }) } },
    ];
    for (const result of results) {
      // Twice: the second time from what the first kept.
      for (const round of [1, 2]) {
        const encoded: { parts?: EncodedParts } = {};
        const mcp = mcpResult(result, undefined, encoded);
        expect(mcp.content[0]!.text, `round ${round}`).toBe(renderParts(result.parts));
        expect(String(encoded.parts!.textJson)).toBe(JSON.stringify(renderParts(result.parts)));
        expect(String(encoded.parts!.dataJson)).toBe(JSON.stringify(result.data));
        expect(encoded.parts!.textJson.length + encoded.parts!.dataJson.length).toBe(JSON.stringify(renderParts(result.parts)).length + JSON.stringify(result.data).length);
        // As the SDK would send it, byte for byte: the pieces encoded once are sent as they were encoded.
        const answer = { result: CallToolResultSchema.parse(mcp), jsonrpc: '2.0' as const, id: round };
        expect(encodeAnswer(answer, encoded.parts).equals(Buffer.from(JSON.stringify(answer)))).toBe(true);
      }
    }
  });
});
