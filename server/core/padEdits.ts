import * as Y from 'yjs';
import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import type { Node as PMNode } from '@tiptap/pm/model';
import { blockMarkdown } from '../../schema/markdown.ts';
import { parseBlocks, insertBlocks, padLength, readBlock, replaceBlock } from '../../sync/blocks.ts';
import { blocksAt, changedByOthersSince, findEdit, recordVersion, StaleVersion, toRefs, type VersionKind } from '../../sync/versions.ts';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, forbidden, invalid, notFound } from './errors.ts';
import { line, fenced, type Result, type TextPart } from './result.ts';
import { linkForm } from './framing.ts';
import { allows } from './rights.ts';
import { newId } from './secrets.ts';
import { idempotencyKey } from './idempotency.ts';
import { authorOf, editablePad } from './pads.ts';
import { PAD_MAX_CHARS } from '../../schema/pad.ts';
import { VersionRow } from '../../schema/rows.ts';

/** One change to the pad's blocks: replace (or with no nodes delete) a block, or insert after one. */
export type BlockOp = { kind: 'edit'; blockId: string; text: string } | { kind: 'insert'; after: string; text: string; id?: string };
export type Conflict = { block_id: string; reason: 'changed_since_base' | 'missing' | 'anchor_missing'; text?: string };

/** Past this many cells the middle of a diff is paired up by position instead of by LCS. */
const LCS_CELLS = 4_000_000;

/**
 * A whole new text as block operations against the text at the base version: blocks that match
 * (by longest common subsequence, after the common head and tail) are untouched, so only what the
 * caller changed is applied.
 */
export function diffAgainstBase(base: readonly { id: string; text: string }[], next: readonly string[]): BlockOp[] {
  let head = 0;
  while (head < base.length && head < next.length && base[head]!.text === next[head]) head++;
  let tailBase = base.length;
  let tailNext = next.length;
  while (tailBase > head && tailNext > head && base[tailBase - 1]!.text === next[tailNext - 1]) {
    tailBase--;
    tailNext--;
  }
  const middle = base.slice(head, tailBase);
  const incoming = next.slice(head, tailNext);
  const n = middle.length;
  const m = incoming.length;
  const lcs: number[][] =
    n * m <= LCS_CELLS ? Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0)) : [];
  for (let i = n - 1; lcs.length && i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = middle[i]!.text === incoming[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: BlockOp[] = [];
  let anchor = head > 0 ? base[head - 1]!.id : 'start';
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
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (lcs.length && i < n && j < m && middle[i]!.text === incoming[j]) {
      settle();
      anchor = middle[i]!.id;
      i++;
      j++;
    } else if (j < m && (i === n || !lcs.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      added.push(incoming[j++]!);
    } else {
      removed.push(middle[i++]!.id);
    }
  }
  settle();
  return ops;
}

/**
 * The pad's latest version and its blocks. With `trustRecorded`, what this instance last recorded or
 * read of the pad (no query; the version is checked again when the change commits); else read from
 * the database, and remembered.
 */
async function latestBlocks(core: Core, padId: string, trustRecorded: boolean): Promise<Latest> {
  const mine = trustRecorded ? core.sync.recorded(padId) : undefined;
  if (mine) return { ...mine, remembered: true };
  const stored = (await blocksAt(core.db.pool, padId)) ?? { version: 0, blocks: [] };
  core.sync.remember(padId, stored.version, stored.blocks.map((b) => ({ id: b.id, type: '', text: b.text })));
  return { ...stored, remembered: false };
}
type Latest = { version: number; blocks: readonly { id: string; text: string }[]; remembered: boolean };

/**
 * Runs an edit against the latest version this instance knows. If another instance wrote a version
 * meanwhile (the commit finds the pad moved on and takes the change back out of the live document),
 * the live document catches up with the database and the edit runs again on its latest version.
 */
async function onLatest<T>(core: Core, padId: string, run: (latest: Latest) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(await latestBlocks(core, padId, attempt === 1));
    } catch (error) {
      if (!(error instanceof StaleVersion)) throw error;
      await core.sync.catchUp(padId);
      if (attempt === 3) throw new AppError('busy', 'This pad is being written by several servers at once; try again.', { retry_after_seconds: 1 });
    }
  }
}

/** At most this many block changes in one call (whole-text edits included). */
export const MAX_OPS = 400;

/** What the pad must still look like for an operation to apply: guards against overwriting others. */
export type Guard = {
  /** Blocks someone else changed in a version after the caller's base. */
  touchedByOthers: ReadonlySet<string>;
  /** Each block's text at the latest version: a live text that differs is typing not yet versioned. */
  latest: ReadonlyMap<string, string>;
};

/**
 * Applies block operations to the live document in one transaction. A block someone else changed
 * since the base version, one being typed in right now, or one that is gone, is left as it is and
 * reported as a conflict.
 */
function applyOps(fragment: Y.XmlFragment, ops: readonly BlockOp[], guard: Guard) {
  const conflicts: Conflict[] = [];
  const changed: string[] = [];
  const elements = new Map<string, Y.XmlElement>();
  for (const child of fragment.toArray()) if (child instanceof Y.XmlElement) elements.set(String(child.getAttribute('id')), child);
  const remember = (ids: string[], index: number) => ids.forEach((id, i) => elements.set(id, fragment.get(index + i) as Y.XmlElement));
  // Inserts after one anchor keep their order: each goes after the one before it.
  const lastInsertAfter = new Map<string, string>();
  for (const op of ops) {
    if (op.kind === 'edit') {
      const element = elements.get(op.blockId);
      if (!element) {
        conflicts.push({ block_id: op.blockId, reason: 'missing', text: op.text });
        continue;
      }
      // Only the blocks an edit names are read from the live pad, whatever its size.
      const live = readBlock(element)?.text;
      const current = live ?? '';
      const nodes = parseBlocks(op.text);
      const sent = nodes.map(blockText).join('\n\n');
      if (sent === current || sent === asRead(current)) continue; // sent back as it is: keep it, links and all
      const typedSince = guard.latest.has(op.blockId) && guard.latest.get(op.blockId) !== live;
      if (guard.touchedByOthers.has(op.blockId) || typedSince) {
        conflicts.push({ block_id: op.blockId, reason: 'changed_since_base', text: op.text });
        continue;
      }
      const index = fragment.toArray().indexOf(element);
      const ids = replaceBlock(fragment, element, nodes);
      elements.delete(op.blockId);
      remember(ids, index);
      changed.push(op.blockId, ...ids);
    } else {
      if (op.id && elements.has(op.id)) {
        // Re-inserting a block that is already back (an undo repeated): nothing to do twice.
        conflicts.push({ block_id: op.id, reason: 'changed_since_base', text: op.text });
        continue;
      }
      const after = lastInsertAfter.get(op.after) ?? op.after;
      let index = 0;
      if (after !== 'start') {
        const element = elements.get(after);
        if (!element) {
          conflicts.push({ block_id: op.after, reason: 'anchor_missing', text: op.text });
          continue;
        }
        index = fragment.toArray().indexOf(element) + 1;
      }
      const ids = insertBlocks(fragment, index, parseBlocks(op.text), op.id);
      remember(ids, index);
      if (ids.length) lastInsertAfter.set(op.after, ids.at(-1)!);
      changed.push(...ids);
    }
  }
  return { conflicts, changed: [...new Set(changed)] };
}

/** The pad's length after the operations, counted on block Markdown. */
function projectedLength(blocks: readonly { id: string; text: string }[], ops: readonly BlockOp[]): number {
  const texts = new Map(blocks.map((b) => [b.id, b.text]));
  for (const op of ops) {
    if (op.kind === 'edit') texts.set(op.blockId, op.text);
    else texts.set(`insert:${texts.size}`, op.text);
  }
  return padLength(texts.values());
}

type Outcome = { version: number | null; editId: string | null; conflicts: Conflict[]; changed: string[] };

/**
 * Applies, persists and versions a set of operations; the shared tail of edit_pad and undo_edit.
 * `onCommit` runs in the same database transaction once the version is known.
 */
async function commitOps(
  core: Core,
  actor: Actor,
  padId: string,
  kind: VersionKind,
  ops: BlockOp[],
  guard: Guard,
  base: Latest,
  onCommit?: (tx: DatabaseTransactionConnection, outcome: Outcome) => Promise<void>,
): Promise<Outcome> {
  // Counted on the latest version, which has just taken in any live typing: no read of the live pad
  // on the way to its transaction.
  if (projectedLength(base.blocks, ops) > PAD_MAX_CHARS) {
    throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters; this edit would make it longer.`);
  }
  let version: number | null = null;
  let editId: string | null = null;
  const { result } = await core.sync.edit(
    padId,
    authorOf(actor),
    (fragment) => applyOps(fragment, ops, guard),
    async (update, applied, blocks) => {
      if (!update || applied.changed.length === 0) return null;
      // Made once the people in the pad have the change: nothing before it waits for the id.
      const id = (editId = newId('edt_'));
      const previous = { version: base.version, blocks: toRefs(base.blocks) };
      const record = async (conn: CommonQueryMethods) =>
        (await recordVersion(conn, { padId, kind, author: authorOf(actor), editId: id, blocks, changed: applied.changed, update, previous }))!.version;
      // Without anything else to write, the version is one statement: no transaction round trips.
      if (!onCommit) return (version = await core.db.writeStatement(record));
      return core.db.write(async (tx) => {
        version = await record(tx);
        await onCommit(tx, { version, editId: id, conflicts: applied.conflicts, changed: applied.changed });
        return version;
      });
    },
  );
  if (version !== null) core.sync.notifyVersion(padId, { version, actorId: actor.id, changed: result.changed });
  return { version, editId: version === null ? null : editId, conflicts: result.conflicts, changed: result.changed };
}

export type EditPadInput = {
  pad_id: string;
  base_version: number;
  idempotency_key?: string | undefined;
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

/**
 * Called once, inside the database transaction that records the new version, with the Result the
 * call will answer; never when nothing changed. Throwing rolls the version back, takes the change
 * back out of the live document, and the error reaches the caller unchanged.
 */
export type Seal = (tx: DatabaseTransactionConnection, result: Result) => Promise<void>;

/**
 * edit_pad. With `seal` (the tool pipeline, which replays and stores idempotent results itself) no
 * idempotency handling happens here; without it an `idempotency_key` is honoured as before.
 */
export async function editPad(core: Core, actor: Actor, input: EditPadInput, seal?: Seal): Promise<Result> {
  const { pad } = await editablePad(core, input.pad_id, actor);
  const whole = input.text !== undefined;
  if (whole && (input.edits?.length || input.inserts?.length)) {
    throw invalid('Send either text (the whole new pad) or edits and inserts, not both.', { issues: [{ path: 'text', message: 'Not with edits or inserts.' }] });
  }
  if (!whole && !input.edits?.length && !input.inserts?.length) {
    throw invalid('Send text (the whole new pad), or edits and inserts.', { issues: [{ path: 'edits', message: 'Nothing to change.' }] });
  }
  if (whole && input.text!.length > PAD_MAX_CHARS) throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters.`);
  const key = seal || input.idempotency_key === undefined ? null : idempotencyKey(core, actor, 'edit_pad', input.idempotency_key, input);
  const earlier = await key?.earlier();
  if (earlier) return earlier;
  const conn = core.db.pool;
  return core.sync
    .exclusive(pad.id, () =>
      onLatest(core, pad.id, async (latest) => {
        // A base newer than what this instance knows: another instance wrote it; read again.
        if (input.base_version > latest.version && latest.remembered) throw new StaleVersion(pad.id, latest.version);
        const current = latest.version;
        if (input.base_version > current) {
          throw invalid(`base_version ${input.base_version} is newer than the pad (version ${current}).`, { issues: [{ path: 'base_version', message: 'Newer than the pad.' }] });
        }
        let ops: BlockOp[];
        if (whole) {
          const base = input.base_version === current ? latest : await blocksAt(conn, pad.id, input.base_version);
          if (!base) throw invalid(`This pad has no version ${input.base_version}.`, { issues: [{ path: 'base_version', message: 'Unknown version.' }] });
          // Agents read links in link form: compare in that form, so a paragraph sent back unchanged
          // is untouched and keeps its real links.
          ops = diffAgainstBase(base.blocks.map((b) => ({ id: b.id, text: asRead(b.text) })), parseBlocks(input.text!).map(blockText));
        } else {
          ops = [
            ...(input.edits ?? []).map((e): BlockOp => ({ kind: 'edit', blockId: e.block_id, text: e.text })),
            ...(input.inserts ?? []).map((e): BlockOp => ({ kind: 'insert', after: e.after, text: e.text })),
          ];
        }
        if (ops.length > MAX_OPS) {
          throw new AppError('too_large', `This edit changes ${ops.length} blocks; at most ${MAX_OPS} change in one call. Edit in parts.`);
        }
        // Reading the current version, nobody can have changed anything since: skip the query.
        const touchedByOthers =
          input.base_version === current
            ? new Set<string>()
            : (core.sync.changedByOthersSince(pad.id, input.base_version, current, actor.id) ??
              (await changedByOthersSince(conn, pad.id, input.base_version, actor.id)));
        const guard: Guard = { touchedByOthers, latest: new Map(latest.blocks.map((b) => [b.id, b.text])) };
        const result = (outcome: Outcome): Result => editResult(pad.id, current, outcome);
        const store = seal
          ? (tx: DatabaseTransactionConnection, outcome: Outcome) => seal(tx, result(outcome))
          : key
            ? (tx: DatabaseTransactionConnection, outcome: Outcome) => key.store(tx, result(outcome))
            : undefined;
        const outcome = ops.length ? await commitOps(core, actor, pad.id, 'edit', ops, guard, latest, store) : { version: null, editId: null, conflicts: [], changed: [] };
        return result(outcome);
      }),
    )
    .catch((error: unknown) => (key ? key.winner(error) : Promise.reject(error)));
}

/** What edit_pad answers: the new version and edit id, or that nothing changed, and the conflicts. */
function editResult(padId: string, current: number, outcome: Outcome): Result {
  return {
    parts: [
      line(
        outcome.version === null
          ? `Nothing changed in ${padId}; it stays at version ${current}.`
          : `Edited ${padId}: version ${outcome.version}, edit ${outcome.editId}, ${outcome.changed.length} blocks changed. Undo it with undo_edit "${outcome.editId}".`,
      ),
      ...describeConflicts(outcome.conflicts),
    ],
    data: {
      pad_id: padId,
      version: outcome.version ?? current,
      ...(outcome.editId ? { edit_id: outcome.editId } : {}),
      changed: outcome.changed,
      conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
    },
  };
}

const sqlVersion = (padId: string) => sql.type(VersionRow)`SELECT version FROM pads WHERE id = ${padId}`;
const blockText = (node: PMNode) => blockMarkdown(node).trimEnd();
/**
 * A block's Markdown as agents read it (links in link form), normalised like anything they send.
 * Block Markdown without a link is its own read form: it is already what the serializer writes.
 */
const asRead = (text: string) => {
  const read = linkForm(text);
  return read === text ? text : parseBlocks(read).map(blockText).join('\n\n');
};

/**
 * Takes one edit back as a new version: blocks nobody changed since get their text from before the
 * edit; the others are reported as conflicts. Members undo their own edits, owners and helpers anyone's.
 */
export async function undoEdit(core: Core, actor: Actor, input: { edit_id: string }, seal?: Seal): Promise<Result> {
  const conn = core.db.pool;
  const edit = await findEdit(conn, input.edit_id);
  if (!edit) throw notFound('No such edit.');
  const { pad, seat } = await editablePad(core, edit.pad_id, actor);
  if (edit.actor_id !== actor.id && !allows(seat, 'moderate')) {
    throw forbidden('Members undo their own edits; owners and helpers undo anyone’s.', { yourCapabilities: ['edit_pad'] });
  }
  const before = (await blocksAt(conn, pad.id, edit.version - 1))?.blocks ?? [];
  const after = (await blocksAt(conn, pad.id, edit.version))?.blocks ?? [];
  return core.sync.exclusive(pad.id, () => onLatest(core, pad.id, async (latest) => {
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
        // With its old id, so repeating the undo finds it back and does not insert it twice.
        ops.push({ kind: 'insert', after: anchor, text: was.text, id: id });
      }
    }
    const guard: Guard = { touchedByOthers: new Set(), latest: new Map(latest.blocks.map((b) => [b.id, b.text])) };
    const answer = (outcome: Outcome, version: number): Result => {
      const all = [...conflicts, ...outcome.conflicts];
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
    };
    const sealUndo = seal && ((tx: DatabaseTransactionConnection, outcome: Outcome) => seal(tx, answer(outcome, outcome.version!)));
    const outcome = ops.length ? await commitOps(core, actor, pad.id, 'undo', ops, guard, latest, sealUndo) : { version: null, editId: null, conflicts: [], changed: [] };
    return answer(outcome, outcome.version ?? (await conn.oneFirst(sqlVersion(pad.id))));
  }));
}
