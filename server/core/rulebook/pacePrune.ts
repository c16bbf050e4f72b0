import { sql } from 'slonik';
import { z } from 'zod';
import { COOLDOWN } from '../limits/paceCooldown.ts';
import { LONGEST_WINDOW_MS } from '../limits/paceRules.ts';
import type { TransactionRule } from './rule.ts';

const CountRow = z.object({ marks: z.number(), refusals: z.number(), cooldowns: z.number() });

/**
 * Drops what no limit reads any more (a window's rows are otherwise dropped only when that window
 * is next counted, and many, such as a same text's, never are): pace rows past the longest window
 * (a key's ring once its newest mark is), refusals past the cooldown's 10 minutes, cooldowns that
 * ended. Agent-only runs stay until a person posts. Idempotent; answers how many rows went.
 */
export const pacePrune: TransactionRule = {
  name: 'pace_prune',
  async apply(tx, now) {
    const at = now.getTime();
    const gone = await tx.one(sql.type(CountRow)`
      WITH marks AS (DELETE FROM pace_marks WHERE at <= ${at - LONGEST_WINDOW_MS} RETURNING 1),
        rings AS (DELETE FROM pace_rings g WHERE NOT EXISTS (SELECT 1 FROM unnest(g.marks) AS m(at) WHERE m.at > ${at - LONGEST_WINDOW_MS}) RETURNING 1),
        refusals AS (DELETE FROM pace_refusals WHERE at <= ${at - COOLDOWN.windowMs} RETURNING 1),
        cooldowns AS (DELETE FROM pace_cooldowns WHERE until <= ${at} RETURNING 1)
      SELECT (SELECT count(*) FROM marks) + (SELECT count(*) FROM rings) AS marks, (SELECT count(*) FROM refusals) AS refusals, (SELECT count(*) FROM cooldowns) AS cooldowns`);
    return { ids: [], rows: gone.marks + gone.refusals + gone.cooldowns };
  },
};
