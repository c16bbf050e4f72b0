import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { decodeCursor, encodeCursor } from '../kernel/cursor.ts';
import { forbidden, invalid, notFound, AppError } from '../../../schema/errors.ts';
import { requireParticipant, type Named } from '../identity/handles.ts';
import { postInThread, readPad } from '../policies/policies.ts';
import { type PolicyScope, type ThreadTarget } from '../kernel/policy.ts';
import { allows } from '../kernel/rights.ts';
import { newId } from '../kernel/secrets.ts';
import { noticeTask } from '../inbox/inbox.ts';
import { blocksAt } from '../../../sync/versions.ts';
import { TASK_ACTIONS, TASK_PAGE_MAX, TASK_STATES, type TaskState } from '../../../schema/tools/tasks.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

export type { TaskState };

/**
 * Tasks (docs/features.md, "Tasks"): work that comes out of a thread, with one assignee or open to
 * anyone who may post there, and an optional reviewer. Work ends by `submit_result` (a pad, a pad
 * section or a link): done on its author's say-so, or in review until the named reviewer approves or
 * sends it back.
 * Every change raises the thread's version, so kept reads and ETags of the thread move with it.
 * The states, the steps and the page size are the tools' contract (schema/tools/tasks.ts).
 */

/** Someone holds the task: the 48-hour rule (rulebook/idleTask.ts) opens it again when nothing moves. */
export const HELD: readonly TaskState[] = ['taken', 'in_progress', 'blocked'];
const FINAL: readonly TaskState[] = ['done', 'cancelled'];
export const IDLE_HOURS = 48;
export const TASK_PAGE = 20;

const Person = z.object({ id: z.string(), name: z.string(), handle: z.string(), kind: z.enum(['human', 'agent']) });
export type Person = z.infer<typeof Person>;

export const TaskRow = z.object({
  id: z.string(),
  n: z.number(),
  thread_id: z.string(),
  thread_title: z.string(),
  hub_id: z.string(),
  hub_slug: z.string(),
  title: z.string(),
  details: z.string(),
  state: z.enum(TASK_STATES),
  created_by: Person,
  assignee: Person.nullable(),
  reviewer: Person.nullable(),
  result_pad: z.string().nullable(),
  result_block: z.string().nullable(),
  result_url: z.string().nullable(),
  result_note: z.string().nullable(),
  note: z.string().nullable(),
  progress_at: z.number(),
  created_at: z.number(),
  updated_at: z.number(),
});
export type Task = z.infer<typeof TaskRow>;

const person = (column: string) =>
  sql.fragment`(SELECT json_build_object('id', p.id, 'name', p.name, 'handle', p.handle, 'kind', p.kind) FROM participants p WHERE p.id = ${sql.identifier(['k', column])})`;

export const TASK_COLUMNS = sql.fragment`
  k.id, k.n, k.thread_id, t.title AS thread_title, k.hub_id, h.slug AS hub_slug, k.title, k.details, k.state,
  ${person('created_by')} AS created_by, ${person('assignee_id')} AS assignee, ${person('reviewer_id')} AS reviewer,
  k.result_pad, k.result_block, k.result_url, k.result_note, k.note, k.progress_at, k.created_at, k.updated_at`;
export const TASK_FROM = sql.fragment`FROM tasks k JOIN threads t ON t.id = k.thread_id JOIN hubs h ON h.id = k.hub_id`;

/** One task by id, whoever asks: callers decide whether the reader may see it (by its thread). */
export async function loadTask(conn: CommonQueryMethods, id: string): Promise<Task | null> {
  return conn.maybeOne(sql.type(TaskRow)`SELECT ${TASK_COLUMNS} ${TASK_FROM} WHERE k.id = ${id}`);
}

const NO_TASK = 'No such task, or it is private: list_tasks shows the tasks you can see.';

export type TaskTarget = ThreadTarget & { task: Task };

/** A task in a thread the caller may post in (every task write needs that); private and missing answer alike. */
export const taskToWork = (id: string) => async (scope: PolicyScope): Promise<TaskTarget> => {
  const task = await loadTask(scope.conn, id);
  if (!task) throw notFound(NO_TASK);
  try {
    return { ...(await postInThread(task.thread_id)(scope)), task };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') throw notFound(NO_TASK);
    throw error;
  }
};

/** Someone named as assignee or reviewer must have a seat where the thread is (its hub, or the thread itself). */
async function seated(conn: CommonQueryMethods, ref: string, target: ThreadTarget, as: string): Promise<Named> {
  const who = await requireParticipant(conn, ref);
  const seat = await conn.maybeOneFirst(sql.type(z.object({ ok: z.number() }))`
    SELECT 1 AS ok FROM hub_members WHERE hub_id = ${target.hub.id} AND participant_id = ${who.id}
    UNION ALL SELECT 1 FROM item_members WHERE item_id = ${target.thread.id} AND participant_id = ${who.id} LIMIT 1`);
  if (seat === null) throw invalid(`${who.handle} has no seat in ${target.hub.slug}, so cannot be the ${as}: invite them first, or name someone who has.`, { issues: [{ path: as, message: 'No seat in this hub.' }] });
  return who;
}

async function bumpThread(tx: CommonQueryMethods, threadId: string) {
  await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${threadId}`);
  threadsMoved(tx, threadId);
}

export type TaskChange = { task: Task; did: string };

async function changed(tx: CommonQueryMethods, id: string, did: string): Promise<TaskChange> {
  return { task: (await loadTask(tx, id))!, did };
}

export type CreateTaskInput = { title: string; details?: string | undefined; assignee?: string | undefined; reviewer?: string | undefined };

export async function createTask(tx: CommonQueryMethods, actor: Actor, target: ThreadTarget, input: CreateTaskInput): Promise<TaskChange> {
  const assignee = input.assignee === undefined ? null : await seated(tx, input.assignee, target, 'assignee');
  const reviewer = input.reviewer === undefined ? null : await seated(tx, input.reviewer, target, 'reviewer');
  if (assignee && reviewer && assignee.id === reviewer.id) {
    throw invalid('The reviewer checks the assignee’s result, so name someone else as reviewer (or none).', { issues: [{ path: 'reviewer', message: 'Same as the assignee.' }] });
  }
  const id = newId('tsk_');
  await tx.query(sql.unsafe`
    INSERT INTO tasks (id, thread_id, hub_id, title, details, state, created_by, assignee_id, reviewer_id)
    VALUES (${id}, ${target.thread.id}, ${target.hub.id}, ${input.title}, ${input.details ?? ''}, ${assignee ? 'assigned' : 'open'},
            ${actor.id}, ${assignee?.id ?? null}, ${reviewer?.id ?? null})`);
  await bumpThread(tx, target.thread.id);
  await noticeTask(tx, 'assigned', assignee?.id, actor.id, { id, thread_id: target.thread.id, hub_id: target.hub.id, title: input.title });
  return changed(tx, id, 'created');
}

function refuseState(task: Task, wanted: string): never {
  throw new AppError('conflict', `${task.id} is ${task.state}, so it cannot ${wanted}. list_tasks shows where it stands.`, { state: task.state });
}

/** Writes a step: the new state and who holds the task; a step of the holder's counts as progress. */
async function step(tx: CommonQueryMethods, task: Task, to: TaskState, options: { assignee?: string | null; note?: string | null; progress?: boolean }) {
  await tx.query(sql.unsafe`
    UPDATE tasks SET state = ${to},
      assignee_id = ${options.assignee === undefined ? (task.assignee?.id ?? null) : options.assignee},
      note = ${options.note === undefined ? task.note : options.note},
      progress_at = ${options.progress === false ? sql.fragment`progress_at` : sql.fragment`now()`},
      updated_at = now()
    WHERE id = ${task.id}`);
  await bumpThread(tx, task.thread_id);
}

/** take_task: an open task, by anyone who may post here; an assigned one, by its assignee. Taking one's own again changes nothing. */
export async function takeTask(tx: CommonQueryMethods, actor: Actor, { task }: TaskTarget): Promise<TaskChange> {
  if (HELD.includes(task.state) && task.assignee?.id === actor.id) return { task, did: 'unchanged' };
  if (task.state === 'assigned' && task.assignee?.id !== actor.id) {
    throw forbidden(`${task.id} is assigned to ${task.assignee!.handle}; only they take it (or it opens again if they decline).`);
  }
  if (task.state !== 'open' && task.state !== 'assigned') refuseState(task, 'be taken');
  if (task.reviewer?.id === actor.id) throw forbidden(`You review ${task.id}, so someone else does the work.`);
  await step(tx, task, 'taken', { assignee: actor.id, note: null });
  return changed(tx, task.id, 'taken');
}

export type ResultRef = { pad_id?: string | undefined; block_id?: string | undefined; url?: string | undefined; note?: string | undefined };

const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

/**
 * submit_result: by whoever holds the task (an open one is taken by submitting it). The result is a
 * pad of this hub, a section of one (a block id of its current version), or an http(s) link.
 */
export async function submitResult(core: Core, tx: CommonQueryMethods, actor: Actor, target: TaskTarget, input: ResultRef): Promise<TaskChange> {
  const { task } = target;
  if ((input.pad_id === undefined) === (input.url === undefined)) {
    throw invalid('Point the result at a pad (pad_id, with block_id for one section) or at an http(s) link (url): exactly one of them.', {
      issues: [{ path: input.pad_id === undefined ? 'pad_id' : 'url', message: 'Give exactly one of pad_id and url.' }],
    });
  }
  if (input.block_id !== undefined && input.pad_id === undefined) {
    throw invalid('block_id names a section of a pad: give pad_id too.', { issues: [{ path: 'block_id', message: 'Needs pad_id.' }] });
  }
  if (FINAL.includes(task.state) || task.state === 'in_review') refuseState(task, 'take a result now');
  const holder = task.assignee?.id ?? null;
  if (task.state === 'open' ? false : holder !== actor.id) {
    throw forbidden(`${task.id} is ${task.state === 'assigned' ? 'assigned to' : 'held by'} ${task.assignee!.handle}; only they hand in its result.`);
  }
  if (task.reviewer?.id === actor.id) throw forbidden(`You review ${task.id}, so someone else hands in its result.`);
  if (input.url !== undefined && !HTTP_URL.test(input.url)) {
    throw invalid('url must be an http(s) link, such as https://example.org/report.', { issues: [{ path: 'url', message: 'Not an http(s) link.' }] });
  }
  if (input.pad_id !== undefined) {
    const { pad } = await readPad(input.pad_id)({ core, conn: tx, actor });
    if (pad.hub_id !== target.hub.id) {
      throw invalid(`${pad.id} is in another hub; point at a pad of ${target.hub.slug} (create_pad makes one beside the thread).`, { issues: [{ path: 'pad_id', message: 'Pad of another hub.' }] });
    }
    if (input.block_id !== undefined) {
      // The pad's current blocks, whatever its newest version row holds (most rows hold a change, not the list).
      const current = await blocksAt(tx, pad.id);
      if (!current?.blocks.some((block) => block.id === input.block_id)) {
        throw invalid(`${pad.id} has no section ${input.block_id} now: open_pad lists its sections and their block ids.`, { issues: [{ path: 'block_id', message: 'No such block in the pad.' }] });
      }
    }
  }
  // In a Checked hub a result waits for someone else's check (verify) even with no reviewer named.
  const to: TaskState = task.reviewer || target.hub.mode === 'checked' ? 'in_review' : 'done';
  await tx.query(sql.unsafe`
    UPDATE tasks SET state = ${to}, assignee_id = ${actor.id}, result_pad = ${input.pad_id ?? null}, result_block = ${input.block_id ?? null},
      result_url = ${input.url ?? null}, result_note = ${input.note ?? null}, result_by = ${actor.id}, note = NULL,
      progress_at = now(), updated_at = now()
    WHERE id = ${task.id}`);
  await bumpThread(tx, task.thread_id);
  await noticeTask(tx, 'review', to === 'in_review' ? task.reviewer?.id : null, actor.id, task);
  // The creator hears of it; a creator who also reviews has the review item already.
  const creator = to === 'in_review' && task.reviewer?.id === task.created_by.id ? null : task.created_by.id;
  await noticeTask(tx, to === 'done' ? 'task_done' : 'task_submitted', creator, actor.id, task);
  return changed(tx, task.id, to === 'done' ? 'done' : 'submitted');
}

export type TaskAction = (typeof TASK_ACTIONS)[number];

/**
 * update_task: the holder starts, blocks, unblocks or declines (the task opens again for anyone);
 * the creator, or the hub's owner and helpers, cancel; the named reviewer approves a result (done) or
 * sends it back (in progress again). Nothing here finishes work without a result.
 */
export async function updateTask(tx: CommonQueryMethods, actor: Actor, target: TaskTarget, action: TaskAction, note: string | undefined): Promise<TaskChange> {
  const { task } = target;
  const holds = task.assignee?.id === actor.id;
  const holderOnly = (verb: string) => {
    if (!holds) throw forbidden(`Only ${task.assignee ? task.assignee.handle : 'whoever takes it'} may ${verb} ${task.id}${task.state === 'open' ? ': take_task first' : ''}.`);
  };
  switch (action) {
    case 'start':
      holderOnly('start');
      if (task.state === 'in_progress') return { task, did: 'unchanged' };
      if (task.state !== 'taken' && task.state !== 'assigned') refuseState(task, 'start');
      await step(tx, task, 'in_progress', { note: null });
      return changed(tx, task.id, 'started');
    case 'block':
      holderOnly('block');
      if (!['taken', 'in_progress', 'assigned'].includes(task.state)) refuseState(task, 'be blocked');
      await step(tx, task, 'blocked', { note: note ?? null });
      return changed(tx, task.id, 'blocked');
    case 'unblock':
      holderOnly('unblock');
      if (task.state !== 'blocked') refuseState(task, 'be unblocked');
      await step(tx, task, 'in_progress', { note: null });
      return changed(tx, task.id, 'unblocked');
    case 'decline':
      holderOnly('decline');
      if (!['assigned', ...HELD].includes(task.state)) refuseState(task, 'be declined');
      await step(tx, task, 'open', { assignee: null, note: note ?? null });
      return changed(tx, task.id, 'declined');
    case 'cancel':
      if (task.created_by.id !== actor.id && !allows(target.seat, 'moderate')) {
        throw forbidden(`Only whoever created ${task.id} (${task.created_by.handle}) and the hub's owner and helpers cancel it; decline it if you hold it.`, { your_role: target.seat ?? 'none' });
      }
      if (FINAL.includes(task.state)) refuseState(task, 'be cancelled');
      await step(tx, task, 'cancelled', { note: note ?? null, progress: false });
      return changed(tx, task.id, 'cancelled');
    case 'approve':
    case 'send_back':
      if (task.reviewer?.id !== actor.id) throw forbidden(`Only the named reviewer${task.reviewer ? ` (${task.reviewer.handle})` : ''} reviews ${task.id}.`);
      if (task.state !== 'in_review') refuseState(task, 'be reviewed');
      if (action === 'approve') {
        await step(tx, task, 'done', { note: note ?? null, progress: false });
        await noticeTask(tx, 'task_done', [task.created_by.id, task.assignee?.id], actor.id, task);
        return changed(tx, task.id, 'approved');
      }
      await step(tx, task, 'in_progress', { note: note ?? null });
      await noticeTask(tx, 'assigned', task.assignee?.id, actor.id, task);
      return changed(tx, task.id, 'sent_back');
  }
}

/**
 * A check of a task's handed-in result in a Checked hub (`verify`): verified finishes a task in review
 * as its reviewer's approval would; turned down sends it back to its holder. A result already done
 * only takes the check's record.
 */
export async function checkResult(tx: CommonQueryMethods, actor: Actor, task: Task, verdict: 'verified' | 'turned_down', note: string): Promise<TaskChange> {
  if (task.state !== 'in_review') return { task, did: 'unchanged' };
  if (verdict === 'verified') {
    await step(tx, task, 'done', { note, progress: false });
    await noticeTask(tx, 'task_done', [task.created_by.id, task.assignee?.id], actor.id, task);
    return changed(tx, task.id, 'approved');
  }
  await step(tx, task, 'in_progress', { note });
  await noticeTask(tx, 'assigned', task.assignee?.id, actor.id, task);
  return changed(tx, task.id, 'sent_back');
}

export type TaskFilter = {
  hub?: string | undefined;
  thread_id?: string | undefined;
  state?: TaskState | 'active' | undefined;
  assignee?: string | undefined;
  mine?: boolean | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
};
export type TaskPage = { tasks: Task[]; next_cursor: string | undefined };

const Cursor = z.object({ n: z.number().int() });
const ACTIVE: readonly TaskState[] = ['open', 'assigned', 'taken', 'in_progress', 'blocked', 'in_review'];

/**
 * list_tasks: tasks in threads the caller may read (a seat in the hub or the thread, or a public hub
 * where public reading is on), within a sub-agent key's threads; newest first, a cursor after.
 */
export async function listTasks(core: Core, conn: CommonQueryMethods, actor: Actor, filter: TaskFilter): Promise<TaskPage> {
  const limit = Math.min(filter.limit ?? TASK_PAGE, TASK_PAGE_MAX);
  const where = [
    sql.fragment`h.deleted_at IS NULL`,
    sql.fragment`(EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = k.hub_id AND m.participant_id = ${actor.id})
      OR EXISTS (SELECT 1 FROM item_members i WHERE i.item_id = k.thread_id AND i.participant_id = ${actor.id})
      ${core.config.publicThreads ? sql.fragment`OR h.audience = 'public'` : sql.fragment``})`,
  ];
  if (actor.grant) where.push(sql.fragment`k.thread_id = ANY(${sql.array([...actor.grant.threads], 'text')})`);
  if (filter.hub !== undefined) where.push(sql.fragment`(h.slug = ${filter.hub} OR h.id = ${filter.hub})`);
  if (filter.thread_id !== undefined) where.push(sql.fragment`k.thread_id = ${filter.thread_id}`);
  if (filter.state === 'active') where.push(sql.fragment`k.state = ANY(${sql.array([...ACTIVE], 'text')})`);
  else if (filter.state !== undefined) where.push(sql.fragment`k.state = ${filter.state}`);
  if (filter.assignee !== undefined) {
    const who = await requireParticipant(conn, filter.assignee);
    where.push(sql.fragment`k.assignee_id = ${who.id}`);
  }
  if (filter.mine) where.push(sql.fragment`(k.assignee_id = ${actor.id} OR k.reviewer_id = ${actor.id} OR k.created_by = ${actor.id})`);
  if (filter.cursor !== undefined) where.push(sql.fragment`k.n < ${decodeCursor(filter.cursor, Cursor).n}`);
  const rows = await conn.any(sql.type(TaskRow)`
    SELECT ${TASK_COLUMNS} ${TASK_FROM} WHERE ${sql.join(where, sql.fragment` AND `)} ORDER BY k.n DESC LIMIT ${limit + 1}`);
  const tasks = rows.slice(0, limit);
  return { tasks, next_cursor: rows.length > limit ? encodeCursor({ n: tasks[tasks.length - 1]!.n }) : undefined };
}

/** The thread's tasks still under way, oldest first (for a thread's reading). */
export async function activeTasksOf(conn: CommonQueryMethods, threadId: string): Promise<readonly Task[]> {
  return conn.any(sql.type(TaskRow)`
    SELECT ${TASK_COLUMNS} ${TASK_FROM} WHERE k.thread_id = ${threadId} AND k.state = ANY(${sql.array([...ACTIVE], 'text')}) ORDER BY k.n LIMIT 50`);
}
