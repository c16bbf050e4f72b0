import type { CommonQueryMethods } from 'slonik';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { EditablePad } from '../kernel/editors.ts';
import { requireWriter } from '../kernel/rights.ts';
import type { EditPadInput } from '../pads/padEdits.ts';
import { keptEditable, mayEditPad, readableAccess, readPadAccess } from '../pads/pads.ts';
import { editPadDeciding, type DecidedEdit } from '../threads/decisions.ts';
import { changeOf, suggestEdit, type SuggestReason, type Suggested } from './suggestions.ts';
import { requireUnlocked } from '../kernel/locks.ts';

/**
 * edit_pad's target: the pad, and whether the call is kept as a suggestion before anything else is
 * looked at: `proposal` (it asked, `propose: true`), `checked` (a member of a Checked hub). Null: an
 * edit, unless a section it touches is under an edit war (decided when it runs).
 */
export type PadChangeTarget = EditablePad & { suggest: Exclude<SuggestReason, 'edit_war'> | null };

/**
 * A pad the caller may change: edit directly, or suggest to (anyone with a seat who may write). A
 * direct editor's grant is remembered in the editor cache as editablePad does, so a warm edit reads nothing.
 */
export async function changeablePad(core: Core, conn: CommonQueryMethods, padId: string, actor: Actor, propose: boolean): Promise<PadChangeTarget> {
  const granted = propose ? null : keptEditable(core, padId, actor);
  if (granted) return { ...granted, suggest: null };
  // Read now and kept with the grant, so a warm edit reads nothing more (a new war counts within the grant's few seconds).
  const { pad, hub, seat, war } = readableAccess(core, actor, await readPadAccess(core, conn, padId, actor));
  requireWriter(seat, hub);
  // A locked pad takes neither edits nor suggestions (`moderate` lock).
  requireUnlocked('pad', { ...pad, maker: pad.created_by }, hub);
  const target = { pad, hub, seat };
  if (propose) return { ...target, suggest: 'proposal' };
  if (!mayEditPad(seat, hub)) return { ...target, suggest: 'checked' };
  return { ...target, war, suggest: null };
}

export type PadChange = DecidedEdit | Suggested;

/**
 * edit_pad: a suggestion where the target says so or the call touches a section under an edit war
 * (every edit there is one, whoever makes it, until someone outside the war accepts a version);
 * otherwise the edit, live at once, with its decision.
 */
export async function changePad(
  core: Core,
  actor: Actor,
  target: PadChangeTarget,
  input: EditPadInput & { decision?: string | undefined },
  write: PlannedWrite<PadChange> | undefined,
): Promise<PadChange> {
  if (target.suggest) return suggestEdit(core, actor, target, input, target.suggest, write);
  const war = target.war ?? [];
  if (war.length && (await changeOf(core, target.pad.id, input)).sections.some((s) => war.includes(s))) {
    return suggestEdit(core, actor, target, input, 'edit_war', write);
  }
  return editPadDeciding(core, actor, target, input, write);
}
