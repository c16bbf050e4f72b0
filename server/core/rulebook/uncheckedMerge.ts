import { sql } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../../schema/errors.ts';
import { applySuggestion } from '../checked/acceptance.ts';
import { HOUR, movedObjects, type EachRule } from './rule.ts';

/** SPEC part 8 "Rulebook timers": a small suggestion nobody checked goes in after 24 hours. */
export const UNCHECKED_HOURS = 24;
/** The most suggestions one run takes in; the rest wait for the next run, 10 minutes on. */
const PER_RUN = 200;

const NOTE = 'Went in after 24 hours without a check.';

/**
 * Checked-hub unchecked merge (SPEC part 3): a small suggestion (under 30% of each section changed,
 * no new heading, no link removed, judged when it was made) still waiting 24 hours after it was made
 * in a Checked hub goes into the pad through `applySuggestion` as `merged_unchecked`, which marks its
 * sections `unchecked`. Large ones keep waiting for someone to check them. Each suggestion moves in a
 * transaction of its own, and only while it is still waiting (the state change is conditional), so
 * two runs at once, on one instance or two, take it in once. One that clashes with the pad as it now
 * is (someone changed its blocks since its base) stays waiting, for a person to decide.
 */
export const uncheckedMerge: EachRule = {
  name: 'unchecked_merge',
  async run(core, now) {
    const before = new Date(now.getTime() - UNCHECKED_HOURS * HOUR).toISOString();
    const due = await core.db.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT s.id FROM suggestions s JOIN hubs h ON h.id = s.hub_id
      WHERE s.state = 'waiting' AND s.small AND s.created_at <= ${before} AND h.mode = 'checked'
      ORDER BY s.created_at LIMIT ${PER_RUN}`);
    const moved: string[] = [];
    for (const id of due) {
      try {
        await applySuggestion(core, null, id, { state: 'merged_unchecked', note: NOTE });
        moved.push(id);
      } catch (error) {
        // Decided by another run or a person meanwhile, or clashing with the pad: it stays as it is.
        // Anything else is logged, and the rest still go in.
        if (error instanceof AppError && error.code === 'conflict') core.log.info('unchecked merge left a suggestion waiting', { suggestion: id, reason: error.message });
        else core.log.error('unchecked merge failed', { suggestion: id, error });
      }
    }
    return movedObjects(moved);
  },
};
