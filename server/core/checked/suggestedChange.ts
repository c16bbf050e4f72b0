import { blockMarkdown, parseMarkdown } from '../../../schema/markdown.ts';
import { invalid } from '../../../schema/errors.ts';
import { diffAgainstBase } from '../../../sync/baseDiff.ts';
import { sectionOfBlocks } from '../../../sync/padSections.ts';

/**
 * What a suggestion would do to a pad, worked out from the blocks of the version it was made on,
 * without touching the live document: pure functions, so the rule for "small" (SPEC part 3
 * "Checked-hub unchecked merge") is tested in memory.
 */

export type BaseBlock = { readonly id: string; readonly text: string };

/** An edit as edit_pad sends it: the whole new text, or block edits and inserts. */
export type SuggestedEdit =
  | { text: string }
  | { edits: readonly { block_id: string; text: string }[]; inserts: readonly { after: string; text: string }[] };

/** One block the suggestion changes: a base block (`before` set; `after` empty removes it) or a new one after `block_id`. */
export type BlockChange = { block_id: string; change: 'added' | 'changed' | 'removed'; text: string; before?: string };

export type SuggestedChange = {
  /** The whole pad as the suggestion would leave it. */
  text: string;
  /** Base block ids it changes; an inserted block is its anchor's id prefixed '+'. */
  changed: string[];
  /** Section ids (of the base) it touches. */
  sections: string[];
  small: boolean;
  summary: string;
  blocks: BlockChange[];
  /** Characters of new text in the blocks it changes (counted like an edit's saved text). */
  saved: number;
};

/** Markdown as the pad holds it, block by block (what the edit engine would store). */
export function markdownBlocks(text: string): string[] {
  if (text.trim() === '') return [];
  const texts: string[] = [];
  parseMarkdown(text).forEach((node) => texts.push(blockMarkdown(node).trimEnd()));
  return texts;
}

/** The block texts after block edits and inserts on the base, refusing ids the base does not have. */
function applyBlockEdits(base: readonly BaseBlock[], edit: Extract<SuggestedEdit, { edits: unknown }>): string[] {
  const known = new Set(base.map((b) => b.id));
  const unknown = [...edit.edits.map((e) => e.block_id), ...edit.inserts.map((e) => e.after).filter((a) => a !== 'start')].find((id) => !known.has(id));
  if (unknown !== undefined) {
    throw invalid(`Block ${unknown} is not in the version you read: open_pad again and suggest against its blocks.`, { issues: [{ path: 'edits', message: `Unknown block ${unknown}.` }] });
  }
  const replaced = new Map(edit.edits.map((e) => [e.block_id, markdownBlocks(e.text)]));
  const after = new Map<string, string[]>();
  for (const insert of edit.inserts) after.set(insert.after, [...(after.get(insert.after) ?? []), ...markdownBlocks(insert.text)]);
  const out = [...(after.get('start') ?? [])];
  for (const block of base) out.push(...(replaced.get(block.id) ?? [block.text]), ...(after.get(block.id) ?? []));
  return out;
}

/** Characters changed between two texts: what is left of the longer once their common start and end are taken off. */
export function changedChars(before: string, after: string): number {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return Math.max(before.length - start - end, after.length - start - end);
}

const HEADING = /^#{1,6}(?:[ \t]|$)/;
const LINK = /\]\(\s*<?([^)\s>]+)|<(https?:\/\/[^>\s]+)>|(?<![(<\w])(https?:\/\/[^\s)<>\]]*[^\s)<>\].,;:!?'"])/g;

/** The link targets a text holds, Markdown links and bare addresses alike. */
export function linksIn(text: string): Set<string> {
  return new Set([...text.matchAll(LINK)].map((m) => m[1] ?? m[2] ?? m[3]!));
}

/**
 * Small (SPEC part 3): under 30% of each touched section's characters changed, no new heading, no
 * link removed. A section the base has no text in is never small once touched.
 */
export function isSmall(base: readonly BaseBlock[], next: readonly string[], blocks: readonly BlockChange[], sectionOf: ReadonlyMap<string, string>): boolean {
  const size = new Map<string, number>();
  for (const block of base) {
    const section = sectionOf.get(block.id)!;
    size.set(section, (size.get(section) ?? 0) + block.text.length);
  }
  const changedIn = new Map<string, number>();
  for (const block of blocks) {
    if (block.change === 'added' ? HEADING.test(block.text) : HEADING.test(block.text) && !HEADING.test(block.before ?? '')) return false;
    const section = sectionFor(block.block_id, base, sectionOf);
    if (section === null) return false;
    changedIn.set(section, (changedIn.get(section) ?? 0) + changedChars(block.before ?? '', block.text));
  }
  for (const [section, n] of changedIn) if (n >= 0.3 * (size.get(section) ?? 0)) return false;
  const before = linksIn(base.map((b) => b.text).join('\n\n'));
  const after = linksIn(next.join('\n\n'));
  return [...before].every((link) => after.has(link));
}

/** The base section a change lands in: its block's, or for an insert at the start the first section. */
function sectionFor(blockId: string, base: readonly BaseBlock[], sectionOf: ReadonlyMap<string, string>): string | null {
  const id = blockId === 'start' ? base[0]?.id : blockId;
  return id === undefined ? null : (sectionOf.get(id) ?? null);
}

const SUMMARY_MAX = 160;

function summaryOf(blocks: readonly BlockChange[]): string {
  const count = (change: BlockChange['change']) => blocks.filter((b) => b.change === change).length;
  const parts = [['changed', count('changed')], ['added', count('added')], ['removed', count('removed')]].filter(([, n]) => n) as [string, number][];
  const first = blocks.find((b) => b.text.trim())?.text.replace(/\s+/g, ' ').trim() ?? '';
  const head = parts.map(([what, n]) => `${n} block${n === 1 ? '' : 's'} ${what}`).join(', ');
  const line = first ? `${head}: "${first}"` : head;
  return line.length > SUMMARY_MAX ? `${line.slice(0, SUMMARY_MAX - 2)}…"` : line;
}

/** What `edit` would make of the pad whose blocks at the suggestion's base version are `base`. */
export function suggestedChange(base: readonly BaseBlock[], edit: SuggestedEdit): SuggestedChange {
  const next = 'text' in edit ? markdownBlocks(edit.text) : applyBlockEdits(base, edit);
  const byId = new Map(base.map((b) => [b.id, b.text]));
  const blocks: BlockChange[] = diffAgainstBase(base, next).map((change) => {
    const text = change.index === null ? '' : next[change.index]!;
    if (change.kind === 'insert') return { block_id: change.after, change: 'added', text };
    return { block_id: change.blockId, change: text === '' ? 'removed' : 'changed', text, before: byId.get(change.blockId)! };
  });
  const sectionOf = sectionOfBlocks(base);
  const changed = [...new Set(blocks.map((b) => (b.change === 'added' ? `+${b.block_id}` : b.block_id)))];
  const sections = [...new Set(blocks.map((b) => sectionFor(b.block_id, base, sectionOf)).filter((s): s is string => s !== null))];
  return {
    text: next.join('\n\n'),
    changed,
    sections,
    small: blocks.length > 0 && isSmall(base, next, blocks, sectionOf),
    summary: summaryOf(blocks),
    blocks,
    saved: blocks.reduce((n, b) => n + b.text.length, 0),
  };
}
