import type { VersionBlock } from './blockLists.ts';

/**
 * A pad's sections as search keeps them (`pad_sections`): a heading and the blocks up to the next
 * one, or "Introduction" for what comes before the first heading (as server/core/pads/sections.ts reads
 * them from the live pad). Each names the section before it, so a section put in above another
 * rewrites one neighbour, not every row after it.
 */
export type SectionRow = { id: string; after: string | null; title: string; level: number; body: string };

/**
 * What a version changes of the rows. `rows` go in whole: new sections, or at a checkpoint (`whole`)
 * every section, with every other row of the pad dropped, so a pad whose rows fell behind is whole
 * again at its next checkpoint. `changed` are sections already there whose title, level, text or
 * place differ: the version writes their title, level and place; their text and search words follow
 * later (sync/sectionText.ts), and `textBehind` says the pad has some to follow. `removed` are gone.
 */
export type SectionChange = { rows: SectionRow[]; changed: SectionRow[]; removed: string[]; whole: boolean; textBehind: boolean };

/** A heading block's Markdown: one to six `#` and a space (a paragraph that starts with `#` is escaped). */
const HEADING = /^(#{1,6})(?:[ \t]+|$)/;

export function sectionRows(blocks: readonly VersionBlock[]): SectionRow[] {
  const rows: { id: string; title: string; level: number; texts: string[] }[] = [];
  for (const block of blocks) {
    const heading = HEADING.exec(block.text);
    if (heading) rows.push({ id: block.id, title: block.text.slice(heading[0].length).trim(), level: heading[1]!.length, texts: [] });
    else {
      if (!rows.length) rows.push({ id: block.id, title: 'Introduction', level: 0, texts: [] });
      rows.at(-1)!.texts.push(block.text);
    }
  }
  return rows.map((row, i) => ({ id: row.id, after: i ? rows[i - 1]!.id : null, title: row.title, level: row.level, body: row.texts.join('\n\n') }));
}

/** Which section each block is in: the id of the heading at or above it, or of the pad's first block before any heading. */
export function sectionOfBlocks(blocks: readonly VersionBlock[]): Map<string, string> {
  const of = new Map<string, string>();
  let section: string | null = null;
  for (const block of blocks) {
    if (section === null || HEADING.test(block.text)) section = block.id;
    of.set(block.id, section);
  }
  return of;
}

const same = (a: SectionRow, b: SectionRow) => a.after === b.after && a.title === b.title && a.level === b.level && a.body === b.body;

/** The rows a version from `before` to `after` writes and removes. */
export function sectionChange(before: readonly VersionBlock[], after: readonly VersionBlock[], whole: boolean): SectionChange {
  const next = sectionRows(after);
  if (whole) return { rows: next, changed: [], removed: [], whole, textBehind: false };
  const previous = new Map(sectionRows(before).map((row) => [row.id, row]));
  const rows: SectionRow[] = [];
  const changed: SectionRow[] = [];
  let textBehind = false;
  for (const row of next) {
    const was = previous.get(row.id);
    previous.delete(row.id);
    if (!was) rows.push(row);
    else if (!same(was, row)) {
      changed.push(row);
      textBehind ||= was.body !== row.body || was.title !== row.title;
    }
  }
  return { rows, changed, removed: [...previous.keys()], whole, textBehind };
}

/** Orders a pad's rows by the section each names before it. */
export function inOrder<T extends { id: string; after: string | null }>(rows: readonly T[]): T[] {
  const following = new Map(rows.map((row) => [row.after, row]));
  const out: T[] = [];
  for (let row = following.get(null); row && out.length < rows.length; row = following.get(row.id)) out.push(row);
  return out;
}
