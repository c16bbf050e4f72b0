import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { AppError, notFound } from '../../../schema/errors.ts';
import { EditRefused, type EditOutcome } from '../../../sync/padSync.ts';
import { changedByOthersSince, type Author } from '../../../sync/versions.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import type { Actor } from '../kernel/actor.ts';
import { callerOf } from '../kernel/caller.ts';
import type { Core } from '../kernel/context.ts';
import { newId } from '../kernel/secrets.ts';
import { deliver } from '../inbox/inbox.ts';
import { findSuggestion, type SuggestionRow } from './suggestions.ts';
import { settleFixedFlags } from '../threads/flags.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * Accepting, merging and turning down suggestions: the functions the verify tool, the web app's
 * review page and the rulebook's 24-hour merge call. Who may is decided by their callers.
 */

export type SuggestionDecision = {
  suggestion_id: string;
  pad_id: string;
  state: 'accepted' | 'merged_unchecked' | 'turned_down' | 'withdrawn';
  /** The version acceptance committed (null for a turn-down or a withdrawal). */
  version: number | null;
  edit_id: string | null;
  sections: string[];
  /** Blocks the suggestion changes that someone else changed since its base: left as they are. */
  conflicts: { block_id: string; reason: string }[];
  decision_id: string | null;
  author_id: string;
  /** Threads whose flag on a section it changed this acceptance settled, as an accepted fix. */
  settled: string[];
};

const SeatRow = z.object({ role: z.enum(['owner', 'helper', 'member']) });
const PadOfRow = z.object({ thread_id: z.string().nullable(), title: z.string(), kind: z.enum(['human', 'agent']) });

/** The suggestion, still waiting, or a refusal saying what became of it. */
async function waiting(conn: CommonQueryMethods, id: string, lock = false): Promise<SuggestionRow> {
  const row = await findSuggestion(conn, id, lock);
  if (!row) throw notFound(`No suggestion ${id}: open_pad lists a pad's waiting suggestions.`);
  if (row.state !== 'waiting') throw new AppError('conflict', `Suggestion ${id} is no longer waiting: it was ${row.state.replace('_', ' ')}.`, { state: row.state });
  return row;
}

/** The human a participant counts as in an edit war's parties: an agent's linked human, else itself. */
const humanOf = (actor: Actor) => actor.human ?? actor.id;

/** Records one check of a subject, and tells its author (SPEC part 1: "someone else checks them, with a record"). */
export async function recordCheck(
  tx: CommonQueryMethods,
  actor: Actor,
  check: {
    hubId: string;
    subject: { kind: 'edit' | 'suggestion' | 'result' | 'decision'; id: string };
    authorId: string | null;
    verdict: 'verified' | 'turned_down';
    note: string;
    pad?: { id: string; version: number | null; sections: readonly string[] } | undefined;
    threadId?: string | null | undefined;
    summary: string;
  },
): Promise<string> {
  const id = newId('chk_');
  await tx.query(sql.unsafe`
    INSERT INTO checks (id, hub_id, subject_kind, subject_id, author_id, checker_id, caller, verdict, note, pad_id, version, sections)
    VALUES (${id}, ${check.hubId}, ${check.subject.kind}, ${check.subject.id}, ${check.authorId}, ${actor.id}, ${callerOf(actor)}, ${check.verdict},
            ${check.note}, ${check.pad?.id ?? null}, ${check.pad?.version ?? null}, ${sql.array([...(check.pad?.sections ?? [])], 'text')})`);
  if (check.authorId) {
    await deliver(tx, [
      { to: check.authorId, kind: 'checked', from: actor.id, hub_id: check.hubId, ...(check.threadId ? { thread_id: check.threadId } : {}), summary: check.summary },
    ]);
  }
  return id;
}

/**
 * The marks a check leaves on the sections it covers (SPEC part 2 "Section marks"): `checked` by the
 * checker at the version, or `unchecked` for a merge by the 24-hour rule, each replacing the other.
 */
export async function markSections(
  tx: CommonQueryMethods,
  padId: string,
  sections: readonly string[],
  mark: { kind: 'checked' | 'unchecked'; by: string | null; note: string | null; version: number },
): Promise<void> {
  if (!sections.length) return;
  const other = mark.kind === 'checked' ? 'unchecked' : 'checked';
  await tx.query(sql.unsafe`
    DELETE FROM section_marks WHERE pad_id = ${padId} AND kind = ${other} AND section_id = ANY(${sql.array([...sections], 'text')})`);
  await tx.query(sql.unsafe`
    INSERT INTO section_marks (pad_id, section_id, kind, by_id, note, version)
    SELECT ${padId}, s, ${mark.kind}, ${mark.by}, ${mark.note}, ${mark.version} FROM unnest(${sql.array([...sections], 'text')}::text[]) AS s
    ON CONFLICT (pad_id, section_id, kind) DO UPDATE SET by_id = EXCLUDED.by_id, note = EXCLUDED.note, version = EXCLUDED.version, created_at = now()`);
}

/** An edit war on these sections ends when someone outside its parties accepts a version (SPEC part 3 "Edit war"). */
async function endEditWars(tx: CommonQueryMethods, padId: string, sections: readonly string[], actor: Actor): Promise<void> {
  await tx.query(sql.unsafe`
    DELETE FROM section_marks WHERE pad_id = ${padId} AND kind = 'edit_war' AND section_id = ANY(${sql.array([...sections], 'text')})
      AND NOT (${humanOf(actor)} = ANY(parties))`);
}

/** The decision a suggestion carried, recorded with the version that took it in: counted when checked, proposed when merged unchecked. */
async function recordSuggestedDecision(tx: CommonQueryMethods, s: SuggestionRow, threadId: string | null, outcome: EditOutcome, checker: Actor | null): Promise<string | null> {
  if (s.decision === null) return null;
  const id = newId('dec_');
  await tx.query(sql.unsafe`
    INSERT INTO decisions (id, pad_id, thread_id, hub_id, text, decided_by, pad_version, edit_id, proposed, checked_by, checked_at)
    VALUES (${id}, ${s.pad_id}, ${threadId}, ${s.hub_id}, ${s.decision}, ${s.author_id}, ${outcome.version!}, ${outcome.editId}, ${checker === null},
            ${checker?.id ?? null}, ${checker ? sql.fragment`now()` : null})`);
  if (threadId !== null) {
    await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${threadId}`);
    threadsMoved(tx, threadId);
  }
  return id;
}

/**
 * Takes a waiting suggestion into the pad: its whole text as an edit against its base version, through
 * the edit engine, attributed to its author (the checker is recorded in `checks`). Blocks someone else
 * changed since the base are refused as a `conflict` before anything changes. In the version's own
 * transaction: the suggestion's state and accepted version, the check and the sections' marks
 * (`checked`, or `unchecked` for `merged_unchecked`, where `actor` is null: the rulebook), the end
 * of an edit war when the checker is outside it, the decision it carried, and `write`.
 */
export async function applySuggestion(
  core: Core,
  actor: Actor | null,
  suggestionId: string,
  how: { state: 'accepted' | 'merged_unchecked'; note: string | null },
  write?: PlannedWrite<SuggestionDecision>,
): Promise<SuggestionDecision> {
  const s = await waiting(core.db.pool, suggestionId);
  const others = await changedByOthersSince(core.db.pool, s.pad_id, s.base_version, s.author_id);
  const clashing = s.changed.filter((id) => others.has(id));
  if (clashing.length) {
    throw new AppError(
      'conflict',
      `Since version ${s.base_version}, others changed ${clashing.length === 1 ? 'block' : 'blocks'} ${clashing.join(', ')} that suggestion ${s.id} changes; nothing was applied. Turn it down with a note asking for a new suggestion on the current version, or edit the pad yourself.`,
      { conflicts: clashing.map((block_id) => ({ block_id, reason: 'changed_since_base' })) },
    );
  }
  const pad = await core.db.pool.one(sql.type(PadOfRow)`
    SELECT p.thread_id, p.title, a.kind FROM pads p, participants a WHERE p.id = ${s.pad_id} AND a.id = ${s.author_id}`);
  const author: Author = { id: s.author_id, kind: pad.kind, caller: s.caller ?? undefined };
  let decided: SuggestionDecision | null = null;
  let settled: string[] = [];
  const record = async (tx: DatabaseTransactionConnection, outcome: EditOutcome) => {
    const version = outcome.version ?? outcome.current;
    const updated = await tx.query(sql.unsafe`
      UPDATE suggestions SET state = ${how.state}, note = ${how.note}, decided_by = ${actor?.id ?? null}, decided_caller = ${actor ? callerOf(actor) : null},
        decided_at = now(), accepted_version = ${version}
      WHERE id = ${s.id} AND state = 'waiting'`);
    if (updated.rowCount !== 1) throw new AppError('conflict', `Suggestion ${s.id} was decided by someone else just now.`);
    if (actor) {
      await recordCheck(tx, actor, {
        hubId: s.hub_id,
        subject: { kind: 'suggestion', id: s.id },
        authorId: s.author_id,
        verdict: 'verified',
        note: how.note ?? '',
        pad: { id: s.pad_id, version, sections: s.sections },
        threadId: pad.thread_id,
        summary: `accepted your suggestion ${s.id} to ${pad.title} (version ${version})${how.note ? `: ${how.note}` : ''}`,
      });
      await endEditWars(tx, s.pad_id, s.sections, actor);
      // An accepted fix settles the flags on the sections it changed, where the checker may settle them.
      if (how.state === 'accepted' && outcome.version !== null) {
        const seat = await tx.maybeOneFirst(sql.type(SeatRow)`SELECT role FROM hub_members WHERE hub_id = ${s.hub_id} AND participant_id = ${actor.id}`);
        settled = await settleFixedFlags(tx, actor, { pad: { id: s.pad_id }, seat }, outcome);
      }
    }
    await markSections(tx, s.pad_id, s.sections, { kind: how.state === 'accepted' ? 'checked' : 'unchecked', by: actor?.id ?? null, note: how.note, version });
    const decisionId = outcome.version === null ? null : await recordSuggestedDecision(tx, s, pad.thread_id, outcome, how.state === 'accepted' ? actor : null);
    decided = {
      suggestion_id: s.id,
      pad_id: s.pad_id,
      state: how.state,
      version: outcome.version,
      edit_id: outcome.editId,
      sections: s.sections,
      conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
      decision_id: decisionId,
      author_id: s.author_id,
      settled,
    };
    await write?.commit(tx, decided);
  };
  let outcome: EditOutcome;
  try {
    outcome = await core.sync.applyEdits(s.pad_id, author, { text: s.text }, s.base_version, { commit: record });
  } catch (error) {
    if (error instanceof EditRefused) throw new AppError(error.code === 'too_large' ? 'too_large' : 'conflict', `Suggestion ${s.id} cannot be applied to the pad as it is now (${error.code}); nothing changed.`);
    throw error;
  }
  if (decided) return decided;
  // Nothing changed: every block it changes already reads so, or someone's edit got there first.
  if (outcome.conflicts.length) {
    throw new AppError('conflict', `Suggestion ${s.id} clashes with changes made since version ${s.base_version}; nothing was applied.`, {
      conflicts: outcome.conflicts.map((c) => ({ block_id: c.block_id, reason: c.reason })),
    });
  }
  await core.db.write((tx) => record(tx, outcome));
  return decided!;
}

/**
 * Turns a waiting suggestion down with a note (`turned_down`, by a checker, recorded as a check), or
 * its author withdraws it (`withdrawn`): in the caller's transaction; nothing reaches the pad.
 */
export async function turnDownSuggestion(tx: CommonQueryMethods, actor: Actor, suggestionId: string, note: string): Promise<SuggestionDecision> {
  const s = await waiting(tx, suggestionId, true);
  const own = s.author_id === actor.id;
  const state = own ? 'withdrawn' : 'turned_down';
  await tx.query(sql.unsafe`
    UPDATE suggestions SET state = ${state}, note = ${note}, decided_by = ${actor.id}, decided_caller = ${callerOf(actor)}, decided_at = now()
    WHERE id = ${s.id}`);
  if (!own) {
    const pad = await tx.one(sql.type(PadOfRow)`SELECT p.thread_id, p.title, a.kind FROM pads p, participants a WHERE p.id = ${s.pad_id} AND a.id = ${s.author_id}`);
    await recordCheck(tx, actor, {
      hubId: s.hub_id,
      subject: { kind: 'suggestion', id: s.id },
      authorId: s.author_id,
      verdict: 'turned_down',
      note,
      pad: { id: s.pad_id, version: null, sections: s.sections },
      threadId: pad.thread_id,
      summary: `turned down your suggestion ${s.id} to ${pad.title}: ${note}`,
    });
  }
  return { suggestion_id: s.id, pad_id: s.pad_id, state, version: null, edit_id: null, sections: s.sections, conflicts: [], decision_id: null, author_id: s.author_id, settled: [] };
}

/** The author's own withdrawal: turnDownSuggestion on one's own suggestion. */
export const withdrawSuggestion = (tx: CommonQueryMethods, actor: Actor, suggestionId: string, note: string) => turnDownSuggestion(tx, actor, suggestionId, note);
