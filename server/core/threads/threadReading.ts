import { sql } from 'slonik';
import { z } from 'zod';
import type { HubRow, ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { DecisionsJson, decisionsJson, type Decision } from './decisions.ts';
import { notFound } from '../../../schema/errors.ts';
import type { ThreadTarget } from '../kernel/policy.ts';
import { postPages, PostsJson, postsJson, reactionsBy, selectorShape, toPostViews, type PostSelector, type PostView } from './posts.ts';
import { mayLock } from '../kernel/locks.ts';
import { allows } from '../kernel/rights.ts';
import { activeTasksOf, listTasks, type Task } from '../tasks/tasks.ts';
import { withinBudget } from './threads.ts';
import { markRead } from './readMarks.ts';

export const THREAD_TEXT_BUDGET = 40_000;
export const NEWEST_POSTS = 60;
export const AROUND_CURSOR = 100;

const IdTitleVersionRow = z.object({ id: z.string(), title: z.string(), version: z.number() });
const IdNameKindRoleRow = z.object({ id: z.string(), name: z.string(), kind: z.enum(['human', 'agent']), role: z.string().nullable() });

export type OpenThreadInput = { before_seq?: number | undefined; after_seq?: number | undefined; post_id?: string | undefined };
export type ThreadMember = z.infer<typeof IdNameKindRoleRow>;

/** What a thread is about, with the pad's title and the section's title as it read when the thread started. */
export type ThreadAbout = { pad_id: string; pad_title: string; block_id: string; section_title: string };
/** What the reader may do here beyond posting. */
export type ThreadCan = { moderate: boolean; mark_answer: boolean; rename: boolean; lock: boolean };

export type ThreadReading = ThreadTarget & {
  posts: readonly PostView[];
  /** One whole post was asked for: nothing is clipped and there is no paging. */
  whole: boolean;
  members: readonly ThreadMember[];
  pads: readonly { id: string; title: string; version: number }[];
  /** Tasks under way and the newest few of any state, oldest first. */
  tasks: readonly Task[];
  decisions: readonly Decision[];
  about: ThreadAbout | null;
  can: ThreadCan;
  /** The reactions the reader gave, by post id: read for the web app alone (a session), null otherwise. */
  mine: ReadonlyMap<string, readonly string[]> | null;
  /** The seq to pass as before_seq / after_seq for the posts around this page, when there are any. */
  older: number | undefined;
  newer: number | undefined;
};

export const AboutJson = z.object({ pad_id: z.string(), pad_title: z.string(), block_id: z.string(), section_title: z.string() }).nullable();
export const PadsJson = z.array(IdTitleVersionRow.extend({ created_at: z.string() }));
const ThreadSideRow = z.object({
  members: z.array(IdNameKindRoleRow.extend({ first_seq: z.number() })),
  pads: PadsJson,
  decisions: DecisionsJson,
  about: AboutJson,
});
const ThreadContentRow = ThreadSideRow.extend({ posts: PostsJson });

/** What open_thread shows beside the posts, which a thread's version does not cover (seats change without it). */
function threadSide(thread: Pick<ThreadRow, 'id'>, hub: Pick<HubRow, 'id'>) {
  // Members are those who posted, with their seat in the hub (at most 200).
  return sql.fragment`
      (SELECT coalesce(json_agg(m ORDER BY m.first_seq), '[]'::json) FROM (
        SELECT p.id, p.name, p.kind, hm.role, a.first_seq
        FROM (SELECT author_id, min(seq) AS first_seq FROM posts WHERE thread_id = ${thread.id} GROUP BY author_id) a
        JOIN participants p ON p.id = a.author_id
        LEFT JOIN hub_members hm ON hm.hub_id = ${hub.id} AND hm.participant_id = p.id
        ORDER BY a.first_seq LIMIT 200) m) AS members,
      ${padsJson(thread.id)} AS pads, ${decisionsJson(thread.id)} AS decisions, ${aboutJson(thread.id)} AS about`;
}

/** The pads made beside the thread, oldest first, as one SQL expression yielding a JSON array. */
export const padsJson = (threadId: string) => sql.fragment`(SELECT coalesce(json_agg(d ORDER BY d.created_at, d.id), '[]'::json) FROM (
        SELECT id, title, version, created_at FROM pads WHERE thread_id = ${threadId} AND deleted_at IS NULL) d)`;

/** What the thread is about, with its pad's title, as one SQL expression (null: about nothing). */
export const aboutJson = (threadId: string) => sql.fragment`(
      SELECT json_build_object('pad_id', t.about_pad_id, 'pad_title', p.title, 'block_id', t.about_block, 'section_title', coalesce(t.about_title, ''))
      FROM threads t JOIN pads p ON p.id = t.about_pad_id WHERE t.id = ${threadId})`;

export const padsOf = (rows: z.infer<typeof PadsJson>) => rows.map(({ id, title, version }) => ({ id, title, version }));

/** The newest tasks of a thread a reading shows beside those under way. */
const RECENT_TASKS = 10;

/**
 * A thread's tasks under way and its newest few of any state, oldest first. Every task change raises
 * the thread's version, so the list is kept by version.
 */
export function threadTasks(core: Core, actor: Actor, thread: Pick<ThreadRow, 'id' | 'version'>): Promise<readonly Task[]> {
  return core.reads.read(`thread_tasks ${thread.id} ${thread.version}`, async () => {
    const [active, recent] = await Promise.all([
      activeTasksOf(core.db.pool, thread.id),
      listTasks(core, core.db.pool, actor, { thread_id: thread.id, limit: RECENT_TASKS }),
    ]);
    const byId = new Map([...active, ...recent.tasks].map((task) => [task.id, task]));
    return [...byId.values()].sort((a, b) => a.n - b.n);
  });
}

/** What the reader may do in the thread beyond posting (the web app shows the buttons by it). */
export function threadCan(actor: Actor, { thread, seat }: ThreadTarget): ThreadCan {
  return {
    moderate: allows(seat, 'moderate'),
    mark_answer: allows(seat, 'markAnyAnswer') || (allows(seat, 'write') && thread.started_by === actor.id),
    // As ui_rename's policy: the owner and helpers, and whoever started it while they have a seat.
    rename: allows(seat, 'moderate') || (allows(seat, 'write') && thread.started_by === actor.id),
    // moderate lock or unlock, as its policy decides (kernel/locks.ts).
    lock: mayLock(actor.id, seat, { ...thread, maker: thread.started_by }, thread.locked_by !== null),
  };
}

/**
 * What open_thread shows: the newest posts, or a page around a cursor, or one whole post; one round
 * trip. A page of posts read before at this version (`postPages`) is not loaded again.
 */
async function threadReading(core: Core, actor: Actor, target: ThreadTarget, input: OpenThreadInput): Promise<ThreadReading> {
  const conn = core.db.pool;
  const { thread, hub } = target;
  let selector: PostSelector;
  if (input.post_id !== undefined) selector = { postId: input.post_id };
  else if (input.after_seq !== undefined) selector = { afterSeq: input.after_seq, limit: AROUND_CURSOR };
  else if (input.before_seq !== undefined) selector = { beforeSeq: input.before_seq, limit: AROUND_CURSOR };
  else selector = { newest: NEWEST_POSTS };
  const whole = input.post_id !== undefined;
  const tasks = threadTasks(core, actor, thread);
  // Awaited below; a post that is not there must not leave it rejected with nobody listening.
  tasks.catch(() => undefined);
  let posts = postPages.get('open_thread', thread, selector);
  let side: z.infer<typeof ThreadSideRow>;
  if (posts) {
    side = await core.reads.read(`thread_side ${thread.id}`, () => conn.one(sql.prepared('thread_side', ThreadSideRow)`SELECT ${threadSide(thread, hub)}`));
  } else {
    const content = await conn.one(sql.prepared(`thread_content_${selectorShape(selector)}`, ThreadContentRow)`
      SELECT ${postsJson(thread.id, selector)} AS posts, ${threadSide(thread, hub)}`);
    side = content;
    const loaded = toPostViews(thread, content.posts);
    if (whole && !loaded.length) throw notFound(`No post ${input.post_id} in this thread.`);
    // Reading forward keeps the oldest posts that fit, so nothing is skipped; otherwise the newest.
    posts = whole ? loaded : withinBudget(loaded, THREAD_TEXT_BUDGET, input.after_seq !== undefined);
    postPages.set('open_thread', thread, selector, posts);
  }
  const first = posts[0];
  const last = posts.at(-1);
  // Agents poll and get their own marks from react's answer; only the web app's page shows them, so
  // only a session pays the one query (a kept page of posts is the same for every reader).
  const mine = actor.via === 'session' ? await reactionsBy(conn, actor.id, posts.map((p) => p.id)) : null;
  return {
    ...target,
    posts,
    whole,
    members: side.members.map(({ id, name, kind, role }) => ({ id, name, kind, role })),
    pads: padsOf(side.pads),
    tasks: await tasks,
    decisions: side.decisions,
    about: side.about,
    can: threadCan(actor, target),
    mine,
    older: !whole && first && first.seq > 1 ? first.seq : undefined,
    newer: !whole && last && last.seq < thread.post_count ? last.seq : undefined,
  };
}

/** open_thread: the reading, and the caller's read mark moved up to its last post (catch_up counts from there). */
export async function openThread(core: Core, actor: Actor, target: ThreadTarget, input: OpenThreadInput): Promise<ThreadReading> {
  const reading = await threadReading(core, actor, target, input);
  await markRead(core, actor, reading.thread, reading.posts.at(-1)?.seq ?? 0);
  return reading;
}
