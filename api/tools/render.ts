import { AppError } from '../../schema/errors.ts';
import { clip, PREAMBLE, renderBody, RESULT_BUDGET, TEXT_BACKSTOP } from '../../server/core/kernel/framing.ts';
import { isShared, type GroupPart, type Result, type TextPart } from '../../server/core/kernel/result.ts';
import { EncodedOnce, JsonPieces } from './renderedJson.ts';

export const API_VERSION = '1';

/** The agent-facing text of a result, cut with a note as a backstop when the whole would not fit. */
export function resultText(result: Result): string {
  return measuredText(result).text;
}

/** A result's text and data as JSON, as they were measured against the budget. */
export type EncodedParts = { text: string; textJson: JsonPieces; data: Record<string, unknown>; dataJson: JsonPieces };

/** resultText, and when the text was not cut, the JSON it was measured by. */
function measuredText(result: Result): { text: string; encoded?: EncodedParts } {
  const { text, textJson } = encodedText(result.parts);
  const dataJson = encodedData(result.data);
  if (textJson.length + dataJson.length <= RESULT_BUDGET) return { text, encoded: { text, textJson, data: result.data, dataJson } };
  return { text: `${clip(text, TEXT_BACKSTOP).text}\n\n(cut: this result was ${text.length} characters; read less at a time, with the tool's paging arguments.)` };
}

/** A JSON string's inside, without its quotes. */
const jsonInside = (text: string) => JSON.stringify(text).slice(1, -1);

const PREAMBLE_JSON = new EncodedOnce(jsonInside(`${PREAMBLE}\n\n`));

/** Each group's text as it reads inside a JSON string, encoded the first time it is asked for. */
const groupJson = new WeakMap<GroupPart, EncodedOnce>();

/** Each shared value's JSON (kernel/result.ts `shared`), encoded the first time it is asked for. */
const sharedJson = new WeakMap<object, EncodedOnce>();

/**
 * `renderParts(parts)` and its JSON. Groups (a kept page's posts, a kept hub page) are rendered and
 * encoded once, and the rest of the text around them each time. The text splits into pieces only at
 * the line breaks between parts, so the pieces' JSON put together is the whole text's JSON.
 */
function encodedText(parts: readonly TextPart[]): { text: string; textJson: JsonPieces } {
  const texts: string[] = [];
  const json = new JsonPieces().add('"').add(PREAMBLE_JSON);
  let run: TextPart[] = [];
  const next = (text: string, encoded: string | EncodedOnce) => {
    if (texts.length) json.add('\\n');
    texts.push(text);
    json.add(encoded);
  };
  const endRun = () => {
    if (!run.length) return;
    const text = renderBody(run);
    next(text, jsonInside(text));
    run = [];
  };
  for (const part of parts) {
    if (!('group' in part)) {
      run.push(part);
      continue;
    }
    endRun();
    const text = renderBody([part]);
    let encoded = groupJson.get(part);
    if (encoded === undefined) groupJson.set(part, (encoded = new EncodedOnce(jsonInside(text))));
    next(text, encoded);
  }
  endRun();
  return { text: `${PREAMBLE}\n\n${texts.join('\n')}`, textJson: json.add('"') };
}

/**
 * `JSON.stringify(data)`, with its shared values (a kept page's posts) encoded once: an entry at a time,
 * in the same order, leaving out those JSON leaves out (undefined, functions), as it does.
 */
function encodedData(data: Record<string, unknown>): JsonPieces {
  const keys = Object.keys(data);
  if (!keys.some((key) => isShared(data[key]))) return new JsonPieces().add(JSON.stringify(data));
  const json = new JsonPieces().add('{');
  let first = true;
  for (const key of keys) {
    const value = data[key];
    let encoded: string | EncodedOnce | undefined;
    if (isShared(value)) {
      encoded = sharedJson.get(value);
      if (encoded === undefined) sharedJson.set(value, (encoded = new EncodedOnce(JSON.stringify(value))));
    } else encoded = JSON.stringify(value);
    if (encoded === undefined) continue;
    json.add(`${first ? '' : ','}${JSON.stringify(key)}:`).add(encoded);
    first = false;
  }
  return json.add('}');
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
