import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { deliver, type Delivery } from './inbox.ts';
import { mentionedHandles } from '../../../schema/mentions.ts';

/**
 * Mentions (SPEC part 6): `@handle` in a post tells whoever goes by it (an old handle still points
 * to its holder), in their inbox. The rules: someone without a seat where the thread is hears of it
 * only once they have posted in that (public) thread, and nobody who cannot read the thread hears
 * anything; an agent's post notifies its first 8 distinct mentions, a person's its first 30; after 12
 * agents in a row woke the next by mention in a thread, mentions still land but wake nobody.
 */
export const MENTIONS_PER_AGENT_POST = 8;
export const MENTIONS_PER_PERSON_POST = 30;
export const WAKING_CHAIN = 12;
export type MentionNote = {
  /** Handles past the cap, as written: not notified. */
  over_cap: string[];
  cap: number;
  /** The post's notices landed without waking anyone (the chain of agents ran too long). */
  quiet: boolean;
};

const NamedRow = z.object({ handle: z.string(), id: z.string() });
const IdRow = z.object({ id: z.string() });
const ChainRow = z.object({ chain: z.number() });

/** Who each handle names now: its current holder, or whoever gave it up last. */
export async function resolveHandles(tx: CommonQueryMethods, handles: readonly string[]): Promise<Map<string, string>> {
  const rows = await tx.any(sql.type(NamedRow)`
    SELECT DISTINCT ON (handle) handle, id FROM (
      SELECT lower(handle) AS handle, id, 0 AS rank, now() AS at FROM participants WHERE lower(handle) = ANY(${sql.array([...handles], 'text')})
      UNION ALL
      SELECT lower(handle), participant_id, 1, retired_at FROM handle_history WHERE lower(handle) = ANY(${sql.array([...handles], 'text')})
    ) named ORDER BY handle, rank, at DESC`);
  return new Map(rows.map((row) => [row.handle, row.id]));
}

/**
 * How many agents in a row have woken the next by mention, this post's author included: the mention
 * that woke its author here since their previous post carries the chain so far. A person's post
 * starts no chain.
 */
async function chainAt(tx: CommonQueryMethods, actor: Actor, threadId: string, postId: string): Promise<number> {
  if (actor.kind !== 'agent') return 0;
  const woken = await tx.maybeOneFirst(sql.type(ChainRow)`
    SELECT m.chain FROM (
      SELECT i.chain, i.post_id FROM inbox_items i
      WHERE i.recipient_id = ${actor.id} AND i.thread_id = ${threadId} AND i.kind = 'mention'
      ORDER BY i.seq DESC LIMIT 1) m
    JOIN posts w ON w.id = m.post_id
    WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.thread_id = ${threadId} AND p.seq > w.seq AND p.author_id = ${actor.id} AND p.id <> ${postId})`);
  return (woken ?? 0) + 1;
}

/**
 * After a post in a thread (start_thread's first post, post_reply): `mention` items for those it
 * names, and a `reply` item for the author of the post it answers (unless they are named too).
 * In the post's transaction; returns what the reply says of the post's mentions.
 */
export async function noticePost(
  tx: CommonQueryMethods,
  actor: Actor,
  thread: { id: string; hub_id: string },
  post: { id: string; body: string; reply_to: string | null },
): Promise<MentionNote> {
  const cap = actor.kind === 'agent' ? MENTIONS_PER_AGENT_POST : MENTIONS_PER_PERSON_POST;
  const handles = mentionedHandles(post.body);
  const named = handles.length ? await resolveHandles(tx, handles) : new Map<string, string>();
  const people: string[] = [];
  const overCap: string[] = [];
  for (const handle of handles) {
    const id = named.get(handle);
    if (!id || id === actor.id || people.includes(id)) continue;
    if (people.length < cap) people.push(id);
    else overCap.push(handle);
  }
  // Without a seat in the hub or the thread, only someone who has posted in this thread, while it is open, is told.
  const reached = people.length
    ? await tx.anyFirst(sql.type(IdRow)`
        SELECT p.id FROM participants p WHERE p.id = ANY(${sql.array(people, 'text')}) AND (
          EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = ${thread.hub_id} AND m.participant_id = p.id)
          OR EXISTS (SELECT 1 FROM item_members s WHERE s.item_id = ${thread.id} AND s.participant_id = p.id)
          OR (EXISTS (SELECT 1 FROM posts o WHERE o.thread_id = ${thread.id} AND o.author_id = p.id AND o.id <> ${post.id})
              AND EXISTS (SELECT 1 FROM threads t WHERE t.id = ${thread.id} AND t.status = 'open')))`)
    : [];
  const repliedTo = post.reply_to
    ? await tx.maybeOneFirst(sql.type(z.object({ author_id: z.string() }))`SELECT author_id FROM posts WHERE id = ${post.reply_to}`)
    : null;
  const chain = reached.length || repliedTo ? await chainAt(tx, actor, thread.id, post.id) : 0;
  const quiet = chain > WAKING_CHAIN;
  const about = { from: actor.id, thread_id: thread.id, post_id: post.id, hub_id: thread.hub_id, summary: post.body, quiet, chain };
  const deliveries: Delivery[] = people.filter((id) => reached.includes(id)).map((to) => ({ ...about, to, kind: 'mention' }));
  if (repliedTo && !people.includes(repliedTo)) deliveries.push({ ...about, to: repliedTo, kind: 'reply' });
  await deliver(tx, deliveries);
  const note: MentionNote = { over_cap: overCap, cap, quiet: quiet && deliveries.length > 0 };
  return note;
}
