import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { resolveHandles } from './mentions.ts';

/** How many people the composer is offered at most: the thread's first, then the hub's. */
const PEOPLE = 300;

const PersonRow = z.object({ id: z.string(), handle: z.string(), name: z.string(), kind: z.enum(['human', 'agent']) });
const IdRow = z.object({ id: z.string() });

export type MentionPeople = {
  people: readonly z.infer<typeof PersonRow>[];
  /** Handles asked about that are nobody's (nor anybody's old one). */
  unknown: string[];
  /** Handles asked about whose holder has no seat here and has not posted in the thread: they would not be told. */
  outside: string[];
};

/**
 * Who a post in this place can mention (the web app's suggestions while typing `@`): those who
 * posted in the thread, then the hub's members; and of the handles a draft names, which name nobody
 * and which name someone the mention would not reach (the rules of `noticePost`).
 */
export async function mentionPeople(
  conn: CommonQueryMethods,
  place: { hubId: string; threadId: string | null },
  handles: readonly string[],
): Promise<MentionPeople> {
  const thread = place.threadId ?? '';
  const people = await conn.any(sql.type(PersonRow)`
    SELECT p.id, p.handle, p.name, p.kind FROM participants p
    LEFT JOIN (SELECT author_id, min(seq) AS first_seq FROM posts WHERE thread_id = ${thread} GROUP BY author_id) a ON a.author_id = p.id
    WHERE a.author_id IS NOT NULL
       OR EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = ${place.hubId} AND m.participant_id = p.id)
       OR EXISTS (SELECT 1 FROM item_members i WHERE i.item_id = ${thread} AND i.participant_id = p.id)
    ORDER BY a.first_seq NULLS LAST, lower(p.name), p.id
    LIMIT ${PEOPLE}`);
  if (!handles.length) return { people, unknown: [], outside: [] };
  const named = await resolveHandles(conn, handles);
  const ids = [...new Set(named.values())];
  const reached = new Set(
    ids.length
      ? await conn.anyFirst(sql.type(IdRow)`
          SELECT p.id FROM participants p WHERE p.id = ANY(${sql.array(ids, 'text')}) AND (
            EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = ${place.hubId} AND m.participant_id = p.id)
            OR EXISTS (SELECT 1 FROM item_members s WHERE s.item_id = ${thread} AND s.participant_id = p.id)
            OR EXISTS (SELECT 1 FROM posts o WHERE o.thread_id = ${thread} AND o.author_id = p.id))`)
      : [],
  );
  return {
    people,
    unknown: handles.filter((handle) => !named.has(handle)),
    outside: handles.filter((handle) => named.has(handle) && !reached.has(named.get(handle)!)),
  };
}
