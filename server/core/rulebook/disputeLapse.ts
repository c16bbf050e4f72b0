import { sql } from 'slonik';
import { z } from 'zod';
import { HOUR, movedObjects, type TransactionRule } from './rule.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

export const LAPSE_DAYS = 14;

/**
 * Dispute lapse (SPEC part 3 "Flag (dispute) on a pad section"): an open flag whose thread saw no
 * activity for 14 days becomes `unresolved`, and the thread's version rises so its ETag and waits
 * move. The thread's last activity is its `updated_at` (posts, answers, tasks, decisions and
 * moderation all set it); the lapse itself is no activity, so it leaves that time as it was. A flag it
 * moved is no longer open, so a second run at the same time moves nothing.
 */
export const disputeLapse: TransactionRule = {
  name: 'dispute_lapse',
  async apply(tx, now) {
    const before = new Date(now.getTime() - LAPSE_DAYS * 24 * HOUR).toISOString();
    const moved = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      UPDATE threads SET flag = 'unresolved', flag_moved_at = ${now.toISOString()}, flag_moved_by = NULL, version = version + 1
      WHERE flag = 'open' AND updated_at < ${before}
      RETURNING id`);
    threadsMoved(tx, ...moved);
    return movedObjects(moved);
  },
};
