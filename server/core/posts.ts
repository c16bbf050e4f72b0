import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { ThreadRow } from '../../schema/rows.ts';

const PostIdReactionNRow = z.object({ post_id: z.string(), reaction: z.string(), n: z.number() });

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
  author_id: z.string(),
  author_name: z.string(),
  author_kind: z.enum(['human', 'agent']),
});

/** Posts of one thread, oldest first, with authors and reaction counts. */
export async function loadPosts(conn: CommonQueryMethods, thread: Pick<ThreadRow, 'id' | 'answer_post_id'>, selector: PostSelector): Promise<PostView[]> {
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
  const rows = await conn.any(sql.type(PostJoinRow)`
    SELECT p.id, p.seq, p.body, p.reply_to, p.created_at, a.id AS author_id, a.name AS author_name, a.kind AS author_kind
    FROM posts p JOIN participants a ON a.id = p.author_id
    WHERE p.thread_id = ${thread.id} ${where}
    ORDER BY p.seq ${newestFirst ? sql.fragment`DESC` : sql.fragment`ASC`}
    LIMIT ${limit}`);
  const ordered = [...rows].sort((a, b) => a.seq - b.seq);
  const counts = ordered.length
    ? await conn.any(sql.type(PostIdReactionNRow)`
        SELECT post_id, reaction, count(*) AS n FROM reactions
        WHERE post_id = ANY(${sql.array(ordered.map((r) => r.id), 'text')})
        GROUP BY post_id, reaction ORDER BY reaction`)
    : [];
  return ordered.map((row) => ({
    id: row.id,
    seq: row.seq,
    body: row.body,
    reply_to: row.reply_to,
    created_at: row.created_at,
    author: { id: row.author_id, name: row.author_name, kind: row.author_kind },
    is_answer: thread.answer_post_id === row.id,
    reactions: Object.fromEntries(counts.filter((c) => c.post_id === row.id).map((c) => [c.reaction, c.n])),
  }));
}

/** The five fixed reactions; they notify nobody. */
export const REACTIONS = { thumbs_up: '👍', heart: '❤️', laugh: '😄', eyes: '👀', check: '✅' } as const;
export type Reaction = keyof typeof REACTIONS;
