import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow, HubRow,  ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import { callerOf } from '../kernel/caller.ts';
import type { Core } from '../kernel/context.ts';
import { invalid, notFound } from '../../../schema/errors.ts';
import { aboutSection, settleIn, type About, type AboutInput, type FlagState } from './flags.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import { allows } from '../kernel/rights.ts';
import type { PostTarget, ThreadTarget } from '../kernel/policy.ts';
import { newId } from '../kernel/secrets.ts';
import { noticePost, type MentionNote } from '../inbox/mentions.ts';
import { loadPosts, postPages, type PostView, type PostSelector, type Reaction } from './posts.ts';
import { readableThread } from './threadAccess.ts';
import { foldReason } from './folding.ts';
import { afterCommit, threadsMoved } from '../kernel/afterCommit.ts';

const PostCountRow = z.object({ post_count: z.number() });
const IdReplyToRow = z.object({ id: z.string(), reply_to: z.string().nullable() });
const ThreadStateRow = ThreadRow.pick({ status: true, version: true, answer_post_id: true });

export const POST_CLIP = 3_000;

/**
 * Appends a post, giving it the thread's next seq; the thread row lock orders concurrent posts. A
 * folded post (`folded`: the reason) folds its thread (SPEC part 3 "Thread status": from any state).
 */
async function appendPost(tx: CommonQueryMethods, threadId: string, author: Actor, body: string, replyTo: string | null, folded: string | null) {
  const seq = await tx.oneFirst(sql.type(PostCountRow)`
    UPDATE threads SET post_count = post_count + 1, version = version + 1, updated_at = now()
      ${folded === null ? sql.fragment`` : sql.fragment`, status = 'folded'`}
    WHERE id = ${threadId} RETURNING post_count`);
  threadsMoved(tx, threadId);
  const id = newId('msg_');
  await tx.query(sql.unsafe`
    INSERT INTO posts (id, thread_id, seq, author_id, body, reply_to, folded, caller)
    VALUES (${id}, ${threadId}, ${seq}, ${author.id}, ${body}, ${replyTo}, ${folded}, ${callerOf(author)})`);
  return { id, seq };
}

export type StartedThread = {
  thread_id: string;
  title: string;
  post_id: string;
  seq: number;
  hub: Pick<HubRow, 'id' | 'slug'>;
  about: About | null;
  /** What the reply says of the first post's mentions (past the cap, or quiet). */
  mentions: MentionNote;
  /** Why the first post (and so the thread) was folded, if it was. */
  folded: string | null;
};

/**
 * A new thread in a hub the caller may write in, with its first post; about a pad section (and
 * flagging it) when `about` says so, which `aboutSection` checked before the transaction.
 */
export async function startThread(
  tx: CommonQueryMethods,
  actor: Actor,
  hub: HubRow,
  input: { title: string; body: string; about?: About | null; folded?: string | null },
): Promise<StartedThread> {
  const threadId = newId('thr_');
  const about = input.about ?? null;
  await tx.query(sql.unsafe`
    INSERT INTO threads (id, hub_id, title, started_by, version, about_pad_id, about_block, about_title, flag, flag_moved_at, flag_moved_by)
    VALUES (${threadId}, ${hub.id}, ${input.title}, ${actor.id}, 0, ${about?.padId ?? null}, ${about?.block ?? null}, ${about?.title ?? null},
            ${about?.flag ? 'open' : null}, ${about?.flag ? sql.fragment`now()` : null}, ${about?.flag ? actor.id : null})`);
  await tx.query(sql.unsafe`UPDATE hubs SET updated_at = now() WHERE id = ${hub.id}`);
  afterCommit(tx, { reads: 'hubs' });
  const folded = input.folded ?? null;
  const post = await appendPost(tx, threadId, actor, input.body, null, folded);
  const mentions = await noticePost(tx, actor, { id: threadId, hub_id: hub.id }, { id: post.id, body: input.body, reply_to: null });
  return { thread_id: threadId, title: input.title, post_id: post.id, seq: post.seq, hub: { id: hub.id, slug: hub.slug }, about, mentions, folded };
}

export type StartThreadInput = AboutInput & { title: string; body: string };

/**
 * `start_thread`: what the thread is about is checked first, from the pool (the live pad and the
 * caller's standing), then the thread is written in one transaction with what `write` adds.
 */
export async function openNewThread(core: Core, actor: Actor, hub: HubRow, input: StartThreadInput, write: PlannedWrite<StartedThread> | undefined): Promise<StartedThread> {
  const about = await aboutSection(core, actor, hub, input);
  const folded = await foldReason(core, core.db.pool, actor, input.body);
  return core.db.write(async (tx) => {
    const out = await startThread(tx, actor, hub, { title: input.title, body: input.body, about, folded });
    await write?.commit(tx, out);
    return out;
  });
}

export type PostedReply = {
  post_id: string;
  seq: number;
  reply_to: string | null;
  thread: Pick<ThreadRow, 'id' | 'title'>;
  mentions: MentionNote;
  /** Why the post (and so its thread) was folded, if it was. */
  folded: string | null;
};

export async function postReply(core: Core, tx: CommonQueryMethods, actor: Actor, { thread }: ThreadTarget, input: { body: string; reply_to?: string | undefined }): Promise<PostedReply> {
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
  const folded = await foldReason(core, tx, actor, input.body);
  const post = await appendPost(tx, thread.id, actor, input.body, replyTo, folded);
  const mentions = await noticePost(tx, actor, thread, { id: post.id, body: input.body, reply_to: input.reply_to ?? null });
  return { post_id: post.id, seq: post.seq, reply_to: replyTo, thread: { id: thread.id, title: thread.title }, mentions, folded };
}

/**
 * Keeps the posts whose clipped text fits the budget, counting from the newest (or, with `fromOldest`,
 * the oldest) and always at least one; returns them oldest first.
 */
export function withinBudget(posts: readonly PostView[], budget: number, fromOldest = false): PostView[] {
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

export type AnswerMark = {
  post_id: string;
  thread_id: string;
  status: string;
  version: number;
  answer: string | null;
  /** False when the call asked to unmark a post that was not the answer. */
  changed: boolean;
  unmark: boolean;
  /** The thread's flag after the mark, on a thread that flags a section. */
  flag: FlagState | null;
  /** The mark settled the thread's flag (an owner or helper marked it). */
  settled: boolean;
};

/**
 * Marks or unmarks the answer. On a thread that flags a section, the hub's owner or a helper marking
 * an answer settles the flag; the thread's starter (a member) marking one leaves it open. A folded
 * thread stays folded (its answer is still recorded).
 */
export async function markAnswer(tx: CommonQueryMethods, actor: Actor, { post, thread, seat }: PostTarget, unmark: boolean): Promise<AnswerMark> {
  const base = { post_id: post.id, thread_id: thread.id, unmark };
  if (unmark && thread.answer_post_id !== post.id) {
    return { ...base, status: thread.status, version: thread.version, answer: thread.answer_post_id, changed: false, flag: thread.flag, settled: false };
  }
  const updated = await tx.one(sql.type(ThreadStateRow)`
    UPDATE threads
    SET answer_post_id = ${unmark ? null : post.id}, status = CASE WHEN status = 'folded' THEN 'folded' ELSE ${unmark ? 'open' : 'answered'} END,
        version = version + 1, updated_at = now()
    WHERE id = ${thread.id}
    RETURNING status, version, answer_post_id`);
  threadsMoved(tx, thread.id);
  const settled = !unmark && thread.flag !== null && allows(seat, 'moderate') ? await settleIn(tx, actor, thread.id) : null;
  return {
    ...base,
    status: updated.status,
    version: settled?.version ?? updated.version,
    answer: updated.answer_post_id,
    changed: true,
    flag: settled?.flag ?? thread.flag,
    settled: settled !== null,
  };
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
    threadsMoved(tx, thread.id);
  }
  const count = await tx.oneFirst(sql.type(CountRow)`
    SELECT count(*) AS n FROM reactions WHERE post_id = ${post.id} AND reaction = ${input.reaction}`);
  return { post_id: post.id, thread_id: thread.id, reaction: input.reaction, count, mine: !input.remove, changed: changed.rowCount > 0 };
}
