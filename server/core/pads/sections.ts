import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Block } from '../../../sync/blocks.ts';
import { sectionOfBlocks } from '../../../sync/padSections.ts';
import { blocksAt } from '../../../sync/versions.ts';

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

/**
 * The sections a version changed a block of: each changed block's section before the version (a
 * block it edited or removed) and after it (a block it edited or put in), read from the versions in
 * the store, so inside the version's own transaction it sees that version.
 */
export async function sectionsChangedBy(conn: CommonQueryMethods, padId: string, version: number, changed: readonly string[]): Promise<Set<string>> {
  const before = sectionOfBlocks((await blocksAt(conn, padId, version - 1))?.blocks ?? []);
  const after = sectionOfBlocks((await blocksAt(conn, padId, version))?.blocks ?? []);
  return new Set(changed.flatMap((id) => [before.get(id), after.get(id)]).filter((id) => id !== undefined));
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

/**
 * Section status (SPEC part 3 "Pad section status"): `disputed` while a flag on it is open,
 * `unresolved` once one lapsed, `open` while a thread about it is open, `stale` when none of those
 * and unchanged for 90 days, else `settled`. Stale is read when the pad is read, from the time search's
 * row of the section (`pad_sections`) last changed (its title, level, text or place), so no timer
 * writes it: the rulebook (rulebook.ts) has nothing to do when the 90 days pass.
 */
export type SectionStatus = 'settled' | 'open' | 'disputed' | 'unresolved' | 'stale';
const STALE_DAYS = 90;
export type SectionState = { status: SectionStatus; openThreads: number };
/** A pad's status (SPEC part 3 "Pad-level status") and its sections' that are not plainly settled. */
export type PadStatus = { status: 'settled' | 'open' | 'disputed'; sections: ReadonlyMap<string, SectionState>; marks: ReadonlyMap<string, SectionMark> };

export const SETTLED: SectionState = { status: 'settled', openThreads: 0 };
export const NO_THREADS: PadStatus = { status: 'settled', sections: new Map(), marks: new Map() };

/**
 * The one mark a section shows (SPEC part 2 "Section marks"), from its `section_marks` rows and the
 * version that last changed it: an edit war first, then a check of its current text, then a check its
 * text moved past, then a small suggestion that went in unchecked.
 */
export type SectionMark =
  | { kind: 'edit_war' }
  | { kind: 'checked'; by: string; note: string; version: number }
  | { kind: 'changed_since_check'; by: string; version: number }
  | { kind: 'unchecked'; version: number };

/** A mark as readers see it, in the outline's column and on the line above its section. */
export function markText(mark: SectionMark, escape: (text: string) => string = (text) => text): string {
  if (mark.kind === 'edit_war') return 'proposals only (edit war)';
  if (mark.kind === 'checked') return `checked by ${escape(mark.by)}: "${escape(mark.note)}"`;
  if (mark.kind === 'changed_since_check') return `changed since check (checked by ${escape(mark.by)} at v${mark.version})`;
  return 'unchecked (went in after 24 hours without a check)';
}

/** The column and line word for marks: `Check` in a Checked hub, `Note` elsewhere. */
export const markWord = (hub: { mode: 'open' | 'checked' }) => (hub.mode === 'checked' ? 'Check' : 'Note');

const MarkRow = z.object({ section: z.string(), kind: z.enum(['checked', 'unchecked', 'edit_war']), by: z.string().nullable(), note: z.string().nullable(), version: z.number(), current: z.number() });
type MarkRow = z.infer<typeof MarkRow>;

/** Each section's mark from its rows (`current`: the version that last changed the section). */
export function sectionMarks(rows: readonly MarkRow[]): Map<string, SectionMark> {
  const bySection = Map.groupBy(rows, (row) => row.section);
  const out = new Map<string, SectionMark>();
  for (const [section, marks] of bySection) {
    const of = (kind: MarkRow['kind']) => marks.find((m) => m.kind === kind);
    const [war, check, unchecked] = [of('edit_war'), of('checked'), of('unchecked')];
    if (war) out.set(section, { kind: 'edit_war' });
    else if (check && check.current <= check.version) out.set(section, { kind: 'checked', by: check.by ?? 'Someone', note: check.note ?? '', version: check.version });
    else if (check) out.set(section, { kind: 'changed_since_check', by: check.by ?? 'Someone', version: check.version });
    else if (unchecked) out.set(section, { kind: 'unchecked', version: unchecked.version });
  }
  return out;
}

export const StatusRow = z.object({
  states: z.array(z.object({ block: z.string(), open_threads: z.number(), disputed: z.boolean(), unresolved: z.boolean(), stale: z.boolean() })),
  marks: z.array(MarkRow),
});

/**
 * The columns `states` and `marks` of a pad's status at `now` (`StatusRow`), for a statement of the
 * caller's: where the threads about its sections leave them, which sections are stale, and the marks
 * of its sections (those still in the pad), each one indexed subquery. The time is read through a
 * subquery, so that a generic plan of the statement costs what a custom one does and is kept.
 */
export function statusColumns(padId: string, now: Date = new Date()) {
  const staleBefore = new Date(now.getTime() - STALE_DAYS * 86_400_000).toISOString();
  return sql.fragment`
    (WITH t AS (
      SELECT about_block AS block, count(*) FILTER (WHERE status = 'open') AS open_threads,
             coalesce(bool_or(flag = 'open'), false) AS disputed, coalesce(bool_or(flag = 'unresolved'), false) AS unresolved
      FROM threads WHERE about_pad_id = ${padId} GROUP BY about_block),
    s AS (SELECT section_id AS block FROM pad_sections WHERE pad_id = ${padId} AND updated_at < (SELECT ${staleBefore}::timestamptz)),
    states AS (
      SELECT coalesce(t.block, s.block) AS block, coalesce(t.open_threads, 0) AS open_threads, coalesce(t.disputed, false) AS disputed,
             coalesce(t.unresolved, false) AS unresolved, s.block IS NOT NULL AS stale
      FROM t FULL JOIN s ON s.block = t.block)
    SELECT coalesce(json_agg(states), '[]') FROM states) AS states,
    coalesce((SELECT json_agg(json_build_object('section', m.section_id, 'kind', m.kind, 'by', p.name, 'note', m.note, 'version', m.version, 'current', ps.version))
      FROM section_marks m JOIN pad_sections ps ON ps.pad_id = m.pad_id AND ps.section_id = m.section_id
      LEFT JOIN participants p ON p.id = m.by_id WHERE m.pad_id = ${padId}), '[]') AS marks`;
}

/** A pad's status from its `statusColumns`. */
export function statusOf(row: z.infer<typeof StatusRow>): PadStatus {
  const sections = new Map<string, SectionState>();
  for (const state of row.states) {
    const status = state.disputed ? 'disputed' : state.unresolved ? 'unresolved' : state.open_threads ? 'open' : state.stale ? 'stale' : 'settled';
    if (status !== 'settled') sections.set(state.block, { status, openThreads: state.open_threads });
  }
  const all = [...sections.values()];
  // A lapsed flag is a dispute nobody settled: the pad as a whole reads disputed for it too. A stale
  // section leaves the pad settled.
  const status = all.some((s) => s.status === 'disputed' || s.status === 'unresolved') ? 'disputed' : all.some((s) => s.status === 'open') ? 'open' : 'settled';
  return { status, sections, marks: sectionMarks(row.marks) };
}

/** Where the threads about a pad's sections leave them, which sections are stale at `now`, and their marks: one query. */
export async function padStatus(conn: CommonQueryMethods, padId: string, now: Date = new Date()): Promise<PadStatus> {
  return statusOf(await conn.one(sql.prepared('pad_status', StatusRow)`SELECT ${statusColumns(padId, now)}`));
}

/**
 * The outline as Markdown table lines (SPEC part 2 "Pad outline row"), with a Note column (`word`:
 * Check in a Checked hub) when any section shown carries a mark.
 */
export function outlineTable(rows: readonly (Section & { hidden: number })[], escape: (text: string) => string, status: PadStatus = NO_THREADS, word = 'Note'): string[] {
  const marked = rows.some((row) => status.marks.has(row.id));
  const lines = [`| Section | Id | Status | Open threads | Words |${marked ? ` ${word} |` : ''}`, `|---|---|---|---|---|${marked ? '---|' : ''}`];
  for (const row of rows) {
    const indent = '  '.repeat(Math.max(0, row.level - 1));
    const state = status.sections.get(row.id) ?? SETTLED;
    const mark = status.marks.get(row.id);
    const note = marked ? ` ${mark ? markText(mark, escape) : ''} |` : '';
    lines.push(`| ${indent}${escape(row.title)}${row.hidden ? ` (+${row.hidden})` : ''} | ${row.id} | ${state.status} | ${state.openThreads} | ${row.words} |${note}`);
  }
  if (!rows.length) lines.push('| (empty pad) | | | | |');
  return lines;
}

/** The `## Section notes` (or checks) list after a whole pad: each marked section, in order; none when none is. */
export function markList(all: readonly Section[], status: PadStatus, escape: (text: string) => string, word = 'Note'): string[] {
  const marked = all.filter((s) => status.marks.has(s.id));
  if (!marked.length) return [];
  return [`## Section ${word.toLowerCase()}s`, '', ...marked.map((s) => `- ${escape(s.title)} (section ${s.id}): ${markText(status.marks.get(s.id)!, escape)}`)];
}
