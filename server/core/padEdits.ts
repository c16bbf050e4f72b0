import * as Y from 'yjs';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Node as PMNode } from '@tiptap/pm/model';
import { blockMarkdown } from '../../schema/markdown.ts';
import { parseBlocks, insertBlocks, replaceBlock, type Block } from '../../sync/blocks.ts';
import { appendUpdate } from '../../sync/store.ts';
import { blocksAt, changedByOthersSince, findEdit, recordVersion, type VersionKind } from '../../sync/versions.ts';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, forbidden, invalid, notFound } from './errors.ts';
import { line, fenced, type Result, type TextPart } from './result.ts';
import { allows } from './rights.ts';
import { newId } from './secrets.ts';
import { authorOf, PAD_MAX_CHARS, readablePad, requireEditor } from './pads.ts';

/** One change to the pad's blocks: replace (or with no nodes delete) a block, or insert after one. */
export type BlockOp = { kind: 'edit'; blockId: string; text: string } | { kind: 'insert'; after: string; text: string };
export type Conflict = { block_id: string; reason: 'changed_since_base' | 'missing' | 'anchor_missing'; text?: string };

/**
 * A whole new text as block operations against the text at the base version: blocks that match
 * (by longest common subsequence) are untouched, so only what the caller changed is applied.
 */
export function diffAgainstBase(base: readonly { id: string; text: string }[], next: readonly string[]): BlockOp[] {
  const n = base.length;
  const m = next.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = base[i]!.text === next[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: BlockOp[] = [];
  let i = 0;
  let j = 0;
  let anchor = 'start';
  const removed: string[] = [];
  const added: string[] = [];
  // A run of removed base blocks and added texts between two matches: pair them up as edits.
  const settle = () => {
    const pairs = Math.min(removed.length, added.length);
    for (let k = 0; k < pairs; k++) {
      ops.push({ kind: 'edit', blockId: removed[k]!, text: added[k]! });
      anchor = removed[k]!;
    }
    for (const id of removed.slice(pairs)) ops.push({ kind: 'edit', blockId: id, text: '' });
    for (const text of added.slice(pairs)) ops.push({ kind: 'insert', after: anchor, text });
    removed.length = 0;
    added.length = 0;
  };
  while (i < n || j < m) {
    if (i < n && j < m && base[i]!.text === next[j]) {
      settle();
      anchor = base[i]!.id;
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      added.push(next[j++]!);
    } else {
      removed.push(base[i++]!.id);
    }
  }
  settle();
  return ops;
}

const splitBlocks = (text: string) => parseBlocks(text);

/**
 * Applies block operations to the live document in one transaction. A block someone else changed
 * since the base version, or that is gone, is left as it is and reported as a conflict.
 */
function applyOps(fragment: Y.XmlFragment, ops: readonly BlockOp[], touchedByOthers: ReadonlySet<string>) {
  const conflicts: Conflict[] = [];
  const changed: string[] = [];
  const elements = () => new Map(fragment.toArray().filter((c): c is Y.XmlElement => c instanceof Y.XmlElement).map((e) => [String(e.getAttribute('id')), e]));
  // Inserts after one anchor keep their order: each goes after the one before it.
  const lastInsertAfter = new Map<string, string>();
  for (const op of ops) {
    const current = elements();
    if (op.kind === 'edit') {
      const element = current.get(op.blockId);
      if (!element) {
        conflicts.push({ block_id: op.blockId, reason: 'missing', text: op.text });
        continue;
      }
      if (touchedByOthers.has(op.blockId)) {
        conflicts.push({ block_id: op.blockId, reason: 'changed_since_base', text: op.text });
        continue;
      }
      changed.push(...replaceBlock(fragment, element, splitBlocks(op.text)), op.blockId);
    } else {
      const after = lastInsertAfter.get(op.after) ?? op.after;
      let index = 0;
      if (after !== 'start') {
        const element = current.get(after);
        if (!element) {
          conflicts.push({ block_id: op.after, reason: 'anchor_missing', text: op.text });
          continue;
        }
        index = fragment.toArray().indexOf(element) + 1;
      } else if (lastInsertAfter.has('start')) {
        index = fragment.toArray().indexOf(current.get(lastInsertAfter.get('start')!)!) + 1;
      }
      const ids = insertBlocks(fragment, index, splitBlocks(op.text));
      if (ids.length) lastInsertAfter.set(op.after, ids.at(-1)!);
      changed.push(...ids);
    }
  }
  return { conflicts, changed: [...new Set(changed)] };
}

/** The pad's length after the operations, counted on block Markdown. */
function projectedLength(blocks: readonly Block[], ops: readonly BlockOp[]): number {
  const texts = new Map(blocks.map((b) => [b.id, b.text]));
  for (const op of ops) {
    if (op.kind === 'edit') texts.set(op.blockId, op.text);
    else texts.set(`insert:${texts.size}`, op.text);
  }
  return [...texts.values()].filter(Boolean).join('\n\n').length;
}

/**
 * One API edit at a time per pad on this instance; the CRDT merges everything else. `run` learns
 * whether it waited behind another edit (and so must re-read what that edit changed).
 */
const padLocks = new Map<string, Promise<unknown>>();
async function withPadLock<T>(padId: string, run: (waited: boolean) => Promise<T>): Promise<T> {
  const previous = padLocks.get(padId);
  const go = () => run(previous !== undefined);
  const next = (previous ?? Promise.resolve()).then(go, go);
  padLocks.set(padId, next);
  try {
    return await next;
  } finally {
    if (padLocks.get(padId) === next) padLocks.delete(padId);
  }
}

/** Applies, persists and versions a set of operations; the shared tail of edit_pad and undo_edit. */
async function commitOps(core: Core, actor: Actor, padId: string, kind: VersionKind, ops: BlockOp[], touchedByOthers: ReadonlySet<string>) {
  const editId = newId('edt_');
  let version: number | null = null;
  const { result } = await core.sync.edit(
    padId,
    authorOf(actor),
    (fragment, before) => {
      if (projectedLength(before, ops) > PAD_MAX_CHARS) {
        throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters; this edit would make it longer.`);
      }
      return applyOps(fragment, ops, touchedByOthers);
    },
    async (update, applied, blocks) => {
      if (!update || applied.changed.length === 0) return;
      await core.db.write(async (tx) => {
        await appendUpdate(tx, padId, update);
        version = (await recordVersion(tx, { padId, kind, author: authorOf(actor), editId, blocks, changed: applied.changed }))!.version;
      });
    },
  );
  if (version !== null) core.sync.notifyVersion(padId, version);
  return { version, editId: version === null ? null : editId, conflicts: result.conflicts, changed: result.changed };
}

export type EditPadInput = {
  pad_id: string;
  base_version: number;
  text?: string | undefined;
  edits?: { block_id: string; text: string }[] | undefined;
  inserts?: { after: string; text: string }[] | undefined;
};

function describeConflicts(conflicts: readonly Conflict[]): TextPart[] {
  const parts: TextPart[] = [];
  if (!conflicts.length) return parts;
  parts.push(line(''), line(`${conflicts.length} conflicts: these were left as they are. Read them again (open_pad mode "changes" since your base_version) and retry on the new version.`));
  const reasons = { changed_since_base: 'someone else changed it since your base_version', missing: 'it is no longer in the pad', anchor_missing: 'the block to insert after is no longer in the pad' };
  for (const conflict of conflicts) {
    parts.push(line(`- block ${conflict.block_id}: ${reasons[conflict.reason]}. Your text was:`));
    parts.push(fenced(conflict.text ?? ''));
  }
  return parts;
}

export async function editPad(core: Core, actor: Actor, input: EditPadInput): Promise<Result> {
  const conn = core.db.pool;
  const { pad, hub, seat } = await readablePad(core, conn, input.pad_id, actor);
  requireEditor(seat, hub);
  const whole = input.text !== undefined;
  if (whole && (input.edits?.length || input.inserts?.length)) {
    throw invalid('Send either text (the whole new pad) or edits and inserts, not both.', { issues: [{ path: 'text', message: 'Not with edits or inserts.' }] });
  }
  if (!whole && !input.edits?.length && !input.inserts?.length) {
    throw invalid('Send text (the whole new pad), or edits and inserts.', { issues: [{ path: 'edits', message: 'Nothing to change.' }] });
  }
  if (whole && input.text!.length > PAD_MAX_CHARS) throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters.`);
  return withPadLock(pad.id, async (waited) => {
    // The version read with the pad is current unless another edit went first while this one waited.
    const current = waited ? await conn.oneFirst(sqlVersion(pad.id)) : pad.version;
    if (input.base_version > current) {
      throw invalid(`base_version ${input.base_version} is newer than the pad (version ${current}).`, { issues: [{ path: 'base_version', message: 'Newer than the pad.' }] });
    }
    let ops: BlockOp[];
    if (whole) {
      const base = await blocksAt(conn, pad.id, input.base_version);
      if (!base) throw invalid(`This pad has no version ${input.base_version}.`, { issues: [{ path: 'base_version', message: 'Unknown version.' }] });
      ops = diffAgainstBase(base, splitBlocks(input.text!).map(blockText));
    } else {
      ops = [
        ...(input.edits ?? []).map((e): BlockOp => ({ kind: 'edit', blockId: e.block_id, text: e.text })),
        ...(input.inserts ?? []).map((e): BlockOp => ({ kind: 'insert', after: e.after, text: e.text })),
      ];
    }
    // Reading the current version, nobody can have changed anything since: skip the query.
    const touched = input.base_version === current ? new Set<string>() : await changedByOthersSince(conn, pad.id, input.base_version, actor.id);
    const outcome = ops.length ? await commitOps(core, actor, pad.id, 'edit', ops, touched) : { version: null, editId: null, conflicts: [], changed: [] };
    const version = outcome.version ?? current;
    const parts: TextPart[] = [
      line(
        outcome.version === null
          ? `Nothing changed in ${pad.id}; it stays at version ${current}.`
          : `Edited ${pad.id}: version ${outcome.version}, edit ${outcome.editId}, ${outcome.changed.length} blocks changed. Undo it with undo_edit "${outcome.editId}".`,
      ),
      ...describeConflicts(outcome.conflicts),
    ];
    return {
      parts,
      data: {
        pad_id: pad.id,
        version,
        ...(outcome.editId ? { edit_id: outcome.editId } : {}),
        changed: outcome.changed,
        conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
      },
    };
  });
}

const sqlVersion = (padId: string) => sql.type(z.object({ version: z.number() }))`SELECT version FROM pads WHERE id = ${padId}`;
const blockText = (node: PMNode) => blockMarkdown(node).trimEnd();

/**
 * Takes one edit back as a new version: blocks nobody changed since get their text from before the
 * edit; the others are reported as conflicts. Members undo their own edits, owners and helpers anyone's.
 */
export async function undoEdit(core: Core, actor: Actor, input: { edit_id: string }): Promise<Result> {
  const conn = core.db.pool;
  const edit = await findEdit(conn, input.edit_id);
  if (!edit) throw notFound('No such edit.');
  const { pad, hub, seat } = await readablePad(core, conn, edit.pad_id, actor);
  requireEditor(seat, hub);
  if (edit.actor_id !== actor.id && !allows(seat, 'moderate')) {
    throw forbidden('Members undo their own edits; owners and helpers undo anyone’s.', { yourCapabilities: ['edit_pad'] });
  }
  return withPadLock(pad.id, async () => {
    const before = (await blocksAt(conn, pad.id, edit.version - 1)) ?? [];
    const after = (await blocksAt(conn, pad.id, edit.version)) ?? [];
    const beforeById = new Map(before.map((b, i) => [b.id, { ...b, index: i }]));
    const afterById = new Map(after.map((b) => [b.id, b]));
    const now = new Map((await core.sync.read(pad.id)).map((b) => [b.id, b]));
    const ops: BlockOp[] = [];
    const conflicts: Conflict[] = [];
    for (const id of edit.changed) {
      const was = beforeById.get(id);
      const became = afterById.get(id);
      const is = now.get(id);
      // Only blocks exactly as the edit left them can be taken back without losing someone's work.
      if ((became?.text ?? null) !== (is?.text ?? null)) {
        conflicts.push({ block_id: id, reason: 'changed_since_base', text: was?.text ?? '' });
        continue;
      }
      if (was && became) ops.push({ kind: 'edit', blockId: id, text: was.text });
      else if (became) ops.push({ kind: 'edit', blockId: id, text: '' });
      else if (was) {
        const anchor = before.slice(0, was.index).reverse().find((b) => now.has(b.id))?.id ?? 'start';
        ops.push({ kind: 'insert', after: anchor, text: was.text });
      }
    }
    const outcome = ops.length ? await commitOps(core, actor, pad.id, 'undo', ops, new Set()) : { version: null, editId: null, conflicts: [], changed: [] };
    const all = [...conflicts, ...outcome.conflicts];
    const version = outcome.version ?? (await conn.oneFirst(sqlVersion(pad.id)));
    return {
      parts: [
        line(outcome.version === null ? `Nothing of ${input.edit_id} could be undone.` : `Undid ${input.edit_id} in ${pad.id}: version ${outcome.version}.`),
        ...describeConflicts(all),
      ],
      data: {
        pad_id: pad.id,
        version,
        ...(outcome.editId ? { edit_id: outcome.editId } : {}),
        undone: input.edit_id,
        changed: outcome.changed,
        conflicts: all.map((c) => ({ block_id: c.block_id, reason: c.reason })),
      },
    };
  });
}
