import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import type { Document } from '@hocuspocus/server';
import { PAD_FRAGMENT, PAD_MAX_CHARS } from '../schema/pad.ts';
import type { Db } from '../server/db/database.ts';
import type { PlannedWrite } from '../server/db/plannedWrite.ts';
import { readBlocks } from './blocks.ts';
import { applyOps, blockText, parsed, projectedLength, type BlockOp, type Conflict, type Guard } from './blockOps.ts';
import { diffAgainstBase } from './baseDiff.ts';
import { insertBlocks, parseBlocks } from './blocks.ts';
import type { LiveChange, LiveDocs } from './liveDocs.ts';
import type { LiveVersions } from './liveVersions.ts';
import type { PadState, PadVersions, VersionChange, Written } from './padVersions.ts';
import { createVersionGroup } from './versionGroup.ts';
import { blocksAt, changedByOthersSince, editIdOf, flagsOpen, groupable, StaleVersion, unflaggedOnly, type Author } from './versions.ts';

/** At most this many block changes in one call (whole-text edits included). */
export const MAX_OPS = 400;

/**
 * What an edit asks for, in plain values: a whole new text (diffed against the base version), block
 * edits and inserts, taking back one earlier edit (its version and the blocks it changed), or the
 * pad's blocks as they were at an earlier version, written as a new version on top.
 */
export type EditRequest =
  | { text: string }
  | { edits: readonly { blockId: string; text: string }[]; inserts: readonly { after: string; text: string }[] }
  | { undo: { version: number; changed: readonly string[] } }
  | { restore: number };

/** What an edit did: the new version and its edit id (null when nothing changed), the pad's version either way. */
export type EditOutcome = {
  version: number | null;
  editId: string | null;
  conflicts: Conflict[];
  changed: string[];
  current: number;
  /** The characters of text the version saved: the new text of the blocks it changed. */
  saved: number;
};

/** Why an edit was refused, as a code the core turns into its own error. */
export class EditRefused extends Error {
  readonly code: 'base_ahead' | 'unknown_base' | 'too_large' | 'too_many_ops';
  readonly detail: { current?: number; ops?: number };

  constructor(code: 'base_ahead' | 'unknown_base' | 'too_large' | 'too_many_ops', detail: { current?: number; ops?: number } = {}) {
    super(code);
    this.code = code;
    this.detail = detail;
    this.name = 'EditRefused';
  }
}

type Plan = { ops: BlockOp[]; guard: Guard; conflicts: Conflict[] };

/**
 * The edit engine: block operations on the live document, the conflict guard, and the version each
 * edit commits, behind one call. An edit runs on the current version this instance knows and commits
 * in one statement; if another instance wrote first, the change is taken back out and the edit runs
 * again under the pad's row lock, on what the database holds, so it cannot lose that race twice.
 */
export function createEditEngine(deps: { db: Db; versions: PadVersions; live: LiveDocs; typing: LiveVersions; readForm: (text: string) => string }) {
  const { db, versions, live } = deps;
  const group = createVersionGroup(db, versions);
  /** A block's Markdown as agents read it (links in link form), normalised like anything they send. */
  const asRead = (text: string) => {
    const read = deps.readForm(text);
    return read === text ? text : parseBlocks(read).map(blockText).join('\n\n');
  };

  async function plan(conn: CommonQueryMethods, padId: string, document: Document, author: Author, request: EditRequest, base: number | null, state: PadState, undone?: Undone): Promise<Plan> {
    const latest = new Map(state.blocks.map((b) => [b.id, b.text]));
    if ('undo' in request) return planUndo(document, request.undo.changed, undone!, latest);
    if ('restore' in request) return planRestore(state, undone!.before, latest);
    if (base! > state.version) throw new EditRefused('base_ahead', { current: state.version });
    let ops: BlockOp[];
    if ('text' in request) {
      const baseList = base === state.version ? state : await blocksAt(conn, padId, base!);
      if (!baseList) throw new EditRefused('unknown_base');
      const nodes = parseBlocks(request.text);
      const texts = nodes.map(blockText);
      // Agents read a paragraph's links live or in link form (by its last writer's reach): either
      // form sent back unchanged leaves it untouched, its real links kept.
      ops = diffAgainstBase(baseList.blocks.map((b) => ({ id: b.id, text: b.text, read: asRead(b.text) })), texts).map((change): BlockOp => {
        const at = change.index;
        const chosen = at === null ? { nodes: [], text: '' } : { nodes: [nodes[at]!], text: texts[at]! };
        return change.kind === 'edit' ? { kind: 'edit', blockId: change.blockId, ...chosen } : { kind: 'insert', after: change.after, ...chosen };
      });
    } else {
      ops = [
        ...request.edits.map((e): BlockOp => ({ kind: 'edit', blockId: e.blockId, ...parsed(e.text), sent: e.text }) as BlockOp),
        ...request.inserts.map((e): BlockOp => ({ kind: 'insert', after: e.after, ...parsed(e.text), sent: e.text }) as BlockOp),
      ];
    }
    if (ops.length > MAX_OPS) throw new EditRefused('too_many_ops', { ops: ops.length });
    // Reading the current version, nobody can have changed anything since: nothing to look up.
    const touchedByOthers =
      base === state.version
        ? new Set<string>()
        : (versions.changedByOthersSince(padId, base!, state.version, author?.id ?? null) ?? (await changedByOthersSince(conn, padId, base!, author?.id ?? '')));
    return { ops, guard: { touchedByOthers, latest, asRead }, conflicts: [] };
  }

  /** Blocks exactly as the edit left them get their text from before it; the others are conflicts. */
  function planUndo(document: Document, changed: readonly string[], undone: Undone, latest: Map<string, string>): Plan {
    const beforeById = new Map(undone.before.map((b, i) => [b.id, { ...b, index: i }]));
    const afterById = new Map(undone.after.map((b) => [b.id, b]));
    const now = new Map(readBlocks(document.getXmlFragment(PAD_FRAGMENT)).map((b) => [b.id, b]));
    const ops: BlockOp[] = [];
    const conflicts: Conflict[] = [];
    for (const id of changed) {
      const was = beforeById.get(id);
      const became = afterById.get(id);
      if ((became?.text ?? null) !== (now.get(id)?.text ?? null)) {
        conflicts.push({ block_id: id, reason: 'changed_since_base', text: was?.text ?? '' });
        continue;
      }
      if (became) ops.push({ kind: 'edit', blockId: id, ...(was ? parsed(was.text) : { nodes: [], text: '' }) });
      else if (was) {
        const anchor = undone.before.slice(0, was.index).reverse().find((b) => now.has(b.id))?.id ?? 'start';
        // With its old id, so repeating the undo finds it back and does not insert it twice.
        ops.push({ kind: 'insert', after: anchor, ...parsed(was.text), id });
      }
    }
    return { ops, guard: { touchedByOthers: new Set(), latest, asRead }, conflicts };
  }

  /**
   * The blocks as they were at the restored version: the current list diffed against that one, so
   * blocks unchanged since are untouched and a block that was removed comes back under its old id.
   * A block being typed in right now is left as it is (a conflict), as with any edit.
   */
  function planRestore(state: PadState, restored: readonly { id: string; text: string }[], latest: Map<string, string>): Plan {
    const present = new Set(state.blocks.map((b) => b.id));
    const ops = diffAgainstBase(state.blocks, restored.map((b) => b.text)).map((change): BlockOp => {
      const block = change.index === null ? null : restored[change.index]!;
      const chosen = block ? parsed(block.text) : { nodes: [], text: '' };
      if (change.kind === 'edit') return { kind: 'edit', blockId: change.blockId, ...chosen };
      return { kind: 'insert', after: change.after, ...chosen, ...(block && !present.has(block.id) ? { id: block.id } : {}) };
    });
    if (ops.length > MAX_OPS) throw new EditRefused('too_many_ops', { ops: ops.length });
    return { ops, guard: { touchedByOthers: new Set(), latest, asRead }, conflicts: [] };
  }

  /** An earlier version's blocks: before and after an undone edit, or (a restore) the restored version's as `before`. */
  type Undone = { before: readonly { id: string; text: string }[]; after: readonly { id: string; text: string }[] };

  /**
   * One attempt: plan on `state`, apply live (handing the change to `went` at once, so whoever runs
   * the attempt can take it back whatever fails later, the commit included), record the version on
   * `conn`, with what the pipeline writes beside it (`write`) in the same transaction.
   */
  async function attempt(
    document: Document,
    padId: string,
    author: Author,
    request: EditRequest,
    base: number | null,
    write: PlannedWrite<EditOutcome> | undefined,
    undone: Undone | undefined,
    locked: DatabaseTransactionConnection | null,
    fresh: boolean,
    went: (change: LiveChange<unknown>) => void,
  ): Promise<{ outcome: EditOutcome; written: Written | null }> {
    const state = locked ? await versions.locked(locked, padId) : fresh ? await versions.fresh(padId) : await versions.current(padId);
    // Read after the version, the log holds at least what made it: the live copy takes in what it lacks.
    if (locked || fresh) await live.catchUp(document, locked ?? db.pool);
    // A base newer than what this instance knows: another instance wrote it; read again.
    if (!locked && !fresh && base !== null && base > state.version) throw new StaleVersion(padId, state.version);
    const { ops, guard, conflicts } = await plan(locked ?? db.pool, padId, document, author, request, base, state, undone);
    const unchanged = (more: Conflict[] = []) => ({
      outcome: { version: null, editId: null, conflicts: [...conflicts, ...more], changed: [], current: state.version, saved: 0 },
      written: null,
    });
    if (!ops.length) return unchanged();
    // Counted on the latest version, which has just taken in any live typing.
    if (projectedLength(state.blocks, ops) > PAD_MAX_CHARS) throw new EditRefused('too_large');
    const change = live.apply(document, author, (fragment) => applyOps(fragment, ops, guard));
    went(change);
    const applied = change.result;
    if (!change.update || applied.changed.length === 0) return unchanged(applied.conflicts);
    const editId = editIdOf(padId, state.version + 1);
    const blocksNow = readBlocks(document.getXmlFragment(PAD_FRAGMENT));
    const changed = new Set(applied.changed);
    const saved = blocksNow.reduce((sum, block) => sum + (changed.has(block.id) ? block.text.length : 0), 0);
    const outcomeAt = (version: number): EditOutcome => ({ version, editId, conflicts: [...conflicts, ...applied.conflicts], changed: applied.changed, current: version, saved });
    const made: VersionChange = {
      kind: 'undo' in request ? 'undo' : 'restore' in request ? 'restore' : 'edit',
      ...('restore' in request ? { restored: request.restore } : {}),
      author,
      live: blocksNow,
      mine: changed,
      changed: applied.changed,
      update: change.update,
    };
    const finished = (written: Written) => ({ outcome: outcomeAt(written.state.version), written });
    const record = async (conn: CommonQueryMethods) => finished((await versions.write(conn, padId, state, made))!);
    const withWrite = async (tx: DatabaseTransactionConnection) => {
      const recorded = await record(tx);
      await write!.commit(tx, recorded.outcome);
      return recorded;
    };
    if (locked) return write ? withWrite(locked) : record(locked);
    // Without anything else to write, or with what can be written inside the version's own statement
    // (the version made is the one after `state`, or none), the version is one statement: no
    // transaction round trips. A caller who can send the edit again is turned away as busy rather
    // than kept waiting (the change, held back from editors until it commits, is then taken back).
    const inline = write?.inline?.(outcomeAt(state.version + 1)) ?? null;
    if (inline) {
      const planned = versions.plan(padId, state, made)!;
      const onlyUnflagged = inline.onlyUnflagged === true;
      const alongside = onlyUnflagged ? sql.fragment`(${unflaggedOnly(padId)}, ${inline.sql})` : inline.sql;
      // Alone, what is counted runs inside the version's own statement; grouped, from `windows`.
      const alone = () =>
        db.statementOrBusy(async (conn) => {
          try {
            return await versions.record(conn, { ...planned, input: { ...planned.input, alongside } });
          } catch (error) {
            throw inline.refusal(error) ?? error;
          }
        });
      try {
        // Many writers at once: with the others' versions, by one statement (versionGroup.ts).
        return finished(await (inline.windows && groupable(planned.input) ? group.record(planned, inline.windows, onlyUnflagged, alone) : alone()));
      } catch (error) {
        // The pad has an open flag this edit may settle: written again in a transaction that settles it.
        if (!flagsOpen(error)) throw error;
      }
    }
    return write ? db.writeOrBusy(withWrite) : db.writeStatement((conn) => record(conn));
  }

  return {
    /**
     * Applies an edit to the pad's live document and commits it as a version. `base` is the version
     * the caller read (null for an undo, which guards on the blocks themselves). Plain values in and
     * out: the core never touches the document. `write` commits in the version's transaction.
     */
    async applyEdits(padId: string, author: Author, request: EditRequest, base: number | null, write: PlannedWrite<EditOutcome> | undefined): Promise<EditOutcome> {
      let undone: Undone | undefined;
      if ('undo' in request) {
        const before = (await blocksAt(db.pool, padId, request.undo.version - 1))?.blocks ?? [];
        const after = (await blocksAt(db.pool, padId, request.undo.version))?.blocks ?? [];
        undone = { before, after };
      } else if ('restore' in request) {
        const restored = await blocksAt(db.pool, padId, request.restore);
        if (!restored) throw new EditRefused('unknown_base');
        undone = { before: restored.blocks, after: [] };
      }
      return versions.exclusive(padId, async () => {
        // Typing not versioned yet becomes its own version first, attributed to its typist.
        await deps.typing.settle(padId);
        /** On what this instance knows of the pad, on what the database holds, or on that under the pad's row lock. */
        const once = async (on: 'known' | 'fresh' | 'locked') => {
          let change: LiveChange<unknown> | null = null;
          const went = (made: LiveChange<unknown>) => (change = made);
          try {
            // Loaded outside any transaction: what loading starts must not run inside one.
            const document = await live.document(padId);
            const { outcome, written } =
              on === 'locked'
                ? await db.writeOrBusy((tx) => attempt(document, padId, author, request, base, write, undone, tx, false, went))
                : await attempt(document, padId, author, request, base, write, undone, null, on === 'fresh', went);
            (change as LiveChange<unknown> | null)?.done();
            if (written) versions.advance(written);
            return outcome;
          } catch (error) {
            (change as LiveChange<unknown> | null)?.rollback();
            throw error;
          }
        };
        if (versions.isContended(padId)) return once('locked');
        // Another instance wrote the pad since this one knew it: read again, and write as before (with
        // others' edits, by one statement). Only if it wrote again even then, take the pad's row lock.
        for (const on of ['known', 'fresh'] as const) {
          try {
            return await once(on);
          } catch (error) {
            if (!(error instanceof StaleVersion)) throw error;
          }
        }
        versions.contend(padId);
        return once('locked');
      });
    },

    /**
     * A new pad's first version from Markdown: `prepare` writes the pad's own row in the transaction
     * that records version 1, and `write` commits after it in the same one; if either throws, the live
     * document is rolled back.
     */
    async createPad(
      padId: string,
      author: Author,
      text: string,
      prepare: (tx: DatabaseTransactionConnection) => Promise<void>,
      write: PlannedWrite<{ version: number; blocks: number }> | undefined,
    ): Promise<{ version: number; blocks: number }> {
      const nodes = parseBlocks(text);
      return versions.exclusive(padId, async () => {
        const document = await live.document(padId);
        const change = live.apply(document, author, (fragment) => insertBlocks(fragment, 0, nodes));
        try {
          const written = await db.writeOrBusy(async (tx) => {
            await prepare(tx);
            const ids = change.result;
            const made = (await versions.write(tx, padId, { version: 0, blocks: [], sinceCheckpoint: 0 }, {
              kind: 'create',
              author,
              live: readBlocks(document.getXmlFragment(PAD_FRAGMENT)),
              mine: new Set(ids),
              changed: ids,
              update: change.update,
            }))!;
            await write?.commit(tx, { version: made.state.version, blocks: made.state.blocks.length });
            return made;
          });
          change.done();
          versions.advance(written);
          return { version: written.state.version, blocks: written.state.blocks.length };
        } catch (error) {
          change.rollback();
          throw error;
        }
      });
    },
  };
}

export type EditEngine = ReturnType<typeof createEditEngine>;
