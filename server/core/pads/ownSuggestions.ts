import { z } from 'zod';
import { sql, type CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import { SuggestionState } from '../../../schema/rows.ts';

/** How many of a person's suggestions to one pad the pad page follows. */
const SHOWN = 20;

const OwnSuggestionRow = z.object({
  id: z.string(),
  state: SuggestionState,
  base_version: z.number(),
  created_at: z.number(),
  note: z.string().nullable(),
  accepted_version: z.number().nullable(),
});
export type OwnSuggestion = z.infer<typeof OwnSuggestionRow>;

/**
 * The actor's latest suggestions to a pad they may read, newest first, each with what its check made
 * of it: the pad page shows a person what became of what they suggested (issue 24 item 7).
 */
export async function ownSuggestions(conn: CommonQueryMethods, actor: Actor, padId: string): Promise<readonly OwnSuggestion[]> {
  return conn.any(sql.type(OwnSuggestionRow)`
    SELECT id, state, base_version, floor(extract(epoch FROM created_at) * 1000) AS created_at, note, accepted_version
    FROM suggestions WHERE pad_id = ${padId} AND author_id = ${actor.id}
    ORDER BY created_at DESC, id DESC LIMIT ${SHOWN}`);
}
