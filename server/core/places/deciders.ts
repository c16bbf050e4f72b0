import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const IdRow = z.object({ id: z.string() });

/**
 * The owner and helpers of a hub, who decide on what is asked of it (join requests, reports, edit
 * wars, suggestions waiting for a check): ids in a stable order, for inbox deliveries.
 */
export async function ownersAndHelpers(conn: CommonQueryMethods, hubId: string): Promise<readonly string[]> {
  return conn.anyFirst(sql.type(IdRow)`
    SELECT participant_id AS id FROM hub_members WHERE hub_id = ${hubId} AND role IN ('owner', 'helper') ORDER BY participant_id`);
}
