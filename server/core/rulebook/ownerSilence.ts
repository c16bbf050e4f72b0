import { sql } from 'slonik';
import { z } from 'zod';
import { SILENCE_DAYS } from '../../../schema/tools/moderation.ts';
import { deliver } from '../inbox/inbox.ts';
import { ownerActiveSql } from '../places/takeover.ts';
import { movedObjects, type Rule } from './rule.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

const DAY = 86_400_000;
const SilentRow = z.object({ id: z.string(), name: z.string(), owner_id: z.string() });
const HelperRow = z.object({ hub_id: z.string(), participant_id: z.string() });

/**
 * Owner silence (SPEC part 8, 90 days): a hub whose owner did nothing in it for 90 days is marked
 * `owner_silent_since`, and its helpers hear once that they may take it over (take_over_hub). A hub
 * whose owner acted since is unmarked, so a later silence is told again. A marked hub is not marked
 * twice: a second run at the same time moves nothing.
 */
export const ownerSilence: Rule = {
  name: 'owner_silence',
  async apply(tx, now) {
    const before = new Date(now.getTime() - SILENCE_DAYS * DAY).toISOString();
    const back = await tx.query(sql.unsafe`
      UPDATE hubs h SET owner_silent_since = NULL WHERE h.owner_silent_since IS NOT NULL AND ${ownerActiveSql('h')} > h.owner_silent_since - make_interval(days => ${SILENCE_DAYS})`);
    const silent = await tx.any(sql.type(SilentRow)`
      UPDATE hubs h SET owner_silent_since = ${now.toISOString()}
      WHERE h.owner_silent_since IS NULL AND h.deleted_at IS NULL AND ${ownerActiveSql('h')} < ${before}
      RETURNING h.id, h.name, h.owner_id`);
    if (back.rowCount > 0 || silent.length) afterCommit(tx, { reads: 'hubs' });
    if (silent.length) {
      const helpers = await tx.any(sql.type(HelperRow)`
        SELECT hub_id, participant_id FROM hub_members WHERE role = 'helper' AND hub_id = ANY(${sql.array(silent.map((h) => h.id), 'text')})`);
      const byId = new Map(silent.map((h) => [h.id, h]));
      await deliver(
        tx,
        helpers.map((m) => ({
          to: m.participant_id,
          kind: 'takeover' as const,
          from: byId.get(m.hub_id)!.owner_id,
          hub_id: m.hub_id,
          summary: `has been quiet in ${byId.get(m.hub_id)!.name} for ${SILENCE_DAYS} days: as a helper you may take it over (take_over_hub)`,
        })),
      );
    }
    return { ...movedObjects(silent.map((h) => h.id)), rows: silent.length + back.rowCount };
  },
};
