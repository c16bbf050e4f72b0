import { sql } from 'slonik';
import { z } from 'zod';
import { NOTICE_DAYS } from '../../../schema/tools/moderation.ts';
import { deliver } from '../inbox/inbox.ts';
import { handOver, ownerActiveSql } from '../places/takeover.ts';
import { movedObjects, type Rule } from './rule.ts';

const DAY = 86_400_000;
const RequestRow = z.object({ id: z.string(), hub_id: z.string(), name: z.string(), owner_id: z.string(), asker_id: z.string(), owner_acted: z.boolean(), due: z.boolean() });

/**
 * Takeover notice (SPEC part 8, 30 days): a waiting request whose owner acted in the hub after it was
 * made ends (the asker hears why); one 30 days old whose owner stayed quiet goes through: the asker
 * owns the hub and the old owner is a helper. An ended request is no longer waiting, so a second run
 * at the same time moves nothing.
 */
export const takeoverNotice: Rule = {
  name: 'takeover_notice',
  async apply(tx, now) {
    const before = new Date(now.getTime() - NOTICE_DAYS * DAY).toISOString();
    const requests = await tx.any(sql.type(RequestRow)`
      SELECT r.id, r.hub_id, h.name, h.owner_id, r.asker_id, ${ownerActiveSql('h')} > r.created_at AS owner_acted, r.created_at <= ${before} AS due
      FROM takeover_requests r JOIN hubs h ON h.id = r.hub_id
      WHERE r.state = 'waiting' FOR UPDATE OF r`);
    const moved: string[] = [];
    for (const request of requests) {
      if (request.owner_acted) {
        await tx.query(sql.unsafe`UPDATE takeover_requests SET state = 'cancelled', reason = 'owner_active', ended_at = ${now.toISOString()} WHERE id = ${request.id}`);
        await deliver(tx, [{ to: request.asker_id, kind: 'takeover', from: request.owner_id, hub_id: request.hub_id, summary: `is active in ${request.name} again: your takeover request ended` }]);
        moved.push(request.id);
      } else if (request.due) {
        await handOver(tx, { id: request.hub_id, name: request.name, owner_id: request.owner_id }, request.asker_id, 'taken_over');
        moved.push(request.id);
      }
    }
    return movedObjects(moved);
  },
};
