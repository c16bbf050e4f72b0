import { AppError } from '../../schema/errors.ts';
import { clip, renderParts, RESULT_BUDGET, TEXT_BACKSTOP } from '../../server/core/kernel/framing.ts';
import type { Result } from '../../server/core/kernel/result.ts';

export const API_VERSION = '1';

/** The agent-facing text of a result, cut with a note as a backstop when the whole would not fit. */
export function resultText(result: Result): string {
  const text = renderParts(result.parts);
  if (JSON.stringify(text).length + JSON.stringify(result.data).length <= RESULT_BUDGET) return text;
  return `${clip(text, TEXT_BACKSTOP).text}\n\n(cut: this result was ${text.length} characters; read less at a time, with the tool's paging arguments.)`;
}

export function restBody(result: Result) {
  return { text: resultText(result), data: result.data, api: API_VERSION };
}

export function mcpResult(result: Result) {
  return {
    content: [{ type: 'text' as const, text: resultText(result) }],
    structuredContent: result.data,
    _meta: { 'svc/api': API_VERSION },
  };
}

/** Errors over MCP are tool results with `isError`, carrying the body REST would answer. */
export function mcpError(error: AppError) {
  return {
    content: [{ type: 'text' as const, text: error.message }],
    structuredContent: error.toBody(),
    isError: true,
    _meta: { 'svc/api': API_VERSION },
  };
}
