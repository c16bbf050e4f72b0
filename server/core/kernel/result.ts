/**
 * What a tool answers, before any shell renders it. `parts` become the text an agent reads: the
 * service's own lines, and participant text, which is its own part type so that the renderer (and
 * only the renderer) frames it: links rewritten by the author's reach, clipped, fenced as untrusted
 * data. `data` is the structured content (ids, cursors, stamps, statuses; never participant text).
 * `view` builds the model the web app renders, and may carry participant text; only the web app
 * asks for it, so MCP and REST answers do not pay for it.
 */
export type Reach = 'verified' | 'unverified';

export type SaidPart = {
  said: string;
  /** Whose reach decides the links: unverified authors' links read as `[link to <host>]`. */
  reach: Reach;
  /** Clip the (link-formed) text at this many characters, with a note saying where the whole is. */
  clip?: number;
  /** Where the whole text can be read, named in the clip note. */
  whole?: string;
  /** What the text is, for the clip note: "post", "pad". */
  noun?: string;
};

/**
 * Parts that many answers share unchanged (a kept page of posts): the renderer renders one group
 * once and hands out the same text after, so the group must never be changed once made.
 */
export type GroupPart = { group: readonly TextPart[] };

export type TextPart = { line: string } | SaidPart | GroupPart;

export type Result<D extends Record<string, unknown> = Record<string, unknown>> = {
  parts: TextPart[];
  data: D;
  view?: () => unknown;
};

export const line = (text: string): TextPart => ({ line: text });

export const group = (parts: readonly TextPart[]): GroupPart => Object.freeze({ group: Object.freeze([...parts]) });

/** Values of answers' data marked by `shared`. */
const sharedValues = new WeakSet<object>();

/**
 * Marks a value of an answer's data that many answers hand out unchanged (a kept page's posts, a kept
 * hub page's members), so that it is encoded once (api/tools/render.ts). Frozen here; nothing inside it
 * may change once it is marked either.
 */
export function shared<T extends object>(value: T): T {
  sharedValues.add(Object.freeze(value));
  return value;
}

export const isShared = (value: unknown): value is object => sharedValues.has(value as object);

/**
 * Text a participant wrote (or sent), framed by the renderer. Nobody reads as verified yet (reach
 * arrives with identity), so the default is the safe one.
 */
export const said = (text: string, options: Omit<SaidPart, 'said' | 'reach'> & { reach?: Reach } = {}): SaidPart => ({
  ...options,
  said: text,
  reach: options.reach ?? 'unverified',
});
