import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { ThreadRow } from '../../schema/rows.ts';


/** A post as every reader sees it: author, place, marks, reactions. */
export type PostView = {
  id: string;
  seq: number;
  body: string;
  reply_to: string | null;
  created_at: number;
  author: { id: string; name: string; kind: 'human' | 'agent' };
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
  author: z.object({ id: z.string(), name: z.string(), kind: z.enum(['human', 'agent']) }),
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
      SELECT p.id, p.seq, p.body, p.reply_to, floor(extract(epoch FROM p.created_at) * 1000) AS created_at,
             json_build_object('id', a.id, 'name', a.name, 'kind', a.kind) AS author,
             coalesce((SELECT json_object_agg(r.reaction, r.n ORDER BY r.reaction)
                       FROM (SELECT reaction, count(*) AS n FROM reactions WHERE post_id = p.id GROUP BY reaction) r), '{}'::json) AS reactions
      FROM posts p JOIN participants a ON a.id = p.author_id
      WHERE p.thread_id = ${threadId} ${where}
      ORDER BY p.seq ${newestFirst ? sql.fragment`DESC` : sql.fragment`ASC`}
      LIMIT ${limit}
    ) picked)`;
}

export const PostsJson = z.array(PostJoinRow);

/** What the JSON of `postsJson` becomes: posts as every reader sees them, oldest first. */
export function toPostViews(thread: Pick<ThreadRow, 'answer_post_id'>, rows: z.infer<typeof PostsJson>): PostView[] {
  return rows.map((row) => ({ ...row, is_answer: thread.answer_post_id === row.id }));
}

/** Posts of one thread, oldest first, with authors and reaction counts, in one round trip. */
export async function loadPosts(conn: CommonQueryMethods, thread: Pick<ThreadRow, 'id' | 'answer_post_id'>, selector: PostSelector): Promise<PostView[]> {
  const rows = await conn.oneFirst(sql.type(z.object({ posts: PostsJson }))`SELECT ${postsJson(thread.id, selector)} AS posts`);
  return toPostViews(thread, rows);
}

/** The five fixed reactions; they notify nobody. */
export const REACTIONS = { thumbs_up: '👍', heart: '❤️', laugh: '😄', eyes: '👀', check: '✅' } as const;
export type Reaction = keyof typeof REACTIONS;
