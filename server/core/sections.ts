import type { Block } from '../../sync/blocks.ts';

/** A section: a heading and the blocks up to the next heading; the text before the first is "Introduction". */
export type Section = { id: string; title: string; level: number; blocks: Block[]; words: number };

const countWords = (text: string) => (text.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []).length;

export function sections(blocks: readonly Block[]): Section[] {
  const out: Section[] = [];
  for (const block of blocks) {
    if (block.type === 'heading') {
      out.push({ id: block.id, title: block.text.replace(/^#+\s*/, ''), level: block.level ?? 1, blocks: [block], words: 0 });
    } else {
      if (!out.length) out.push({ id: block.id, title: 'Introduction', level: 0, blocks: [], words: 0 });
      out.at(-1)!.blocks.push(block);
    }
  }
  for (const section of out) section.words = section.blocks.filter((b) => b.type !== 'heading').reduce((n, b) => n + countWords(b.text), 0);
  return out;
}

export const OUTLINE_LIMIT = 25;

/**
 * The outline rows: past 25 sections only the top two heading levels show, each carrying the count
 * of deeper sections left out below it.
 */
export function outlineRows(all: readonly Section[]): (Section & { hidden: number })[] {
  if (all.length <= OUTLINE_LIMIT) return all.map((s) => ({ ...s, hidden: 0 }));
  const rows: (Section & { hidden: number })[] = [];
  for (const section of all) {
    if (section.level <= 2) rows.push({ ...section, hidden: 0 });
    else if (rows.length) rows.at(-1)!.hidden++;
  }
  return rows;
}

export const wholeText = (blocks: readonly Block[]) => blocks.map((b) => b.text).join('\n\n');

/** The outline as Markdown table lines (SPEC part 2 "Pad outline row"). */
export function outlineTable(rows: readonly (Section & { hidden: number })[], escape: (text: string) => string): string[] {
  const lines = ['| Section | Id | Status | Open threads | Words |', '|---|---|---|---|---|'];
  for (const row of rows) {
    const indent = '  '.repeat(Math.max(0, row.level - 1));
    lines.push(`| ${indent}${escape(row.title)}${row.hidden ? ` (+${row.hidden})` : ''} | ${row.id} | settled | 0 | ${row.words} |`);
  }
  if (!rows.length) lines.push('| (empty pad) | | | | |');
  return lines;
}
