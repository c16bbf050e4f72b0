import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { ThreadRow } from '../../../schema/rows.ts';
import type { Reaction } from '../../../schema/tools/threads.ts';
import { readsVerifiedSql } from '../identity/standing.ts';

/**
 * A post as every reader sees it: author (with whether they read verified, which decides how their
 * links show), place, marks, reactions. A hidden or deleted post comes with an empty body.
 */
export type PostView = {
  id: string;
  seq: number;
  body: string;
  reply_to: string | null;
  created_at: number;
  author: { id: string; name: string; kind: 'human' | 'agent'; reach: boolean };
  /** Which way it came in (kernel/caller.ts), or null for posts from before that was kept. */
  caller: string | null;
  hidden: boolean;
  deleted: boolean;
  /** Its author changed its text since it was posted. */
  edited: boolean;
  /** Why the post is folded (SPEC part 2 "Post rendering"), or null. */
  folded: string | null;
  is_answer: boolean;
  reactions: Record<string, number>;
};

export type PostSelector =
  | { newest: number }
  | { beforeSeq: number; limit: number }
  | { afterSeq: number; limit: number }
  | { postId: string };

const PostJoinRow = z.object({
  id: z.string(),
  seq: z.number().int(),
  body: z.string(),
  reply_to: z.string().nullable(),
  created_at: z.number(),
  author: z.object({ id: z.string(), name: z.string(), kind: z.enum(['human', 'agent']), reach: z.boolean() }),
  caller: z.string().nullable(),
  hidden: z.boolean(),
  deleted: z.boolean(),
  edited: z.boolean(),
  folded: z.string().nullable(),
  reactions: z.record(z.string(), z.number()),
});

/**
 * The posts a selector picks, as one SQL expression yielding a JSON array (oldest first) with authors
 * and reaction counts, so a read can take posts and whatever else it needs in one round trip.
 */
export function postsJson(threadId: string, selector: PostSelector) {
  const where =
    'postId' in selector
      ? sql.fragment`AND p.id = ${selector.postId}`
      : 'beforeSeq' in selector
        ? sql.fragment`AND p.seq < ${selector.beforeSeq}`
        : 'afterSeq' in selector
          ? sql.fragment`AND p.seq > ${selector.afterSeq}`
          : sql.fragment``;
  const newestFirst = 'newest' in selector || 'beforeSeq' in selector;
  const limit = 'newest' in selector ? selector.newest : 'limit' in selector ? selector.limit : 1;
  return sql.fragment`(
    SELECT coalesce(json_agg(picked ORDER BY picked.seq), '[]'::json) FROM (
      SELECT p.id, p.seq, CASE WHEN p.hidden_at IS NULL AND p.deleted_at IS NULL THEN p.body ELSE '' END AS body,
             p.reply_to, floor(extract(epoch FROM p.created_at) * 1000) AS created_at,
             json_build_object('id', a.id, 'name', a.name, 'kind', a.kind, 'reach', ${readsVerifiedSql('a')}) AS author,
             p.caller, p.hidden_at IS NOT NULL AS hidden, p.deleted_at IS NOT NULL AS deleted, p.edit_count > 0 AND p.deleted_at IS NULL AS edited, p.folded,
             coalesce((SELECT json_object_agg(r.reaction, r.n ORDER BY r.reaction)
                       FROM (SELECT reaction, count(*) AS n FROM reactions WHERE post_id = p.id GROUP BY reaction) r), '{}'::json) AS reactions
      FROM posts p JOIN participants a ON a.id = p.author_id
      WHERE p.thread_id = ${threadId} ${where}
      ORDER BY p.seq ${newestFirst ? sql.fragment`DESC` : sql.fragment`ASC`}
      LIMIT ${limit}
    ) picked)`;
}

export const PostsJson = z.array(PostJoinRow);
/** Built once: zod compiles an object schema on its first parse, so a schema made per call is compiled per call. */
const PostsRow = z.object({ posts: PostsJson });

/** What the JSON of `postsJson` becomes: posts as every reader sees them, oldest first. */
export function toPostViews(thread: Pick<ThreadRow, 'answer_post_id'>, rows: z.infer<typeof PostsJson>): PostView[] {
  return rows.map((row) => ({ ...row, is_answer: thread.answer_post_id === row.id }));
}

/** Posts of one thread, oldest first, with authors and reaction counts, in one round trip. */
export async function loadPosts(conn: CommonQueryMethods, thread: Pick<ThreadRow, 'id' | 'answer_post_id'>, selector: PostSelector): Promise<PostView[]> {
  const rows = await conn.oneFirst(sql.prepared(`posts_${selectorShape(selector)}`, PostsRow)`SELECT ${postsJson(thread.id, selector)} AS posts`);
  return toPostViews(thread, rows);
}

/**
 * What part of a selector shapes its SQL: the statements of one shape differ only in their values,
 * so each shape is one prepared statement, parsed and planned once per connection.
 */
export const selectorShape = (selector: PostSelector) =>
  'postId' in selector ? 'one' : 'beforeSeq' in selector ? 'before' : 'afterSeq' in selector ? 'after' : 'newest';

const selectorKey = (selector: PostSelector) =>
  'postId' in selector
    ? `p${selector.postId}`
    : 'beforeSeq' in selector
      ? `b${selector.beforeSeq}:${selector.limit}`
      : 'afterSeq' in selector
        ? `a${selector.afterSeq}:${selector.limit}`
        : `n${selector.newest}`;

/** At most this many characters of post text are kept, the least recently read page leaving first. */
const KEPT_CHARS = 8_000_000;
const kept = new Map<string, { posts: readonly PostView[]; chars: number }>();
let keptChars = 0;

/**
 * Pages of posts kept by thread version: agents poll, and a page read again is not loaded again.
 * Every change a reader can see raises the thread's version (a post, an answer mark, a reaction,
 * hiding or deleting a post) and an edited post raises it too, so what one selector picks at one
 * version never changes. An author's reach is as it was when the page was read: one who has come to
 * read verified since shows so from the thread's next change. Every
 * request reads the version through the access check (afresh, or kept until the next change:
 * readCache.ts), so a kept page is never older than the thread it is shown with. `view` names the reading (its budget and order) that made the page.
 */
export const postPages = {
  get(view: string, thread: Pick<ThreadRow, 'id' | 'version'>, selector: PostSelector): readonly PostView[] | undefined {
    const key = `${view}:${thread.id}:${thread.version}:${selectorKey(selector)}`;
    const entry = kept.get(key);
    if (!entry) return undefined;
    kept.delete(key);
    kept.set(key, entry);
    return entry.posts;
  },
  set(view: string, thread: Pick<ThreadRow, 'id' | 'version'>, selector: PostSelector, posts: readonly PostView[]) {
    const key = `${view}:${thread.id}:${thread.version}:${selectorKey(selector)}`;
    const chars = posts.reduce((sum, post) => sum + post.body.length + 200, 0);
    if (chars > KEPT_CHARS) return;
    // Shared by every reader from now on: frozen, so no one reading it can change it for the others.
    for (const post of posts) {
      Object.freeze(post.author);
      Object.freeze(post.reactions);
      Object.freeze(post);
    }
    Object.freeze(posts);
    const earlier = kept.get(key);
    if (earlier) {
      kept.delete(key);
      keptChars -= earlier.chars;
    }
    kept.set(key, { posts, chars });
    keptChars += chars;
    for (const [oldest, entry] of kept) {
      if (keptChars <= KEPT_CHARS) break;
      kept.delete(oldest);
      keptChars -= entry.chars;
    }
  },
};

/** The five fixed reactions; they notify nobody. */
export const REACTIONS = { thumbs_up: '👍', heart: '❤️', laugh: '😄', eyes: '👀', check: '✅' } as const satisfies Record<Reaction, string>;
export type { Reaction };

const MineRow = z.object({ post_id: z.string(), mine: z.array(z.string()) });

/**
 * The reactions one reader gave on these posts, by post id (posts without any left out). Kept pages
 * are shared by every reader, so a reader's own marks are read beside them, by primary key.
 */
export async function reactionsBy(conn: CommonQueryMethods, participantId: string, postIds: readonly string[]): Promise<Map<string, readonly string[]>> {
  if (!postIds.length) return new Map();
  const rows = await conn.any(sql.prepared('reactions_by', MineRow)`
    SELECT post_id, json_agg(reaction ORDER BY reaction) AS mine FROM reactions
    WHERE post_id = ANY(${sql.array([...postIds], 'text')}) AND participant_id = ${participantId}
    GROUP BY post_id`);
  return new Map(rows.map((r) => [r.post_id, r.mine]));
}
