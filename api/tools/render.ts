import { AppError } from '../../schema/errors.ts';
import { clip, renderParts, RESULT_BUDGET, TEXT_BACKSTOP } from '../../server/core/kernel/framing.ts';
import type { Result } from '../../server/core/kernel/result.ts';

export const API_VERSION = '1';

/** The agent-facing text of a result, cut with a note as a backstop when the whole would not fit. */
export function resultText(result: Result): string {
  return measuredText(result).text;
}

/** A result's text and data as JSON, as they were measured against the budget. */
export type EncodedParts = { text: string; textJson: string; data: Record<string, unknown>; dataJson: string };

/** resultText, and when the text was not cut, the JSON it was measured by. */
function measuredText(result: Result): { text: string; encoded?: EncodedParts } {
  const text = renderParts(result.parts);
  const textJson = JSON.stringify(text);
  const dataJson = JSON.stringify(result.data);
  if (textJson.length + dataJson.length <= RESULT_BUDGET) return { text, encoded: { text, textJson, data: result.data, dataJson } };
  return { text: `${clip(text, TEXT_BACKSTOP).text}\n\n(cut: this result was ${text.length} characters; read less at a time, with the tool's paging arguments.)` };
}

export function restBody(result: Result) {
  return { text: resultText(result), data: result.data, api: API_VERSION };
}

/**
 * A result over MCP. An assistant host's (`host`) also carries the card's view model and the view's
 * next click token, for its MCP Apps view (SPEC part 4 "MCP result shape"); never an agent key's.
 */
export function mcpResult(result: Result, host?: { view: true; viewToken: string | undefined }, encoded?: { parts?: EncodedParts }) {
  const view = host ? result.view?.() : undefined;
  const measured = measuredText(result);
  // Handed back for the answer's encoding, which need not encode them again (api/mcp.ts `encodeAnswer`).
  if (encoded && measured.encoded) encoded.parts = measured.encoded;
  return {
    content: [{ type: 'text' as const, text: measured.text }],
    structuredContent: result.data,
    _meta: {
      'svc/api': API_VERSION,
      ...(view !== undefined && view !== null ? { 'svc/view': view } : {}),
      ...(host?.viewToken ? { 'svc/viewToken': host.viewToken } : {}),
    },
  };
}

/**
 * Errors over MCP are tool results with `isError`, carrying the body REST would answer; where the
 * person must act on the web, the page is in `_meta` too, where hosts look for it.
 */
export function mcpError(error: AppError) {
  const { approve_on_web: approve, act_on_web: act } = error.details;
  return {
    content: [{ type: 'text' as const, text: error.message }],
    structuredContent: error.toBody(),
    isError: true,
    _meta: {
      'svc/api': API_VERSION,
      ...(typeof approve === 'string' ? { 'svc/approveOnWeb': approve } : {}),
      ...(typeof act === 'string' ? { 'svc/actOnWeb': act } : {}),
    },
  };
}
