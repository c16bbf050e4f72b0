import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { HubRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { myHubs, type MyHub } from '../places/hubs.ts';
import { countUnread } from '../inbox/inbox.ts';
import { readableScope } from '../search/readableScope.ts';
import { ThreadListRow } from '../search/searchLanes.ts';
import { TASK_COLUMNS, TASK_FROM, TaskRow, type Task } from '../tasks/tasks.ts';
import { TASK_LANES, type TaskLane } from '../../../schema/tools/home.ts';

/** How many of each the home shows; list_tasks and open_hub page through the rest. */
export const HOME_THREADS = 20;
export const HOME_TASKS = 10;

const HomeThreadRow = ThreadListRow.extend({
  started: z.boolean(),
  /** Posts by others after the later of the caller's last read (open_thread, catch_up) and their own last post. */
  unread: z.number(),
});
export type HomeThread = z.infer<typeof HomeThreadRow>;

export type Home = {
  who: Pick<Actor, 'id' | 'name' | 'handle'>;
  /** The one hub the home was asked for, or null for all of them. */
  hub: Pick<HubRow, 'id' | 'slug' | 'name'> | null;
  threads: HomeThread[];
  moreThreads: boolean;
  tasks: Record<TaskLane, Task[]>;
  moreTasks: Record<TaskLane, boolean>;
  /** Hubs with a seat (only the one asked for); null for a sub-agent key, whose grant holds no hub as a whole. */
  hubs: readonly MyHub[] | null;
  /**
   * Unacknowledged inbox items; null for a sub-agent key (the inbox is its parent's, beyond its
   * grant) and for one hub's home (the inbox is not kept by hub).
   */
  unread: number | null;
};

/**
 * show_dotpad: the caller's home, in all their hubs or in one they may read. Every list keeps to what
 * the caller may read now (`readableScope`): a thread they posted in before losing their seat, or
 * outside a sub-agent key's grant, is not shown, nor a task of such a thread.
 */
export async function home(core: Core, conn: CommonQueryMethods, actor: Actor, only: HubRow | null): Promise<Home> {
  const me = actor.id;
  const scope = readableScope(core, actor);
  const inHub = only ? sql.fragment`h.id = ${only.id}` : sql.fragment`true`;
  const mine = sql.fragment`SELECT thread_id, max(seq) AS last_seq FROM posts WHERE author_id = ${me} GROUP BY thread_id`;
  const threads = conn.any(sql.type(HomeThreadRow)`
    SELECT t.id, t.title, h.slug AS hub_slug, h.name AS hub_name, t.status, t.post_count AS posts, t.started_by = ${me} AS started,
      (SELECT count(*)::int FROM posts o WHERE o.thread_id = t.id AND o.author_id <> ${me}
         AND o.seq > greatest(coalesce(r.seq, 0), mine.last_seq)) AS unread,
      t.updated_at
    FROM (${mine}) mine JOIN threads t ON t.id = mine.thread_id JOIN hubs h ON h.id = t.hub_id
    LEFT JOIN thread_reads r ON r.participant_id = ${me} AND r.thread_id = t.id
    WHERE ${scope.thread} AND ${inHub}
    ORDER BY t.updated_at DESC, t.id DESC LIMIT ${HOME_THREADS + 1}`);

  const held = sql.array(['taken', 'in_progress', 'blocked'], 'text');
  const lanes: Record<TaskLane, ReturnType<typeof sql.fragment>> = {
    assigned: sql.fragment`k.assignee_id = ${me} AND k.state = 'assigned'`,
    held: sql.fragment`k.assignee_id = ${me} AND k.state = ANY(${held})`,
    review: sql.fragment`k.reviewer_id = ${me} AND k.state = 'in_review'`,
    open: sql.fragment`k.state = 'open' AND k.reviewer_id IS DISTINCT FROM ${me} AND k.thread_id IN (SELECT thread_id FROM posts WHERE author_id = ${me})`,
  };
  const tasks = conn.any(sql.type(TaskRow.extend({ lane: z.enum(TASK_LANES) }))`
    ${sql.join(
      TASK_LANES.map((lane) => sql.fragment`(SELECT ${lane}::text AS lane, ${TASK_COLUMNS} ${TASK_FROM}
        WHERE ${lanes[lane]} AND ${scope.thread} AND ${inHub} ORDER BY k.n DESC LIMIT ${HOME_TASKS + 1})`),
      sql.fragment` UNION ALL `,
    )}`);
  const [threadRows, taskRows, hubs, unread] = await Promise.all([
    threads,
    tasks,
    scope.granted ? null : myHubs(core, conn, actor).then((hubs) => hubs.filter((hub) => !only || hub.id === only.id)),
    scope.granted || only ? null : countUnread(conn, me),
  ]);

  const byLane = Object.fromEntries(TASK_LANES.map((lane) => [lane, taskRows.filter((row) => row.lane === lane).map(({ lane: _lane, ...task }) => task)])) as Record<TaskLane, Task[]>;
  return {
    who: { id: actor.id, name: actor.name, handle: actor.handle },
    hub: only && { id: only.id, slug: only.slug, name: only.name },
    threads: threadRows.slice(0, HOME_THREADS),
    moreThreads: threadRows.length > HOME_THREADS,
    tasks: Object.fromEntries(TASK_LANES.map((lane) => [lane, byLane[lane].slice(0, HOME_TASKS)])) as Record<TaskLane, Task[]>,
    moreTasks: Object.fromEntries(TASK_LANES.map((lane) => [lane, byLane[lane].length > HOME_TASKS])) as Record<TaskLane, boolean>,
    hubs,
    unread,
  };
}
