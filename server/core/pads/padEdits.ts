import { PAD_MAX_CHARS } from '../../../schema/pad.ts';
import { EditRefused, MAX_OPS, type EditOutcome, type EditRequest } from '../../../sync/padSync.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, invalid } from '../../../schema/errors.ts';
import type { EditablePad } from '../kernel/editors.ts';
import { answering, type PlannedWrite } from '../../db/plannedWrite.ts';
import { refusePossibleSecrets, type TextField } from '../limits/possibleSecrets.ts';
import { authorOf } from './pads.ts';
import { wholeText } from './sections.ts';

export type EditPadInput = {
  pad_id: string;
  base_version: number;
  idempotency_key?: string | undefined;
  text?: string | undefined;
  edits?: { block_id: string; text: string }[] | undefined;
  inserts?: { after: string; text: string }[] | undefined;
  confirm_sensitive?: boolean | undefined;
};

/** The edit engine's refusals as our errors. */
function refusal(error: EditRefused, baseVersion: number | null, field: string): AppError {
  switch (error.code) {
    case 'base_ahead':
      return invalid(`${field} ${baseVersion} is newer than the pad (version ${error.detail.current}).`, { issues: [{ path: field, message: 'Newer than the pad.' }] });
    case 'unknown_base':
      return invalid(`This pad has no version ${baseVersion}; its history (ui_pad_history) lists those it has.`, { issues: [{ path: field, message: 'Unknown version.' }] });
    case 'too_large':
      return new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters; this edit would make it longer.`);
    case 'too_many_ops':
      return new AppError('too_large', `This edit changes ${error.detail.ops} blocks; at most ${MAX_OPS} change in one call. Edit in parts.`);
  }
}

/** The engine's call with our ids and errors (`field`: the argument that named the version). */
async function applyEdits(core: Core, actor: Actor, padId: string, request: EditRequest, base: number | null, write: PlannedWrite<EditOutcome> | undefined, field = 'base_version') {
  try {
    return await core.sync.applyEdits(padId, authorOf(actor), request, base, write);
  } catch (error) {
    throw error instanceof EditRefused ? refusal(error, base, field) : error;
  }
}

export type PadEdit = { pad_id: string; outcome: EditOutcome };

/**
 * Possible secrets in the text an edit sends (SPEC part 4 `confirm_sensitive`): only new or changed
 * text counts, so a secret the pad already holds (sent back with the whole text, say) is not refused again.
 */
export async function refuseNewSecrets(core: Core, padId: string, input: EditPadInput) {
  const fields: TextField[] =
    input.text !== undefined
      ? [{ path: 'text', text: input.text }]
      : [
          ...(input.edits ?? []).map((e, i) => ({ path: `edits.${i}.text`, text: e.text })),
          ...(input.inserts ?? []).map((e, i) => ({ path: `inserts.${i}.text`, text: e.text })),
        ];
  await refusePossibleSecrets(fields, async () => wholeText(await core.sync.read(padId)));
}

/** An edit_pad call sends the whole text, or edits and inserts: exactly one kind. True for the whole text. */
export function requireOneKind(input: Pick<EditPadInput, 'text' | 'edits' | 'inserts'>): boolean {
  const whole = input.text !== undefined;
  if (whole && (input.edits?.length || input.inserts?.length)) {
    throw invalid('Send either text (the whole new pad) or edits and inserts, not both.', { issues: [{ path: 'text', message: 'Not with edits or inserts.' }] });
  }
  if (!whole && !input.edits?.length && !input.inserts?.length) {
    throw invalid('Send text (the whole new pad), or edits and inserts.', { issues: [{ path: 'edits', message: 'Nothing to change.' }] });
  }
  return whole;
}

/**
 * edit_pad, on a pad the policy found the caller may edit. `write` commits in the version's
 * transaction, never when nothing changed; its throw rolls the version back, takes the change back
 * out of the live document, and reaches the caller unchanged.
 */
export async function editPad(core: Core, actor: Actor, { pad }: EditablePad, input: EditPadInput, write: PlannedWrite<PadEdit> | undefined): Promise<PadEdit> {
  const whole = requireOneKind(input);
  if (whole && input.text!.length > PAD_MAX_CHARS) throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters.`);
  if (!input.confirm_sensitive) await refuseNewSecrets(core, pad.id, input);
  const request: EditRequest = whole
    ? { text: input.text! }
    : {
        edits: (input.edits ?? []).map((e) => ({ blockId: e.block_id, text: e.text })),
        inserts: (input.inserts ?? []).map((e) => ({ after: e.after, text: e.text })),
      };
  const made = (outcome: EditOutcome): PadEdit => ({ pad_id: pad.id, outcome });
  return made(await applyEdits(core, actor, pad.id, request, input.base_version, answering(write, made)));
}

export type PadUndo = PadEdit & { undone: string };
export type UndoTarget = EditablePad & { edit: { id: string; version: number; changed: readonly string[] } };

/**
 * Takes one edit back as a new version, through the same engine: blocks nobody changed since get
 * their text from before the edit; the others are reported as conflicts. Who may is the policy's.
 */
export async function undoEdit(core: Core, actor: Actor, { pad, edit }: UndoTarget, write: PlannedWrite<PadUndo> | undefined): Promise<PadUndo> {
  const made = (outcome: EditOutcome): PadUndo => ({ pad_id: pad.id, undone: edit.id, outcome });
  const request: EditRequest = { undo: { version: edit.version, changed: [...edit.changed] } };
  return made(await applyEdits(core, actor, pad.id, request, null, answering(write, made)));
}

export type PadRestore = PadEdit & { restored: number };

/**
 * The pad's blocks as they were at `version`, written as a new version on top by whoever restores
 * (undoable like any edit), through the same engine: blocks unchanged since are untouched, a block
 * being typed in right now is left as it is and reported as a conflict. Who may is edit_pad's policy.
 */
export async function restoreVersion(core: Core, actor: Actor, { pad }: EditablePad, version: number, write: PlannedWrite<PadRestore> | undefined): Promise<PadRestore> {
  const made = (outcome: EditOutcome): PadRestore => ({ pad_id: pad.id, restored: version, outcome });
  return made(await applyEdits(core, actor, pad.id, { restore: version }, version, answering(write, made), 'version'));
}
