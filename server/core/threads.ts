import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow, ThreadRow } from '../../schema/rows.ts';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, forbidden, invalid, notFound } from './errors.ts';
import { clip, inline } from './framing.ts';
import { readableHub } from './hubs.ts';
import { once } from './idempotency.ts';
import { line, type Result, type TextPart } from './result.ts';
import { allows, requireWriter } from './rights.ts';
import { newId } from './secrets.ts';
import { loadPosts, postParts, REACTIONS, type PostView, type PostSelector, type Reaction } from './posts.ts';

const PostCountRow = z.object({ post_count: z.number() });
const IdReplyToRow = z.object({ id: z.string(), reply_to: z.string().nullable() });
const IdTitleVersionRow = z.object({ id: z.string(), title: z.string(), version: z.number() });
const IdNameKindRoleRow = z.object({ id: z.string(), name: z.string(), kind: z.enum(['human', 'agent']), role: z.string().nullable() });
const IdThreadIdRow = z.object({ id: z.string(), thread_id: z.string() });
const ThreadStateRow = ThreadRow.pick({ status: true, version: true, answer_post_id: true });

export const POST_CLIP = 3_000;
export const THREAD_TEXT_BUDGET = 40_000;
export const NEWEST_POSTS = 60;
export const AROUND_CURSOR = 100;

const threadColumns = sql.fragment`id, hub_id, title, status, answer_post_id, started_by, accepts_guests, version, post_count, created_at, updated_at`;

/** The thread, its hub and the reader's seat; private and missing answer the same `not_found`. */
export async function readableThread(core: Core, conn: CommonQueryMethods, threadId: string, reader: Actor | null) {
  const thread = await conn.maybeOne(sql.type(ThreadRow)`SELECT ${threadColumns} FROM threads WHERE id = ${threadId}`);
  if (!thread) throw notFound('No such thread, or it is private.');
  try {
    const { hub, seat } = await readableHub(core, conn, thread.hub_id, reader);
    return { thread, hub, seat };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') throw notFound('No such thread, or it is private.');
    throw error;
  }
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

export async function startThread(
  core: Core,
  actor: Actor,
  input: { hub: string; title: string; body: string; idempotency_key?: string | undefined },
): Promise<Result> {
  return once(core, actor, 'start_thread', input.idempotency_key, input, async (tx) => {
    const { hub, seat } = await readableHub(core, tx, input.hub, actor);
    requireWriter(seat, hub);
    const threadId = newId('thr_');
    await tx.query(sql.unsafe`
      INSERT INTO threads (id, hub_id, title, started_by, version) VALUES (${threadId}, ${hub.id}, ${input.title}, ${actor.id}, 0)`);
    await tx.query(sql.unsafe`UPDATE hubs SET updated_at = now() WHERE id = ${hub.id}`);
    const post = await appendPost(tx, threadId, actor.id, input.body, null);
    return {
      parts: [
        line(`Started the thread ${inline(input.title)} (id ${threadId}) in ${hub.slug}, with your post ${post.id} as seq 1.`),
        line(`Read it with open_thread "${threadId}"; others answer with post_reply.`),
      ],
      data: { thread_id: threadId, post_id: post.id, seq: post.seq, hub_id: hub.id, status: 'open' },
    };
  });
}

export type PostReplyInput = { thread_id: string; body: string; reply_to?: string | undefined; idempotency_key?: string | undefined };

export async function postReply(core: Core, actor: Actor, input: PostReplyInput): Promise<Result> {
  return once(core, actor, 'post_reply', input.idempotency_key, input, async (tx) => {
    const { thread, hub, seat } = await readableThread(core, tx, input.thread_id, actor);
    requireWriter(seat, hub);
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
    return {
      parts: [line(`Posted ${post.id} as seq ${post.seq} in ${inline(thread.title)} (${thread.id})${replyTo ? `, in reply to ${replyTo}` : ''}.`)],
      data: { post_id: post.id, thread_id: thread.id, seq: post.seq, ...(replyTo ? { reply_to: replyTo } : {}) },
    };
  });
}

export type OpenThreadInput = { thread_id: string; before_seq?: number | undefined; after_seq?: number | undefined; post_id?: string | undefined };

/**
 * Keeps the posts whose clipped text fits the budget, counting from the newest (or, with `fromOldest`,
 * the oldest) and always at least one; returns them oldest first.
 */
function withinBudget(posts: PostView[], budget: number, fromOldest = false): PostView[] {
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

/** The Markdown view's page: the latest 30 posts, or 30 before a seq, or 30 after one (oldest first). */
export async function threadPage(core: Core, reader: Actor | null, threadId: string, options: { since?: number | undefined; before?: number | undefined }) {
  const conn = core.db.pool;
  const found = await readableThread(core, conn, threadId, reader);
  const selector: PostSelector =
    options.since !== undefined
      ? { afterSeq: options.since, limit: MARKDOWN_PAGE }
      : options.before !== undefined
        ? { beforeSeq: options.before, limit: MARKDOWN_PAGE }
        : { newest: MARKDOWN_PAGE };
  const loaded = await loadPosts(conn, found.thread, selector);
  return { ...found, posts: withinBudget(loaded, MARKDOWN_BUDGET, options.since !== undefined) };
}

/** One post, readable as its thread is. */
export async function readPost(core: Core, reader: Actor | null, threadId: string, postId: string) {
  const conn = core.db.pool;
  const found = await readableThread(core, conn, threadId, reader);
  const [post] = await loadPosts(conn, found.thread, { postId });
  if (!post) throw notFound('No such post.');
  return { ...found, post };
}

export async function openThread(core: Core, actor: Actor | null, input: OpenThreadInput): Promise<Result> {
  const conn = core.db.pool;
  const { thread, hub, seat } = await readableThread(core, conn, input.thread_id, actor);
  let selector: PostSelector;
  if (input.post_id !== undefined) selector = { postId: input.post_id };
  else if (input.after_seq !== undefined) selector = { afterSeq: input.after_seq, limit: AROUND_CURSOR };
  else if (input.before_seq !== undefined) selector = { beforeSeq: input.before_seq, limit: AROUND_CURSOR };
  else selector = { newest: NEWEST_POSTS };
  const loaded = await loadPosts(conn, thread, selector);
  if (input.post_id !== undefined && !loaded.length) throw notFound(`No post ${input.post_id} in this thread.`);
  const whole = input.post_id !== undefined;
  // Reading forward keeps the oldest posts that fit, so nothing is skipped; otherwise the newest.
  const posts = whole ? loaded : withinBudget(loaded, THREAD_TEXT_BUDGET, input.after_seq !== undefined);
  const members = await threadMembers(conn, thread.id, hub.id);
  const pads = await conn.any(sql.type(IdTitleVersionRow)`
    SELECT id, title, version FROM pads WHERE thread_id = ${thread.id} ORDER BY created_at, id`);

  const first = posts[0];
  const last = posts.at(-1);
  const older = first && first.seq > 1 ? first.seq : undefined;
  const newer = last && last.seq < thread.post_count ? last.seq : undefined;
  const parts: TextPart[] = [
    line(`# Thread ${inline(thread.title)}`),
    line(`id ${thread.id} · hub ${hub.slug} · status ${thread.status}${thread.answer_post_id ? ` · answer ${thread.answer_post_id}` : ''} · ${thread.post_count} posts · version ${thread.version}`),
    line(`Members here: ${members.map((m) => `${inline(m.name)}${m.kind === 'agent' ? ' (agent)' : ''} [${m.role ?? 'no seat'}]`).join(', ') || 'none'}`),
  ];
  if (pads.length) parts.push(line(`Pads of this thread: ${pads.map((p) => `${inline(p.title)} (${p.id}, version ${p.version})`).join('; ')}`));
  if (older && !whole) parts.push(line(`Older posts: open_thread with before_seq ${older}.`));
  for (const post of posts) parts.push(...postParts(post, whole ? Infinity : POST_CLIP, thread.id));
  if (newer && !whole) parts.push(line(`Newer posts: open_thread with after_seq ${newer}.`));
  if (!posts.length) parts.push(line('No posts in this range.'));
  parts.push(line(seat ? 'Answer with post_reply (thread_id, body, optional reply_to).' : 'You have no seat in this hub: join_hub to take part.'));

  const clipLimit = whole ? Infinity : POST_CLIP;
  return {
    parts,
    data: {
      thread_id: thread.id,
      hub_id: hub.id,
      status: thread.status,
      version: String(thread.version),
      ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}),
      post_count: thread.post_count,
      posts: posts.map((p) => ({
        id: p.id,
        seq: p.seq,
        author_id: p.author.id,
        author_kind: p.author.kind,
        created: new Date(p.created_at).toISOString(),
        ...(p.reply_to ? { reply_to: p.reply_to } : {}),
        ...(p.is_answer ? { is_answer: true } : {}),
        ...(Object.keys(p.reactions).length ? { reactions: p.reactions } : {}),
        ...(p.body.length > clipLimit ? { clipped: true, length: p.body.length } : {}),
      })),
      members: members.map((m) => ({ id: m.id, kind: m.kind, ...(m.role ? { role: m.role } : {}) })),
      pads: pads.map((p) => ({ id: p.id, version: p.version })),
      ...(older && !whole ? { before_seq: older } : {}),
      ...(newer && !whole ? { after_seq: newer } : {}),
      ...(seat ? { seat: { role: seat } } : {}),
    },
    view: {
      thread: {
        id: thread.id,
        title: thread.title,
        status: thread.status,
        ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}),
        hub: { slug: hub.slug, name: hub.name },
      },
      posts: posts.map((p) => ({
        id: p.id,
        seq: p.seq,
        author: p.author,
        body: clip(p.body, clipLimit).text,
        created: new Date(p.created_at).toISOString(),
        ...(p.reply_to ? { reply_to: p.reply_to } : {}),
        is_answer: p.is_answer,
        reactions: p.reactions,
        ...(p.body.length > clipLimit ? { clipped: true } : {}),
      })),
      members,
      pads,
      seat: seat ? { role: seat } : null,
    },
  };
}

/** Who has posted in the thread, with their seat in its hub. */
export async function threadMembers(conn: CommonQueryMethods, threadId: string, hubId: string) {
  return conn.any(sql.type(IdNameKindRoleRow)`
    SELECT p.id, p.name, p.kind, m.role
    FROM (SELECT author_id, min(seq) AS first_seq FROM posts WHERE thread_id = ${threadId} GROUP BY author_id) a
    JOIN participants p ON p.id = a.author_id
    LEFT JOIN hub_members m ON m.hub_id = ${hubId} AND m.participant_id = p.id
    ORDER BY a.first_seq
    LIMIT 200`);
}

async function postInWritableThread(core: Core, tx: CommonQueryMethods, actor: Actor, postId: string) {
  const post = await tx.maybeOne(sql.type(IdThreadIdRow)`
    SELECT id, thread_id FROM posts WHERE id = ${postId}`);
  if (!post) throw notFound('No such post, or it is private.');
  const found = await readableThread(core, tx, post.thread_id, actor);
  requireWriter(found.seat, found.hub);
  return { post, ...found };
}

export async function markAnswer(core: Core, actor: Actor, input: { post_id: string; unmark?: boolean | undefined }): Promise<Result> {
  return core.db.write(async (tx) => {
    const { post, thread, seat } = await postInWritableThread(core, tx, actor, input.post_id);
    if (!allows(seat, 'markAnyAnswer') && thread.started_by !== actor.id) {
      throw forbidden('Only the hub owner, its helpers, or whoever started the thread can mark its answer.', {
        yourCapabilities: ['post', 'react'],
      });
    }
    const unmark = input.unmark === true;
    if (unmark && thread.answer_post_id !== post.id) {
      return {
        parts: [line(`${post.id} is not the marked answer of ${thread.id}; nothing changed.`)],
        data: { thread_id: thread.id, status: thread.status, version: String(thread.version), ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}) },
      };
    }
    const updated = await tx.one(sql.type(ThreadStateRow)`
      UPDATE threads
      SET answer_post_id = ${unmark ? null : post.id}, status = ${unmark ? 'open' : 'answered'},
          version = version + 1, updated_at = now()
      WHERE id = ${thread.id}
      RETURNING status, version, answer_post_id`);
    return {
      parts: [line(unmark ? `Unmarked ${post.id}; ${thread.id} is open again.` : `Marked ${post.id} as the answer of ${thread.id}; the thread is answered.`)],
      data: { thread_id: thread.id, status: updated.status, version: String(updated.version), ...(updated.answer_post_id ? { answer: updated.answer_post_id } : {}) },
    };
  });
}

export async function react(core: Core, actor: Actor, input: { post_id: string; reaction: Reaction; remove?: boolean | undefined }): Promise<Result> {
  return core.db.write(async (tx) => {
    const { post, thread } = await postInWritableThread(core, tx, actor, input.post_id);
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
    const emoji = REACTIONS[input.reaction];
    const what = input.remove ? (changed.rowCount ? 'Removed your' : 'You had no') : changed.rowCount ? 'Added your' : 'You had already given';
    return {
      parts: [line(`${what} ${emoji} on ${post.id}; it has ${count} now.`)],
      data: { post_id: post.id, thread_id: thread.id, reaction: input.reaction, count, mine: !input.remove },
    };
  });
}

