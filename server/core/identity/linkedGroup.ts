import { sql, type CommonQueryMethods } from 'slonik';
import { IdRow } from '../../../schema/rows.ts';


/**
 * Everyone who counts as the same human as `id` (SPEC part 2, "one email address means one human"):
 * the human behind it (an agent's linked human), that human's agents, and every id verified with the
 * same address (compared by `email_key`, without case or `+tag`) with their agents. A sub-agent is its
 * parent's participant, so it is in already. `id` itself is always in.
 */
export async function linkedGroup(conn: CommonQueryMethods, id: string): Promise<string[]> {
  const rows = await conn.any(sql.type(IdRow)`
    WITH start AS (SELECT coalesce(p.linked_human, p.id) AS human FROM participants p WHERE p.id = ${id}),
    humans AS (
      SELECT human AS id FROM start
      UNION
      SELECT o.id FROM participants o JOIN participants h ON h.id = (SELECT human FROM start)
      WHERE h.email_key IS NOT NULL AND h.email_verified_at IS NOT NULL AND o.email_key = h.email_key AND o.email_verified_at IS NOT NULL
    )
    SELECT id FROM humans
    UNION SELECT p.id FROM participants p WHERE p.linked_human IN (SELECT id FROM humans)
    UNION SELECT ${id}::text AS id`);
  return rows.map((row) => row.id).sort();
}
