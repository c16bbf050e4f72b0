import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { DecisionsJson, decisionsJson, type Decision } from './decisions.ts';
import type { ThreadTarget } from '../kernel/policy.ts';
import { PostsJson, postsJson, toPostViews, type PostView } from './posts.ts';
import { markRead } from './readMarks.ts';
import { aboutJson, AboutJson, padsJson, PadsJson, padsOf, threadTasks, type ThreadAbout } from './threadReading.ts';
import type { Task } from '../tasks/tasks.ts';

/** The newest posts catch_up shows of those since the last read. */
export const CATCH_UP_POSTS = 3;
/** The newest decisions catch_up lists as where things stand. */
export const CATCH_UP_DECISIONS = 5;

const ACTIVE = new Set<Task['state']>(['open', 'assigned', 'taken', 'in_progress', 'blocked', 'in_review']);

export type CatchUp = ThreadTarget & {
  about: ThreadAbout | null;
  /** The marked answer, when there is one. */
  answer: PostView | null;
  openTasks: readonly Task[];
  pads: readonly { id: string; title: string; version: number }[];
  decisions: readonly Decision[];
  /** Where the caller last read the thread (open_thread or catch_up), or null the first time. */
  lastRead: { seq: number; at: number } | null;
  since: {
    newPosts: number;
    /** The newest of the new posts, oldest of them first. */
    newest: readonly PostView[];
    tasks: readonly Task[];
    decisions: readonly Decision[];
  };
};

const MarkJson = z.object({ seq: z.number(), at: z.number() }).nullable();
const CatchUpRow = z.object({
  mark: MarkJson,
  newest: PostsJson,
  answer: PostsJson,
  pads: PadsJson,
  decisions: DecisionsJson,
  decisions_since: DecisionsJson,
  about: AboutJson,
});

/**
 * `catch_up`: where a thread stands (status, the answer, open tasks, pads, decisions) and what
 * changed since the caller last read it, in one round trip beside the thread's kept tasks; then the
 * caller's last-read mark moves to now. A read: no transaction is held.
 */
export async function catchUp(core: Core, actor: Actor, target: ThreadTarget): Promise<CatchUp> {
  const { thread } = target;
  const readAt = sql.fragment`(SELECT read_at FROM thread_reads WHERE participant_id = ${actor.id} AND thread_id = ${thread.id})`;
  const [row, tasks] = await Promise.all([
    core.db.pool.one(sql.type(CatchUpRow)`
      SELECT
        (SELECT json_build_object('seq', r.seq, 'at', floor(extract(epoch FROM r.read_at) * 1000))
         FROM thread_reads r WHERE r.participant_id = ${actor.id} AND r.thread_id = ${thread.id}) AS mark,
        ${postsJson(thread.id, { newest: CATCH_UP_POSTS })} AS newest,
        ${thread.answer_post_id ? postsJson(thread.id, { postId: thread.answer_post_id }) : sql.fragment`'[]'::json`} AS answer,
        ${padsJson(thread.id)} AS pads,
        ${decisionsJson(thread.id)} AS decisions,
        ${decisionsJson(thread.id, readAt)} AS decisions_since,
        ${aboutJson(thread.id)} AS about`),
    threadTasks(core, actor, thread),
  ]);
  const mark = row.mark;
  const seen = mark?.seq ?? 0;
  const reading: CatchUp = {
    ...target,
    about: row.about,
    answer: toPostViews(thread, row.answer)[0] ?? null,
    openTasks: tasks.filter((t) => ACTIVE.has(t.state)),
    pads: padsOf(row.pads),
    decisions: row.decisions.slice(-CATCH_UP_DECISIONS),
    lastRead: mark,
    since: {
      newPosts: Math.max(0, thread.post_count - seen),
      newest: toPostViews(thread, row.newest).filter((p) => p.seq > seen),
      tasks: mark ? tasks.filter((t) => t.updated_at > mark.at) : [],
      decisions: mark ? row.decisions_since : [],
    },
  };
  await markRead(core, actor, thread, thread.post_count);
  return reading;
}
