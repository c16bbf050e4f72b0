import { callerNote } from '../../schema/callers.ts';
import { inline } from '../../server/core/kernel/framing.ts';
import { markList, markText, markWord, NO_THREADS, outlineRows, outlineTable, type PadStatus } from '../../server/core/pads/sections.ts';
import type { PadEdit, PadRestore, PadUndo } from '../../server/core/pads/padEdits.ts';
import type { CreatedPad, PadReading } from '../../server/core/pads/pads.ts';
import { textByReach, type BlockWriter, type PadHistory, type Writer } from '../../server/core/pads/padHistory.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { EditOutcome } from '../../sync/padSync.ts';
import type { OutlineSection, PadHistoryView, PadView } from '../../schema/tools/pads.ts';
import type { Answer } from './answer.ts';
import type { ToolData } from '../../schema/tools/contract.ts';

const REASONS = {
  changed_since_base: 'someone else changed it since your base_version',
  missing: 'it is no longer in the pad',
  anchor_missing: 'the block to insert after is no longer in the pad',
} as const;

/** The blocks an edit left alone, each with the text the caller sent for it. */
function conflictParts(conflicts: EditOutcome['conflicts']): TextPart[] {
  if (!conflicts.length) return [];
  const parts: TextPart[] = [
    line(''),
    line(`${conflicts.length} conflicts: these were left as they are. Read them again (open_pad mode "changes" since your base_version) and retry on the new version.`),
  ];
  for (const conflict of conflicts) parts.push(line(`- block ${conflict.block_id}: ${REASONS[conflict.reason]}. Your text was:`), said(conflict.text ?? ''));
  return parts;
}

const editData = ({ pad_id, outcome }: PadEdit) => ({
  pad_id,
  version: outcome.current,
  ...(outcome.editId ? { edit_id: outcome.editId } : {}),
  changed: outcome.changed,
  conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
});

/** edit_pad: the new version and edit id, or that nothing changed, and the conflicts. */
export function presentEdit(out: PadEdit): Answer<'edit_pad'> {
  const { pad_id: padId, outcome } = out;
  return {
    parts: [
      line(
        outcome.version === null
          ? `Nothing changed in ${padId}; it stays at version ${outcome.current}.`
          : `Edited ${padId}: version ${outcome.version}, edit ${outcome.editId}, ${outcome.changed.length} blocks changed. Undo it with undo_edit "${outcome.editId}".`,
      ),
      ...conflictParts(outcome.conflicts),
    ],
    data: editData(out),
  };
}

export function presentUndo(out: PadUndo): Answer<'undo_edit'> {
  const { pad_id: padId, outcome, undone } = out;
  return {
    parts: [
      line(outcome.version === null ? `Nothing of ${undone} could be undone.` : `Undid ${undone} in ${padId}: version ${outcome.version}.`),
      ...conflictParts(outcome.conflicts),
    ],
    data: { ...editData(out), undone },
  };
}

export function presentRestore(out: PadRestore): Answer<'ui_restore_pad_version'> {
  const { pad_id: padId, outcome, restored } = out;
  return {
    parts: [
      line(
        outcome.version === null
          ? `${padId} already reads as it did at version ${restored}; it stays at version ${outcome.current}.`
          : `Restored ${padId} as it was at version ${restored}: version ${outcome.version}, edit ${outcome.editId}. Undo it with undo_edit "${outcome.editId}".`,
      ),
      ...conflictParts(outcome.conflicts),
    ],
    data: { ...editData(out), restored },
  };
}

/** ui_pad_version: the blocks at that version, for the web app (participant text stays out of data). */
export const presentPadAtVersion = (at: { pad: { id: string }; version: number; blocks: { id: string; text: string }[] }): Answer<'ui_pad_version'> => ({
  parts: [line(`${at.pad.id} at version ${at.version}: ${at.blocks.length} blocks.`)],
  data: { pad_id: at.pad.id, version: at.version, blocks: at.blocks.length },
  view: () => ({ version: at.version, blocks: at.blocks }),
});

export const presentCreatedPad = (out: CreatedPad): Answer<'create_pad'> => ({
  parts: [
    line(`Created the pad ${inline(out.title)} (id ${out.pad_id}) in ${out.hub.slug}${out.thread_id ? `, beside thread ${out.thread_id}` : ''}: version ${out.version}, ${out.blocks} blocks.`),
    line(`Read it with open_pad "${out.pad_id}"; change it with edit_pad, passing base_version ${out.version}.`),
  ],
  data: { pad_id: out.pad_id, hub_id: out.hub.id, ...(out.thread_id ? { thread_id: out.thread_id } : {}), version: out.version, blocks: out.blocks },
});

export const PAD_TEXT_CLIP = 40_000;

/** A writer as agents read them: the name, then whether a person or an agent. */
export const writerLabel = (writer: Pick<Writer, 'name' | 'kind' | 'caller'>) =>
  `${inline(writer.name)} (${writer.kind === 'agent' ? 'agent' : 'person'}${callerNote(writer.caller) ? `, ${inline(callerNote(writer.caller))}` : ''})`;
const writerData = (writer: Writer) => ({ participant_id: writer.id, kind: writer.kind });

/** The outline table with a last column naming each section's last writer. */
function outlineWithWriters(rows: ReturnType<typeof outlineRows>, writers: ReadonlyMap<string, BlockWriter>, status: PadStatus, word: string): string[] {
  const table = outlineTable(rows, inline, status, word);
  if (!rows.length) return table;
  const cell = (i: number) => {
    const writer = writers.get(rows[i]!.id);
    return writer ? writerLabel(writer) : '(none)';
  };
  return table.map((row, i) => (i === 0 ? `${row} Last writer |` : i === 1 ? `${row}---|` : `${row} ${cell(i - 2)} |`));
}

/** open_pad's reading, with the last writer of each section (by section id) where the mode shows sections, and where threads leave its sections. */
export type PadReadingWithWriters = PadReading & { writers?: ReadonlyMap<string, BlockWriter>; blockWriters?: ReadonlyMap<string, BlockWriter>; status?: PadStatus };

/** open_pad: the header, then what the mode asked for, then how to edit. */
export function presentPad(reading: PadReadingWithWriters): Answer<'open_pad'> {
  const { pad, hub, seat, version, blocks, sections: all, canEdit } = reading;
  const writers = reading.writers ?? new Map<string, BlockWriter>();
  const byBlock = reading.blockWriters ?? new Map<string, BlockWriter>();
  const status = reading.status ?? NO_THREADS;
  const word = markWord(hub);
  const markOf = (id: string) => {
    const mark = status.marks.get(id);
    return mark ? { mark: markText(mark) } : {};
  };
  const parts: TextPart[] = [
    line(`# Pad ${inline(pad.title)}`),
    line(`id ${pad.id} · hub ${hub.slug} · version ${version} · status ${status.status} · ${blocks.length} blocks · ${all.length} sections`),
  ];
  const data: ToolData<'open_pad'> = { pad_id: pad.id, hub_id: hub.id, version, status: status.status, mode: reading.mode };
  // The outline as the web app lists it: the data's rows with each section's title, participant text
  // that the structured content never carries.
  let outline: OutlineSection[] = [];
  if (reading.mode === 'outline') {
    const rows = outlineRows(all);
    parts.push(line(''), ...outlineWithWriters(rows, writers, status, word).map(line));
    parts.push(line(''), line('Read sections with open_pad mode "sections" and their ids, or mode "full" for the whole text.'));
    const sections = rows.map((r) => {
      const writer = writers.get(r.id);
      const state = status.sections.get(r.id);
      return {
        id: r.id,
        level: r.level,
        words: r.words,
        ...(r.hidden ? { hidden: r.hidden } : {}),
        ...(state ? { status: state.status, open_threads: state.openThreads } : {}),
        ...(writer ? { last_writer: writerData(writer) } : {}),
        ...markOf(r.id),
      };
    });
    data.sections = sections;
    outline = sections.map((section, i) => ({ ...section, title: rows[i]!.title }));
  } else if (reading.mode === 'sections') {
    for (const section of reading.found) {
      const writer = writers.get(section.id);
      const mark = status.marks.get(section.id);
      parts.push(line(''), line(`## ${inline(section.title)} (section ${section.id})`), line(`Blocks: ${section.blocks.map((b) => b.id).join(', ')}`));
      if (writer) parts.push(line(`Last writer: ${writerLabel(writer)}`));
      if (mark) parts.push(line(`${word}: ${markText(mark, inline)}`));
      // Its links already in the form each block's last writer allows.
      parts.push(said(textByReach(section.blocks, byBlock), { reach: 'verified' }));
    }
    if (reading.missing.length) parts.push(line(''), line(`No such sections: ${reading.missing.join(', ')}. open_pad mode "outline" lists the ids.`));
    data.sections = reading.found.map((s) => {
      const writer = writers.get(s.id);
      return { id: s.id, level: s.level, blocks: s.blocks.map((b) => b.id), ...(writer ? { last_writer: writerData(writer) } : {}), ...markOf(s.id) };
    });
    if (reading.missing.length) data.missing = reading.missing;
  } else if (reading.mode === 'changes') {
    const { since, changes } = reading;
    parts.push(line(''), line(changes.length ? `${changes.length} blocks changed since version ${since}:` : `Nothing changed since version ${since}.`));
    for (const change of changes) {
      parts.push(line(''), line(`### Block ${change.block_id}: ${change.change}`));
      if (change.change !== 'removed') parts.push(said(change.text));
      else parts.push(line('It read:'), said(change.before ?? ''));
    }
    data.since = since;
    data.changes = changes.map((c) => ({ block_id: c.block_id, change: c.change }));
  } else {
    // Links by each block's last writer's reach, so the part keeps them as they are.
    const text = textByReach(blocks, byBlock);
    const written = all.filter((s) => writers.has(s.id));
    if (written.length) {
      parts.push(line(''), line('Last writer of each section:'));
      for (const s of written) parts.push(line(`- ${inline(s.title)} (section ${s.id}): ${writerLabel(writers.get(s.id)!)}`));
      data.sections = written.map((s) => ({ id: s.id, last_writer: writerData(writers.get(s.id)!) }));
    }
    parts.push(line(''), line(`Blocks in order: ${blocks.map((b) => b.id).join(', ') || 'none'}`), said(text, { reach: 'verified', clip: PAD_TEXT_CLIP, noun: 'pad', whole: 'open_pad mode "sections", a few sections at a time' }));
    const marks = markList(all, status, inline, word);
    if (marks.length) parts.push(line(''), ...marks.map(line));
    data.blocks = blocks.map((b) => b.id);
    if (text.length > PAD_TEXT_CLIP) data.clipped = true;
  }
  const suggests = !canEdit && seat !== null && hub.mode === 'checked';
  parts.push(
    line(''),
    line(
      canEdit
        ? `Edit with edit_pad, pad_id "${pad.id}", base_version ${version}.`
        : suggests
          ? `Suggest a change with edit_pad, pad_id "${pad.id}", base_version ${version}: in this Checked hub it waits for someone else's check.`
          : 'You may read this pad; editing needs a seat in its hub.',
    ),
  );
  return {
    parts,
    data,
    view: (): PadView => {
      const head = {
        pad: { id: pad.id, title: pad.title, version, status: status.status, hub: { slug: hub.slug, name: hub.name } },
        made_by: pad.created_by,
        seat: seat ? { role: seat } : null,
        canEdit,
      };
      if (reading.mode === 'changes') return { ...head, mode: 'changes', since: reading.since, changes: reading.changes };
      if (reading.mode === 'outline') return { ...head, mode: 'outline', sections: outline };
      return { ...head, mode: reading.mode };
    },
  };
}

const KIND_WORDS = { create: 'created', edit: 'edit', undo: 'undo', live: 'typing', restore: 'restore' } as const;

/** ui_pad_history: the versions, newest first, and who last wrote each block (names only in the view). */
export function presentPadHistory(history: PadHistory): Answer<'ui_pad_history'> {
  const { pad, versions } = history;
  const parts: TextPart[] = [line(`Versions of ${pad.id}, newest first (the pad is at version ${history.version}):`)];
  for (const v of versions) {
    parts.push(line(`- v${v.version} ${KIND_WORDS[v.kind]} by ${v.writer ? writerLabel(v.writer) : 'the service'} at ${new Date(v.at).toISOString()}, ${v.blocks} blocks${v.editId ? `, edit ${v.editId}` : ''}`));
  }
  if (history.nextBefore !== null) parts.push(line(`Older versions: before ${history.nextBefore}.`));
  return {
    parts,
    data: {
      pad_id: pad.id,
      version: history.version,
      versions: versions.map((v) => ({
        version: v.version,
        kind: v.kind,
        at: new Date(v.at).toISOString(),
        blocks: v.blocks,
        ...(v.writer ? { writer: writerData(v.writer) } : {}),
        ...(v.editId ? { edit_id: v.editId } : {}),
      })),
      ...(history.nextBefore !== null ? { next_before: history.nextBefore } : {}),
    },
    view: (): PadHistoryView => ({
      version: history.version,
      versions: versions.map((v) => ({ ...v, at: new Date(v.at).toISOString() })),
      nextBefore: history.nextBefore,
      authors: Object.fromEntries([...history.writers].map(([blockId, w]) => [blockId, { id: w.id, name: w.name, kind: w.kind, ...(w.caller ? { caller: w.caller } : {}) }])),
    }),
  };
}
