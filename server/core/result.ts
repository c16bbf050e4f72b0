/**
 * What a core call answers, before any shell renders it. `parts` become the text an agent reads:
 * the service's own lines, and participant text that is always fenced as untrusted data. `data` is
 * the structured content (ids, cursors, stamps, statuses; never participant text). `view` is the
 * model the web app renders, and may carry participant text.
 */
export type TextPart = { line: string } | { fenced: string };

export type Result<D extends Record<string, unknown> = Record<string, unknown>> = {
  parts: TextPart[];
  data: D;
  view?: unknown;
};

export const line = (text: string): TextPart => ({ line: text });
export const fenced = (text: string): TextPart => ({ fenced: text });
