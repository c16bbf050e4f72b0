import type { DatabaseTransactionConnection } from 'slonik';
import { PAD_MAX_CHARS } from '../../schema/pad.ts';
import type { Conflict } from '../../sync/blockOps.ts';
import { EditRefused, MAX_OPS, type EditOutcome, type EditRequest } from '../../sync/padSync.ts';
import { findEdit } from '../../sync/versions.ts';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, forbidden, invalid, notFound } from './errors.ts';
import { fenced, line, type Result, type TextPart } from './result.ts';
import { allows } from './rights.ts';
import { idempotencyKey } from './idempotency.ts';
import { authorOf, editablePad } from './pads.ts';

export { editablePad } from './pads.ts';

/**
 * Called once, inside the database transaction that records the new version, with the Result the
 * call will answer; never when nothing changed. Throwing rolls the version back, takes the change
 * back out of the live document, and the error reaches the caller unchanged.
 */
export type Seal = (tx: DatabaseTransactionConnection, result: Result) => Promise<void>;

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

/** The edit engine's refusals as our errors. */
function refusal(error: EditRefused, baseVersion: number | null): AppError {
  switch (error.code) {
    case 'base_ahead':
      return invalid(`base_version ${baseVersion} is newer than the pad (version ${error.detail.current}).`, { issues: [{ path: 'base_version', message: 'Newer than the pad.' }] });
    case 'unknown_base':
      return invalid(`This pad has no version ${baseVersion}.`, { issues: [{ path: 'base_version', message: 'Unknown version.' }] });
    case 'too_large':
      return new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters; this edit would make it longer.`);
    case 'too_many_ops':
      return new AppError('too_large', `This edit changes ${error.detail.ops} blocks; at most ${MAX_OPS} change in one call. Edit in parts.`);
  }
}

/** The engine's call with our ids and errors. */
async function applyEdits(core: Core, actor: Actor, padId: string, request: EditRequest, base: number | null, seal?: (tx: DatabaseTransactionConnection, outcome: EditOutcome) => Promise<void>) {
  try {
    return await core.sync.applyEdits(padId, authorOf(actor), request, base, { seal });
  } catch (error) {
    throw error instanceof EditRefused ? refusal(error, base) : error;
  }
}

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
  const request: EditRequest = whole
    ? { text: input.text! }
    : {
        edits: (input.edits ?? []).map((e) => ({ blockId: e.block_id, text: e.text })),
        inserts: (input.inserts ?? []).map((e) => ({ after: e.after, text: e.text })),
      };
  const result = (outcome: EditOutcome) => editResult(pad.id, outcome);
  const store = seal ?? key?.store;
  try {
    return result(await applyEdits(core, actor, pad.id, request, input.base_version, store && ((tx, outcome) => store(tx, result(outcome)))));
  } catch (error) {
    if (!key) throw error;
    return key.winner(error);
  }
}

/** What edit_pad answers: the new version and edit id, or that nothing changed, and the conflicts. */
function editResult(padId: string, outcome: EditOutcome): Result {
  return {
    parts: [
      line(
        outcome.version === null
          ? `Nothing changed in ${padId}; it stays at version ${outcome.current}.`
          : `Edited ${padId}: version ${outcome.version}, edit ${outcome.editId}, ${outcome.changed.length} blocks changed. Undo it with undo_edit "${outcome.editId}".`,
      ),
      ...describeConflicts(outcome.conflicts),
    ],
    data: {
      pad_id: padId,
      version: outcome.current,
      ...(outcome.editId ? { edit_id: outcome.editId } : {}),
      changed: outcome.changed,
      conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
    },
  };
}

/**
 * Takes one edit back as a new version, through the same engine: blocks nobody changed since get
 * their text from before the edit; the others are reported as conflicts. Members undo their own
 * edits, owners and helpers anyone's.
 */
export async function undoEdit(core: Core, actor: Actor, input: { edit_id: string }, seal?: Seal): Promise<Result> {
  const edit = await findEdit(core.db.pool, input.edit_id);
  if (!edit) throw notFound('No such edit.');
  const { pad, seat } = await editablePad(core, edit.pad_id, actor);
  if (edit.actor_id !== actor.id && !allows(seat, 'moderate')) {
    throw forbidden('Members undo their own edits; owners and helpers undo anyone’s.', { yourCapabilities: ['edit_pad'] });
  }
  const answer = (outcome: EditOutcome): Result => ({
    parts: [
      line(outcome.version === null ? `Nothing of ${input.edit_id} could be undone.` : `Undid ${input.edit_id} in ${pad.id}: version ${outcome.version}.`),
      ...describeConflicts(outcome.conflicts),
    ],
    data: {
      pad_id: pad.id,
      version: outcome.current,
      ...(outcome.editId ? { edit_id: outcome.editId } : {}),
      undone: input.edit_id,
      changed: outcome.changed,
      conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
    },
  });
  const request: EditRequest = { undo: { version: edit.version, changed: edit.changed } };
  return answer(await applyEdits(core, actor, pad.id, request, null, seal && ((tx, outcome) => seal(tx, answer(outcome)))));
}
