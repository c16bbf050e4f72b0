import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { forbidden, notFound } from '../../../schema/errors.ts';
import { LINKED_HOURS } from '../../../schema/tools/moderation.ts';
import { IdRow, Role } from '../../../schema/rows.ts';
import { editIdOf, findEdit } from '../../../sync/versions.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import type { HubTarget, Policy } from '../kernel/policy.ts';
import { newId } from '../kernel/secrets.ts';
import { participantIdOf } from '../identity/handles.ts';
import { linkedGroup } from '../identity/linkedGroup.ts';
import { authorOf } from '../pads/pads.ts';
import { HELD } from '../tasks/tasks.ts';
import { hubWith } from './policies.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * `undo_everything` (SPEC part 4 "Hubs"): the hub's owner and helpers undo what one participant did
 * in the hub, and can take that back. What it covers (docs/choices.md):
 * - posts: every post of theirs that shows is hidden (as `moderate` hide); with `include_linked`,
 *   also every post of the last 72 hours by the human behind them and that human's agents;
 * - pad edits: each version they made (edits, typing, undos, restores; not a pad's first text) is
 *   undone through the edit engine as a new version, newest first; blocks changed by others since
 *   stay as they are and are reported as conflicts;
 * - suggestions: their waiting ones are withdrawn;
 * - task claims: a task they hold (taken, in progress, blocked) opens again for anyone.
 * Each undo is a run (`undo_runs`) listing what it changed, so `take_back` restores exactly that:
 * posts unhidden, suggestions waiting again, claims given back (each only if nothing moved it since),
 * and each undo version undone in turn. The database part is one transaction; each pad's versions go
 * through the engine after it, recorded pad by pad.
 */
export type UndoTarget = HubTarget & { person: { id: string; name: string } };

const PersonRow = z.object({ id: z.string(), name: z.string(), role: Role.nullable() });

/** The owner and helpers, on anyone but the owner; only the owner on a helper. */
export const undoTarget = (input: { hub: string; id: string }): Policy<UndoTarget> => async (scope) => {
  const target = await hubWith(input.hub, 'moderate', 'Only the owner and helpers of this hub undo what someone did in it; report a post to reach them.')(scope);
  const person = await scope.conn.maybeOne(sql.type(PersonRow)`
    SELECT p.id, p.name, m.role FROM participants p LEFT JOIN hub_members m ON m.hub_id = ${target.hub.id} AND m.participant_id = p.id
    WHERE p.id = ${participantIdOf(input.id)}`);
  if (!person) throw notFound('Nobody goes by that id or handle. open_hub lists the members with their ids.');
  if (person.role === 'owner') throw forbidden("Nobody undoes the owner's work in their hub.");
  if (person.role === 'helper' && target.seat !== 'owner') throw forbidden("Only the owner undoes a helper's work.");
  return { ...target, person: { id: person.id, name: person.name } };
};

export type UndoCounts = { posts: number; edits: number; suggestions: number; claims: number };
export type UndoOutcome = UndoCounts & {
  hub: HubTarget['hub'];
  person: UndoTarget['person'];
  /** Null when there was nothing to undo: no run is recorded, and take_back reaches the run before. */
  runId: string | null;
  takenBack: boolean;
  linked: readonly string[] | null;
  conflicts: { pad_id: string; block_id: string }[];
};

const PostRow = z.object({ id: z.string(), thread_id: z.string() });
const EditRow = z.object({ pad_id: z.string(), version: z.number() });
const ClaimRow = z.object({ id: z.string(), thread_id: z.string(), state: z.string(), assignee_id: z.string() });

/** The posts an undo would hide: theirs that show, and with `linked` the group's of the last 72 hours. */
const postsToHide = (hubId: string, id: string, linked: readonly string[] | null) => sql.fragment`
  SELECT o.id, o.thread_id FROM posts o JOIN threads t ON t.id = o.thread_id
  WHERE t.hub_id = ${hubId} AND o.hidden_at IS NULL AND o.deleted_at IS NULL
    AND (o.author_id = ${id}${linked ? sql.fragment` OR (o.author_id = ANY(${sql.array([...linked], 'text')}) AND o.created_at > now() - make_interval(hours => ${LINKED_HOURS}))` : sql.fragment``})`;

/** Their versions in the hub's pads not undone by a run still standing, newest first. */
const editsToUndo = (hubId: string, id: string) => sql.fragment`
  SELECT v.pad_id, v.version FROM pad_versions v JOIN pads p ON p.id = v.pad_id
  WHERE p.hub_id = ${hubId} AND p.deleted_at IS NULL AND v.actor_id = ${id} AND v.kind <> 'create'
    AND NOT EXISTS (SELECT 1 FROM undo_run_items i JOIN undo_runs r ON r.id = i.run_id
      WHERE r.taken_back_at IS NULL AND i.kind = 'edit' AND i.ref = v.pad_id || ':' || v.version)
  ORDER BY v.pad_id, v.version DESC`;

const waitingSuggestions = (hubId: string, id: string) => sql.fragment`SELECT id FROM suggestions WHERE hub_id = ${hubId} AND author_id = ${id} AND state = 'waiting'`;

const heldClaims = (hubId: string, id: string) => sql.fragment`
  SELECT id, thread_id, state, assignee_id FROM tasks WHERE hub_id = ${hubId} AND assignee_id = ${id} AND state = ANY(${sql.array([...HELD], 'text')})`;

const CountsRow = z.object({ posts: z.number(), edits: z.number(), suggestions: z.number(), claims: z.number() });

/** What an undo would cover now: the web app's count before it asks to confirm. */
export async function undoCounts(conn: CommonQueryMethods, { hub, person }: UndoTarget, includeLinked: boolean): Promise<UndoCounts> {
  const linked = includeLinked ? await linkedGroup(conn, person.id) : null;
  return conn.one(sql.type(CountsRow)`
    SELECT (SELECT count(*) FROM (${postsToHide(hub.id, person.id, linked)}) a) AS posts,
           (SELECT count(*) FROM (${editsToUndo(hub.id, person.id)}) b) AS edits,
           (SELECT count(*) FROM (${waitingSuggestions(hub.id, person.id)}) c) AS suggestions,
           (SELECT count(*) FROM (${heldClaims(hub.id, person.id)}) d) AS claims`);
}

const RunRow = z.object({ id: z.string(), created_at: z.number() });

/** The last run on this person in this hub that was not taken back. */
export function standingRun(conn: CommonQueryMethods, hubId: string, id: string) {
  return conn.maybeOne(sql.type(RunRow)`
    SELECT id, floor(extract(epoch FROM created_at) * 1000) AS created_at FROM undo_runs
    WHERE hub_id = ${hubId} AND target_id = ${id} AND taken_back_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1`);
}

function bumpThreads(tx: CommonQueryMethods, ids: readonly string[]) {
  if (!ids.length) return null;
  threadsMoved(tx, ...new Set(ids));
  return tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ANY(${sql.array([...new Set(ids)], 'text')})`);
}

const record = (tx: CommonQueryMethods, runId: string, kind: string, rows: readonly { ref: string; detail: object }[]) =>
  rows.length
    ? tx.query(sql.unsafe`
        INSERT INTO undo_run_items (run_id, kind, ref, detail)
        SELECT ${runId}, ${kind}, r, d::jsonb FROM unnest(${sql.array(rows.map((r) => r.ref), 'text')}::text[], ${sql.array(rows.map((r) => JSON.stringify(r.detail)), 'text')}::text[]) AS x(r, d)`)
    : null;

/**
 * Undoes one participant's work in the hub (see above). The pad versions run after the transaction,
 * one engine call each, and each is recorded as it lands, so a failure part-way leaves a run that
 * `take_back` still restores in full.
 */
export async function undoEverything(core: Core, actor: Actor, target: UndoTarget, includeLinked: boolean, write: PlannedWrite<UndoOutcome> | undefined): Promise<UndoOutcome> {
  const { hub, person } = target;
  const runId = newId('und_');
  const done = await core.db.write(async (tx) => {
    const linked = includeLinked ? await linkedGroup(tx, person.id) : null;
    const counts = await undoCounts(tx, target, includeLinked);
    if (!counts.posts && !counts.edits && !counts.suggestions && !counts.claims) return null;
    await tx.query(sql.unsafe`INSERT INTO undo_runs (id, hub_id, target_id, include_linked, by_id) VALUES (${runId}, ${hub.id}, ${person.id}, ${includeLinked}, ${actor.id})`);
    const posts = await tx.any(sql.type(PostRow)`
      UPDATE posts SET hidden_at = now(), hidden_by = ${actor.id} WHERE id IN (SELECT id FROM (${postsToHide(hub.id, person.id, linked)}) h)
      RETURNING id, thread_id`);
    await bumpThreads(tx, posts.map((p) => p.thread_id));
    await record(tx, runId, 'post', posts.map((p) => ({ ref: p.id, detail: { thread_id: p.thread_id } })));
    const suggestions = await tx.any(sql.type(IdRow)`
      UPDATE suggestions SET state = 'withdrawn', note = 'Withdrawn by undo_everything.', decided_by = ${actor.id}, decided_at = now()
      WHERE id IN (SELECT id FROM (${waitingSuggestions(hub.id, person.id)}) s) RETURNING id`);
    await record(tx, runId, 'suggestion', suggestions.map((s) => ({ ref: s.id, detail: {} })));
    const claims = await tx.any(sql.type(ClaimRow)`SELECT * FROM (${heldClaims(hub.id, person.id)}) c FOR UPDATE`);
    if (claims.length) {
      await tx.query(sql.unsafe`
        UPDATE tasks SET state = 'open', assignee_id = NULL, note = 'Opened again: the hub undid what its holder did.', progress_at = now(), updated_at = now()
        WHERE id = ANY(${sql.array(claims.map((c) => c.id), 'text')})`);
      await bumpThreads(tx, claims.map((c) => c.thread_id));
    }
    await record(tx, runId, 'claim', claims.map((c) => ({ ref: c.id, detail: { state: c.state, assignee_id: c.assignee_id, thread_id: c.thread_id } })));
    const edits = await tx.any(sql.type(EditRow)`${editsToUndo(hub.id, person.id)}`);
    return { linked, posts: posts.length, suggestions: suggestions.length, claims: claims.length, edits };
  });
  if (!done) {
    const nothing = { hub, person, runId: null, takenBack: false, linked: null, posts: 0, edits: 0, suggestions: 0, claims: 0, conflicts: [] };
    return committed(core, write, nothing);
  }
  const conflicts: UndoOutcome['conflicts'] = [];
  let undone = 0;
  for (const edit of done.edits) {
    const found = await findEdit(core.db.pool, editIdOf(edit.pad_id, edit.version));
    if (!found) continue;
    const outcome = await core.sync.applyEdits(edit.pad_id, authorOf(actor), { undo: { version: edit.version, changed: found.changed } }, null, undefined);
    conflicts.push(...outcome.conflicts.map((c) => ({ pad_id: edit.pad_id, block_id: c.block_id })));
    if (outcome.version === null) continue;
    undone++;
    await record(core.db.pool, runId, 'edit', [{ ref: `${edit.pad_id}:${edit.version}`, detail: { pad_id: edit.pad_id, undo_version: outcome.version } }]);
  }
  return committed(core, write, { hub, person, runId, takenBack: false, linked: done.linked, posts: done.posts, suggestions: done.suggestions, claims: done.claims, edits: undone, conflicts });
}

/** The pipeline's idempotency record, once the answer is known (the pad versions went in before it). */
async function committed(core: Core, write: PlannedWrite<UndoOutcome> | undefined, outcome: UndoOutcome): Promise<UndoOutcome> {
  if (write) await core.db.write((tx) => write.commit(tx, outcome));
  return outcome;
}

const ItemRow = z.object({ kind: z.string(), ref: z.string(), detail: z.record(z.string(), z.unknown()) });

/**
 * Takes back the last undo of this person in this hub: what it hid shows again, its suggestions wait
 * again and its claims go back to their holder (each only while nothing moved it since), and each of
 * its undo versions is undone in turn, newest first.
 */
export async function takeBackUndo(core: Core, actor: Actor, { hub, person }: UndoTarget, write: PlannedWrite<UndoOutcome> | undefined): Promise<UndoOutcome> {
  const run = await standingRun(core.db.pool, hub.id, person.id);
  if (!run) throw notFound(`No undo of ${person.id} in ${hub.slug} is standing to take back; undo_everything without take_back undoes.`);
  const done = await core.db.write(async (tx: DatabaseTransactionConnection) => {
    const taken = await tx.query(sql.unsafe`UPDATE undo_runs SET taken_back_at = now(), taken_back_by = ${actor.id} WHERE id = ${run.id} AND taken_back_at IS NULL`);
    if (!taken.rowCount) throw notFound('That undo was just taken back.');
    const items = await tx.any(sql.type(ItemRow)`SELECT kind, ref, detail FROM undo_run_items WHERE run_id = ${run.id}`);
    const of = (kind: string) => items.filter((i) => i.kind === kind);
    const posts = await tx.any(sql.type(PostRow)`
      UPDATE posts SET hidden_at = NULL, hidden_by = NULL
      WHERE id = ANY(${sql.array(of('post').map((i) => i.ref), 'text')}) AND hidden_at IS NOT NULL AND deleted_at IS NULL RETURNING id, thread_id`);
    const suggestions = await tx.query(sql.unsafe`
      UPDATE suggestions SET state = 'waiting', note = NULL, decided_by = NULL, decided_at = NULL
      WHERE id = ANY(${sql.array(of('suggestion').map((i) => i.ref), 'text')}) AND state = 'withdrawn'`);
    let claims = 0;
    const threads = posts.map((p) => p.thread_id);
    for (const claim of of('claim')) {
      const back = await tx.query(sql.unsafe`
        UPDATE tasks SET state = ${String(claim.detail.state)}, assignee_id = ${String(claim.detail.assignee_id)}, note = NULL, progress_at = now(), updated_at = now()
        WHERE id = ${claim.ref} AND state = 'open' AND assignee_id IS NULL`);
      if (back.rowCount) {
        claims++;
        threads.push(String(claim.detail.thread_id));
      }
    }
    await bumpThreads(tx, threads);
    const edits = of('edit')
      .map((i) => ({ pad_id: String(i.detail.pad_id), version: Number(i.detail.undo_version) }))
      .sort((a, b) => b.version - a.version);
    return { posts: posts.length, suggestions: suggestions.rowCount, claims, edits };
  });
  const conflicts: UndoOutcome['conflicts'] = [];
  let redone = 0;
  for (const edit of done.edits) {
    const found = await findEdit(core.db.pool, editIdOf(edit.pad_id, edit.version));
    if (!found) continue;
    const outcome = await core.sync.applyEdits(edit.pad_id, authorOf(actor), { undo: { version: edit.version, changed: found.changed } }, null, undefined);
    conflicts.push(...outcome.conflicts.map((c) => ({ pad_id: edit.pad_id, block_id: c.block_id })));
    if (outcome.version !== null) redone++;
  }
  return committed(core, write, { hub, person, runId: run.id, takenBack: true, linked: null, posts: done.posts, suggestions: done.suggestions, claims: done.claims, edits: redone, conflicts });
}
