import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError, notFound } from '../../../schema/errors.ts';
import type { HubRow, PadRow } from '../../../schema/rows.ts';
import { findEdit } from '../../../sync/versions.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { PolicyScope } from '../kernel/policy.ts';
import type { Seat } from '../kernel/rights.ts';
import { readablePad } from '../pads/pads.ts';
import { sectionsChangedBy } from '../pads/sections.ts';
import { checkResult, loadTask, type Task } from '../tasks/tasks.ts';
import { readableThread } from '../threads/threadAccess.ts';
import { applySuggestion, markSections, recordCheck, turnDownSuggestion } from './acceptance.ts';
import { requireChecker } from './checkers.ts';
import { findSuggestion, type SuggestionRow } from './suggestions.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * verify (SPEC part 4): someone other than the author verifies or turns down a suggestion, a pad
 * edit, a task's result or a decision, with a note. In a Checked hub it is the record of who checked
 * what; elsewhere only suggestions (proposals) wait on anyone, and the rest counts on its author's say-so.
 */

export type VerifyInput = { id: string; verdict: 'verify' | 'turn_down'; note: string };

const DecisionRow = z.object({ id: z.string(), pad_id: z.string(), thread_id: z.string().nullable(), decided_by: z.string(), proposed: z.boolean() });

type Place = { hub: HubRow; seat: Seat };

/** What an id names, loaded once, with the hub it sits in and the caller's seat there. */
type Subject =
    | { kind: 'suggestion'; suggestion: SuggestionRow }
    | { kind: 'edit'; pad: Omit<PadRow, 'version'> | PadRow; edit: { id: string; version: number; author: string | null; changed: readonly string[] } }
    | { kind: 'result'; task: Task }
    | { kind: 'decision'; decision: z.infer<typeof DecisionRow> }
    /** Outside a Checked hub: nothing to check, your own done counts. */
    | { kind: 'none'; id: string };
export type VerifyTarget = Place & Subject;

const UNKNOWN = 'verify takes a suggestion (sug_…), a pad edit (edt_…), a task (tsk_…) or a decision (dec_…) id.';

async function placeOf(scope: PolicyScope, id: string): Promise<Subject & { place: () => Promise<Place> }> {
  const { core, conn, actor } = scope;
  const pad = (padId: string) => async () => readablePad(core, conn, padId, actor);
  if (id.startsWith('sug_')) {
    const suggestion = await findSuggestion(conn, id);
    if (!suggestion) throw notFound(`No suggestion ${id}: open_pad lists a pad's waiting suggestions.`);
    return { kind: 'suggestion', suggestion, place: pad(suggestion.pad_id) };
  }
  if (id.startsWith('edt_')) {
    const edit = await findEdit(conn, id);
    if (!edit) throw notFound(`No edit ${id}: ui_pad_history lists a pad's edits.`);
    const found = await readablePad(core, conn, edit.pad_id, actor);
    return { kind: 'edit', pad: found.pad, edit: { id, version: edit.version, author: edit.actor_id, changed: edit.changed }, place: async () => found };
  }
  if (id.startsWith('tsk_')) {
    const task = await loadTask(conn, id);
    if (!task) throw notFound('No such task, or it is private: list_tasks shows the tasks you can see.');
    return { kind: 'result', task, place: () => readableThread(core, conn, task.thread_id, actor) };
  }
  if (id.startsWith('dec_')) {
    const decision = await conn.maybeOne(sql.type(DecisionRow)`SELECT id, pad_id, thread_id, decided_by, proposed FROM decisions WHERE id = ${id}`);
    if (!decision) throw notFound(`No decision ${id}: open_thread lists a thread's decisions.`);
    return { kind: 'decision', decision, place: pad(decision.pad_id) };
  }
  throw notFound(UNKNOWN);
}

const authorOf = (target: VerifyTarget): string | null => {
  switch (target.kind) {
    case 'suggestion':
      return target.suggestion.author_id;
    case 'edit':
      return target.edit.author;
    case 'result':
      return target.task.assignee?.id ?? null;
    case 'decision':
      return target.decision.decided_by;
    case 'none':
      return null;
  }
};

/**
 * The policy of verify: the subject, readable to the caller (private and missing answer alike), and
 * the caller allowed to check it (checkers.ts). The author withdraws their own suggestion with
 * `turn_down`. Outside a Checked hub, anything but a suggestion answers `none`.
 */
export const verifyTarget = (input: VerifyInput) => async (scope: PolicyScope): Promise<VerifyTarget> => {
  const { place, ...subject } = await placeOf(scope, input.id);
  const { hub, seat } = await place();
  const target = { ...subject, hub, seat } as VerifyTarget;
  if (target.kind !== 'suggestion' && hub.mode !== 'checked') return { kind: 'none', id: input.id, hub, seat };
  if (target.kind === 'result' && target.task.assignee === null) throw new AppError('conflict', `${target.task.id} has no result handed in yet: submit_result comes first.`);
  const author = authorOf(target);
  if (target.kind === 'suggestion' && author === scope.actor.id && input.verdict === 'turn_down') return target;
  await requireChecker(scope.core, scope.conn, scope.actor, hub, seat, author);
  return target;
};

export type Verified = {
  id: string;
  subject: VerifyTarget['kind'];
  state: 'accepted' | 'turned_down' | 'withdrawn' | 'verified' | 'unchanged';
  hub: { slug: string; mode: HubRow['mode'] };
  check_id?: string;
  version?: number | null;
  edit_id?: string | null;
  sections?: string[];
  conflicts?: { block_id: string; reason: string }[];
  task?: { id: string; did: string };
};

/** Checks of edits, results and decisions: the record, and what it moves (a task in review, a proposed decision, the sections' marks). */
async function checkOther(tx: CommonQueryMethods, actor: Actor, target: VerifyTarget, verdict: 'verified' | 'turned_down', note: string): Promise<Verified> {
  const hub = { slug: target.hub.slug, mode: target.hub.mode };
  const verb = verdict === 'verified' ? 'verified' : 'turned down';
  switch (target.kind) {
    case 'edit': {
      const { pad, edit } = target;
      const sections = [...(await sectionsChangedBy(tx, pad.id, edit.version, edit.changed))];
      const check_id = await recordCheck(tx, actor, {
        hubId: target.hub.id,
        subject: { kind: 'edit', id: edit.id },
        authorId: edit.author,
        verdict,
        note,
        pad: { id: pad.id, version: edit.version, sections },
        threadId: pad.thread_id,
        summary: `${verb} your edit ${edit.id} to ${pad.title}: ${note}`,
      });
      if (verdict === 'verified') await markSections(tx, pad.id, sections, { kind: 'checked', by: actor.id, note, version: edit.version });
      return { id: edit.id, subject: 'edit', state: verdict, hub, check_id, version: edit.version, sections };
    }
    case 'result': {
      const { task } = target;
      const check_id = await recordCheck(tx, actor, {
        hubId: target.hub.id,
        subject: { kind: 'result', id: task.id },
        authorId: task.assignee?.id ?? null,
        verdict,
        note,
        threadId: task.thread_id,
        summary: `${verb} your result for ${task.title}: ${note}`,
      });
      const moved = await checkResult(tx, actor, task, verdict, note);
      return { id: task.id, subject: 'result', state: verdict, hub, check_id, task: { id: task.id, did: moved.did } };
    }
    case 'decision': {
      const { decision } = target;
      const check_id = await recordCheck(tx, actor, {
        hubId: target.hub.id,
        subject: { kind: 'decision', id: decision.id },
        authorId: decision.decided_by,
        verdict,
        note,
        threadId: decision.thread_id,
        summary: `${verb} your decision ${decision.id}: ${note}`,
      });
      if (verdict === 'verified') {
        await tx.query(sql.unsafe`UPDATE decisions SET proposed = false, checked_by = ${actor.id}, checked_at = now() WHERE id = ${decision.id}`);
        if (decision.thread_id) {
          await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${decision.thread_id}`);
          threadsMoved(tx, decision.thread_id);
        }
      }
      return { id: decision.id, subject: 'decision', state: verdict, hub, check_id };
    }
    default:
      throw new Error(`checkOther: ${target.kind}`);
  }
}

/**
 * verify's run: a suggestion accepted goes through the edit engine (applySuggestion commits `write`
 * in its version's transaction); everything else is written in one transaction here.
 */
export async function verifyWork(core: Core, actor: Actor, target: VerifyTarget, input: VerifyInput, write: PlannedWrite<Verified> | undefined): Promise<Verified> {
  const hub = { slug: target.hub.slug, mode: target.hub.mode };
  if (target.kind === 'none') {
    const out: Verified = { id: target.id, subject: 'none', state: 'unchanged', hub };
    if (write) await core.db.write((tx) => write.commit(tx, out));
    return out;
  }
  if (target.kind === 'suggestion' && input.verdict === 'verify') {
    const decided = await applySuggestion(core, actor, target.suggestion.id, { state: 'accepted', note: input.note }, write && {
      commit: (tx, d) => write.commit(tx, acceptedOf(d, hub)),
    });
    return acceptedOf(decided, hub);
  }
  return core.db.write(async (tx) => {
    let out: Verified;
    if (target.kind === 'suggestion') {
      const decided = await turnDownSuggestion(tx, actor, target.suggestion.id, input.note);
      out = { id: decided.suggestion_id, subject: 'suggestion', state: decided.state as 'turned_down' | 'withdrawn', hub, sections: decided.sections };
    } else out = await checkOther(tx, actor, target, input.verdict === 'verify' ? 'verified' : 'turned_down', input.note);
    await write?.commit(tx, out);
    return out;
  });
}

const acceptedOf = (d: Awaited<ReturnType<typeof applySuggestion>>, hub: Verified['hub']): Verified => ({
  id: d.suggestion_id,
  subject: 'suggestion',
  state: 'accepted',
  hub,
  version: d.version,
  edit_id: d.edit_id,
  sections: d.sections,
  conflicts: d.conflicts,
});
