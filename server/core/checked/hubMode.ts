import { sql, type CommonQueryMethods } from 'slonik';
import type { HubRow } from '../../../schema/rows.ts';
import type { Core } from '../kernel/context.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

export type ModeChange = { hub: HubRow; mode: HubRow['mode']; changed: boolean };

/**
 * set_hub_mode (SPEC part 3 "Hub states"): Open or Checked; the same mode again changes nothing.
 * Grants to edit directly that this instance remembers are forgotten, so a member's next edit is
 * decided on the new mode at once (other instances within the editor cache's few seconds).
 */
export async function setHubMode(core: Core, tx: CommonQueryMethods, hub: HubRow, mode: HubRow['mode']): Promise<ModeChange> {
  if (hub.mode === mode) return { hub, mode, changed: false };
  await tx.query(sql.unsafe`UPDATE hubs SET mode = ${mode}, updated_at = now() WHERE id = ${hub.id}`);
  afterCommit(tx, { reads: 'hubs' });
  core.editors.forget();
  return { hub: { ...hub, mode }, mode, changed: true };
}

/** Whether the participant has a seat in some Checked hub (GET /api/v1/tools lists `verify` to them alone). */
export async function seatedInCheckedHub(core: Core, participantId: string): Promise<boolean> {
  return core.db.pool.exists(sql.unsafe`
    SELECT 1 FROM hub_members m JOIN hubs h ON h.id = m.hub_id AND h.deleted_at IS NULL AND h.mode = 'checked' WHERE m.participant_id = ${participantId}`);
}
