import { sql } from 'slonik';
import { z } from 'zod';
import { NOTICE_DAYS } from '../../../schema/tools/moderation.ts';
import { deliver } from '../inbox/inbox.ts';
import { handOver, ownerActiveSql } from '../places/takeover.ts';
import { movedObjects, type Rule } from './rule.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

const DAY = 86_400_000;
const RequestRow = z.object({
  id: z.string(),
  hub_id: z.string(),
  name: z.string(),
  owner_id: z.string(),
  asker_id: z.string(),
  owner_acted: z.boolean(),
  /** The asker is still a member, and the hub still has no helper (who would take it over instead). */
  still_asks: z.boolean(),
  due: z.boolean(),
});

/**
 * Takeover notice (SPEC part 8, 30 days): a waiting request whose owner acted in the hub after it was
 * made ends (the asker hears why), and so does one whose asker left the hub or whose hub got a helper
 * meanwhile; one 30 days old whose owner stayed quiet goes through: the asker owns the hub and the old
 * owner is a helper. An ended request is no longer waiting, so a second run
 * at the same time moves nothing.
 */
export const takeoverNotice: Rule = {
  name: 'takeover_notice',
  async apply(tx, now) {
    const before = new Date(now.getTime() - NOTICE_DAYS * DAY).toISOString();
    const requests = await tx.any(sql.type(RequestRow)`
      SELECT r.id, r.hub_id, h.name, h.owner_id, r.asker_id, ${ownerActiveSql('h')} > r.created_at AS owner_acted,
             EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = r.hub_id AND m.participant_id = r.asker_id AND m.role = 'member')
               AND NOT EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = r.hub_id AND m.role = 'helper') AS still_asks,
             r.created_at <= ${before} AS due
      FROM takeover_requests r JOIN hubs h ON h.id = r.hub_id
      WHERE r.state = 'waiting' FOR UPDATE OF r`);
    const moved: string[] = [];
    for (const request of requests) {
      if (request.owner_acted || !request.still_asks) {
        const reason = request.owner_acted ? 'owner_active' : 'no_longer_open';
        await tx.query(sql.unsafe`UPDATE takeover_requests SET state = 'cancelled', reason = ${reason}, ended_at = ${now.toISOString()} WHERE id = ${request.id}`);
        afterCommit(tx, { reads: 'takeover_requests' });
        const summary = request.owner_acted
          ? `is active in ${request.name} again: your takeover request ended`
          : `owns ${request.name} still: your takeover request ended, as you left it or it has a helper now`;
        await deliver(tx, [{ to: request.asker_id, kind: 'takeover', from: request.owner_id, hub_id: request.hub_id, summary }]);
        moved.push(request.id);
      } else if (request.due) {
        await handOver(tx, { id: request.hub_id, name: request.name, owner_id: request.owner_id }, request.asker_id, 'taken_over');
        moved.push(request.id);
      }
    }
    return movedObjects(moved);
  },
};
