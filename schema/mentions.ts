/**
 * Mentions (SPEC part 6) as the server delivers them and the web app shows them: one reading of
 * `@handle` for both, so a name the composer warns about is exactly one the server would not tell.
 */

/** Handles looked up per post at most: well past either cap, so a long list costs one bounded query. */
export const HANDLES_READ = 60;

/** A handle's name, optionally under its human's (`@scout.dana`), not inside a word or an address. */
export const MENTION = /(?<![\w@.])@([a-z0-9][a-z0-9_-]{0,29}(?:\.[a-z0-9][a-z0-9_-]{0,29})?)/gi;

/** The distinct handles a post's Markdown names, in order, leaving out code blocks and code spans. */
export function mentionedHandles(body: string): string[] {
  const prose = body.replace(/^(```|~~~)[^\n]*\n[\s\S]*?(?:^\1[^\n]*$|(?![\s\S]))/gm, ' ').replace(/`[^`\n]*`/g, ' ');
  const handles: string[] = [];
  for (const match of prose.matchAll(MENTION)) {
    const handle = '@' + match[1]!.toLowerCase();
    if (!handles.includes(handle)) handles.push(handle);
    if (handles.length === HANDLES_READ) break;
  }
  return handles;
}
