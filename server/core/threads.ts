import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow, HubRow, Role, ThreadRow } from '../../schema/rows.ts';
import type { Actor } from './actor.ts';
import { grantsThread } from './grants.ts';
import type { Core } from './context.ts';
import { invalid, notFound } from './errors.ts';
import { readsPublic } from './hubs.ts';
import type { Seat } from './rights.ts';
import type { PostTarget, ThreadTarget } from './policies.ts';
import { newId } from './secrets.ts';
import { noticePost } from './mentions.ts';
import { loadPosts, postPages, PostsJson, postsJson, selectorShape, toPostViews, type PostView, type PostSelector, type Reaction } from './posts.ts';

const PostCountRow = z.object({ post_count: z.number() });
const IdReplyToRow = z.object({ id: z.string(), reply_to: z.string().nullable() });
const IdTitleVersionRow = z.object({ id: z.string(), title: z.string(), version: z.number() });
const IdNameKindRoleRow = z.object({ id: z.string(), name: z.string(), kind: z.enum(['human', 'agent']), role: z.string().nullable() });
const ThreadStateRow = ThreadRow.pick({ status: true, version: true, answer_post_id: true });

export const POST_CLIP = 3_000;
export const THREAD_TEXT_BUDGET = 40_000;
export const NEWEST_POSTS = 60;
export const AROUND_CURSOR = 100;

/** The thread's row, its hub's columns beside it (named `hub_…`, the hub's id being the thread's `hub_id`), and the reader's seat. */
const ThreadTargetRow = ThreadRow.extend({
  hub_slug: HubRow.shape.slug,
  hub_name: HubRow.shape.name,
  hub_readme: HubRow.shape.readme,
  hub_audience: HubRow.shape.audience,
  hub_mode: HubRow.shape.mode,
  hub_owner_id: HubRow.shape.owner_id,
  hub_created_at: HubRow.shape.created_at,
  hub_updated_at: HubRow.shape.updated_at,
  role: Role.nullable(),
});

/**
 * The thread, its hub and the reader's seat, in one round trip; private and missing answer the same
 * `not_found`. Every read of a thread starts here, and a 304 ends here: the statement is prepared,
 * and the hub comes as plain columns, which Postgres sends for less than a JSON object of them.
 */
export async function readableThread(core: Core, conn: CommonQueryMethods, threadId: string, reader: Actor | null): Promise<ThreadTarget> {
  if (!grantsThread(reader, threadId)) throw notFound('No such thread, or it is private.');
  const load = () => conn.maybeOne(sql.prepared('readable_thread', ThreadTargetRow)`
    SELECT t.id, t.hub_id, t.title, t.status, t.answer_post_id, t.started_by, t.accepts_guests, t.version, t.post_count,
           t.created_at, t.updated_at, h.slug AS hub_slug, h.name AS hub_name, h.readme AS hub_readme,
           h.audience AS hub_audience, h.mode AS hub_mode, h.owner_id AS hub_owner_id,
           h.created_at AS hub_created_at, h.updated_at AS hub_updated_at, coalesce(m.role, i.role) AS role
    FROM threads t JOIN hubs h ON h.id = t.hub_id
    LEFT JOIN hub_members m ON m.hub_id = t.hub_id AND m.participant_id = ${reader?.id ?? null}
    LEFT JOIN item_members i ON i.item_id = t.id AND i.participant_id = ${reader?.id ?? null}
    WHERE t.id = ${threadId}`);
  // Outside a transaction the read may be one kept since the last change; a write reads afresh.
  const row = conn === core.db.pool ? await core.reads.read(`readable_thread ${threadId} ${reader?.id ?? ''}`, load) : await load();
  if (!row) throw notFound('No such thread, or it is private.');
  const { hub_slug, hub_name, hub_readme, hub_audience, hub_mode, hub_owner_id, hub_created_at, hub_updated_at, role, ...thread } = row;
  const hub: HubRow = {
    id: thread.hub_id,
    slug: hub_slug,
    name: hub_name,
    readme: hub_readme,
    audience: hub_audience,
    mode: hub_mode,
    owner_id: hub_owner_id,
    created_at: hub_created_at,
    updated_at: hub_updated_at,
  };
  if (role === null && !readsPublic(core, hub)) throw notFound('No such thread, or it is private.');
  return { thread, hub, seat: role as Seat };
}

/** Appends a post, giving it the thread's next seq; the thread row lock orders concurrent posts. */
async function appendPost(tx: CommonQueryMethods, threadId: string, author: string, body: string, replyTo: string | null) {
  const seq = await tx.oneFirst(sql.type(PostCountRow)`
    UPDATE threads SET post_count = post_count + 1, version = version + 1, updated_at = now()
    WHERE id = ${threadId} RETURNING post_count`);
  const id = newId('msg_');
  await tx.query(sql.unsafe`
    INSERT INTO posts (id, thread_id, seq, author_id, body, reply_to)
    VALUES (${id}, ${threadId}, ${seq}, ${author}, ${body}, ${replyTo})`);
  return { id, seq };
}

export type StartedThread = { thread_id: string; title: string; post_id: string; seq: number; hub: Pick<HubRow, 'id' | 'slug'> };

/** A new thread in a hub the caller may write in, with its first post. */
export async function startThread(tx: CommonQueryMethods, actor: Actor, hub: HubRow, input: { title: string; body: string }): Promise<StartedThread> {
  const threadId = newId('thr_');
  await tx.query(sql.unsafe`
    INSERT INTO threads (id, hub_id, title, started_by, version) VALUES (${threadId}, ${hub.id}, ${input.title}, ${actor.id}, 0)`);
  await tx.query(sql.unsafe`UPDATE hubs SET updated_at = now() WHERE id = ${hub.id}`);
  const post = await appendPost(tx, threadId, actor.id, input.body, null);
  await noticePost(tx, actor, { id: threadId, hub_id: hub.id }, { id: post.id, body: input.body, reply_to: null });
  return { thread_id: threadId, title: input.title, post_id: post.id, seq: post.seq, hub: { id: hub.id, slug: hub.slug } };
}

export type PostedReply = { post_id: string; seq: number; reply_to: string | null; thread: Pick<ThreadRow, 'id' | 'title'> };

export async function postReply(tx: CommonQueryMethods, actor: Actor, { thread }: ThreadTarget, input: { body: string; reply_to?: string | undefined }): Promise<PostedReply> {
  let replyTo: string | null = null;
  if (input.reply_to !== undefined) {
    const parent = await tx.maybeOne(sql.type(IdReplyToRow)`
      SELECT id, reply_to FROM posts WHERE id = ${input.reply_to} AND thread_id = ${thread.id}`);
    if (!parent) {
      throw invalid(`reply_to ${input.reply_to} is not a post of this thread.`, {
        issues: [{ path: 'reply_to', message: 'Not a post of this thread.' }],
      });
    }
    // Replies nest one level: a reply to a reply joins its parent's replies.
    replyTo = parent.reply_to ?? parent.id;
  }
  const post = await appendPost(tx, thread.id, actor.id, input.body, replyTo);
  await noticePost(tx, actor, thread, { id: post.id, body: input.body, reply_to: replyTo });
  return { post_id: post.id, seq: post.seq, reply_to: replyTo, thread: { id: thread.id, title: thread.title } };
}

/**
 * Keeps the posts whose clipped text fits the budget, counting from the newest (or, with `fromOldest`,
 * the oldest) and always at least one; returns them oldest first.
 */
function withinBudget(posts: readonly PostView[], budget: number, fromOldest = false): PostView[] {
  const kept: PostView[] = [];
  let used = 0;
  for (const post of [...posts].sort((a, b) => (fromOldest ? a.seq - b.seq : b.seq - a.seq))) {
    used += Math.min(post.body.length, POST_CLIP);
    if (used > budget && kept.length > 0) break;
    kept.push(post);
  }
  return kept.sort((a, b) => a.seq - b.seq);
}

export const MARKDOWN_PAGE = 30;
export const MARKDOWN_BUDGET = 24_000;

/**
 * The Markdown view's page: the latest 30 posts, or 30 before a seq, or 30 after one (oldest first).
 * Kept by thread version (`postPages`), so a page read again costs no round trip.
 */
export async function threadPage(conn: CommonQueryMethods, { thread }: ThreadTarget, options: { since?: number | undefined; before?: number | undefined }): Promise<readonly PostView[]> {
  const selector: PostSelector =
    options.since !== undefined
      ? { afterSeq: options.since, limit: MARKDOWN_PAGE }
      : options.before !== undefined
        ? { beforeSeq: options.before, limit: MARKDOWN_PAGE }
        : { newest: MARKDOWN_PAGE };
  const kept = postPages.get('markdown', thread, selector);
  if (kept) return kept;
  const page = withinBudget(await loadPosts(conn, thread, selector), MARKDOWN_BUDGET, options.since !== undefined);
  postPages.set('markdown', thread, selector, page);
  return page;
}

/** One post, readable as its thread is. */
export async function readPost(core: Core, reader: Actor | null, threadId: string, postId: string) {
  const conn = core.db.pool;
  const found = await readableThread(core, conn, threadId, reader);
  const [post] = await loadPosts(conn, found.thread, { postId });
  if (!post) throw notFound('No such post.');
  return { ...found, post };
}

export type OpenThreadInput = { before_seq?: number | undefined; after_seq?: number | undefined; post_id?: string | undefined };
export type ThreadMember = z.infer<typeof IdNameKindRoleRow>;

export type ThreadReading = ThreadTarget & {
  posts: readonly PostView[];
  /** One whole post was asked for: nothing is clipped and there is no paging. */
  whole: boolean;
  members: readonly ThreadMember[];
  pads: readonly { id: string; title: string; version: number }[];
  /** The seq to pass as before_seq / after_seq for the posts around this page, when there are any. */
  older: number | undefined;
  newer: number | undefined;
};

const ThreadSideRow = z.object({
  members: z.array(IdNameKindRoleRow.extend({ first_seq: z.number() })),
  pads: z.array(IdTitleVersionRow.extend({ created_at: z.string() })),
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
      (SELECT coalesce(json_agg(d ORDER BY d.created_at, d.id), '[]'::json) FROM (
        SELECT id, title, version, created_at FROM pads WHERE thread_id = ${thread.id}) d) AS pads`;
}

/**
 * What open_thread shows: the newest posts, or a page around a cursor, or one whole post; one round
 * trip. A page of posts read before at this version (`postPages`) is not loaded again.
 */
export async function threadReading(core: Core, target: ThreadTarget, input: OpenThreadInput): Promise<ThreadReading> {
  const conn = core.db.pool;
  const { thread, hub } = target;
  let selector: PostSelector;
  if (input.post_id !== undefined) selector = { postId: input.post_id };
  else if (input.after_seq !== undefined) selector = { afterSeq: input.after_seq, limit: AROUND_CURSOR };
  else if (input.before_seq !== undefined) selector = { beforeSeq: input.before_seq, limit: AROUND_CURSOR };
  else selector = { newest: NEWEST_POSTS };
  const whole = input.post_id !== undefined;
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
  return {
    ...target,
    posts,
    whole,
    members: side.members.map(({ id, name, kind, role }) => ({ id, name, kind, role })),
    pads: side.pads.map(({ id, title, version }) => ({ id, title, version })),
    older: !whole && first && first.seq > 1 ? first.seq : undefined,
    newer: !whole && last && last.seq < thread.post_count ? last.seq : undefined,
  };
}

export type AnswerMark = {
  post_id: string;
  thread_id: string;
  status: string;
  version: number;
  answer: string | null;
  /** False when the call asked to unmark a post that was not the answer. */
  changed: boolean;
  unmark: boolean;
};

export async function markAnswer(tx: CommonQueryMethods, { post, thread }: PostTarget, unmark: boolean): Promise<AnswerMark> {
  const base = { post_id: post.id, thread_id: thread.id, unmark };
  if (unmark && thread.answer_post_id !== post.id) {
    return { ...base, status: thread.status, version: thread.version, answer: thread.answer_post_id, changed: false };
  }
  const updated = await tx.one(sql.type(ThreadStateRow)`
    UPDATE threads
    SET answer_post_id = ${unmark ? null : post.id}, status = ${unmark ? 'open' : 'answered'},
        version = version + 1, updated_at = now()
    WHERE id = ${thread.id}
    RETURNING status, version, answer_post_id`);
  return { ...base, status: updated.status, version: updated.version, answer: updated.answer_post_id, changed: true };
}

export type Reacted = { post_id: string; thread_id: string; reaction: Reaction; count: number; mine: boolean; changed: boolean };

/** Adds or takes back one reaction; doing it twice is doing it once. */
export async function react(tx: CommonQueryMethods, actor: Actor, { post, thread }: PostTarget, input: { reaction: Reaction; remove?: boolean | undefined }): Promise<Reacted> {
  const changed = input.remove
    ? await tx.query(sql.unsafe`
        DELETE FROM reactions WHERE post_id = ${post.id} AND participant_id = ${actor.id} AND reaction = ${input.reaction}`)
    : await tx.query(sql.unsafe`
        INSERT INTO reactions (post_id, participant_id, reaction) VALUES (${post.id}, ${actor.id}, ${input.reaction})
        ON CONFLICT DO NOTHING`);
  if (changed.rowCount > 0) {
    await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${thread.id}`);
  }
  const count = await tx.oneFirst(sql.type(CountRow)`
    SELECT count(*) AS n FROM reactions WHERE post_id = ${post.id} AND reaction = ${input.reaction}`);
  return { post_id: post.id, thread_id: thread.id, reaction: input.reaction, count, mine: !input.remove, changed: changed.rowCount > 0 };
}
