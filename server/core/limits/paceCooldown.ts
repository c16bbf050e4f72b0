import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError } from '../../../schema/errors.ts';
import { deliver } from '../inbox/inbox.ts';
import { forgetFacts, secondsUntil } from '../kernel/pace.ts';
import { lockKeys } from './paceWindows.ts';

/**
 * The cooldown (SPEC part 8): an automated writer (an agent, with its sub-agents) refused for pace 15
 * times in 10 minutes becomes read-only for 15 minutes. Only refusals of its own windows count, not
 * a pool it shares. Its human is told once, in the inbox (kind `cooldown`). People are never put in
 * cooldown: a human's own clicks still work while their agent waits.
 */
export const COOLDOWN = { refusals: 15, windowMs: 10 * 60_000, lastsMs: 15 * 60_000 } as const;

const UntilRow = z.object({ until: z.number() });
const CountRow = z.object({ n: z.number() });

export function cooldownRefusal(until: number, now: number): AppError {
  const retry = secondsUntil(until, now);
  const at = new Date(until).toISOString();
  return new AppError(
    'rate_limited',
    `This agent was refused for pace ${COOLDOWN.refusals} times in 10 minutes, so it is read-only for 15 minutes. You can write again at ${at} (in ${retry} s). Reading still works: wait_for_changes answers when something changes.`,
    { limit: 'cooldown', retry_after_seconds: retry, retryAfterSeconds: retry, retry_at: at, cooldownUntil: at },
  );
}

const CoolingRow = z.object({ id: z.string(), until: z.number() });

/** A person's agents in a cooldown now, with when each ends (ISO): Settings shows them. */
export async function coolingAgentsOf(conn: CommonQueryMethods, human: string, now: number): Promise<{ id: string; until: string }[]> {
  const rows = await conn.any(sql.type(CoolingRow)`
    SELECT c.participant_id AS id, c.until FROM pace_cooldowns c JOIN participants p ON p.id = c.participant_id
    WHERE p.linked_human = ${human} AND c.until > ${now} ORDER BY c.participant_id`);
  return rows.map((row) => ({ id: row.id, until: new Date(row.until).toISOString() }));
}

/**
 * Counts one pace refusal of an agent's own window (in its own transaction: the refused write rolled
 * back). The 15th within 10 minutes starts the cooldown and tells its human; the answer is then the
 * cooldown's refusal, else null.
 */
export async function noteRefusal(core: Core, actor: Actor): Promise<AppError | null> {
  if (actor.kind !== 'agent') return null;
  // The refusal is the answer whatever happens here: a crowded database only leaves it uncounted.
  return countRefusal(core, actor).catch((error: unknown) => {
    core.log.warn('pace refusal not counted', { error });
    return null;
  });
}

async function countRefusal(core: Core, actor: Actor): Promise<AppError | null> {
  const now = core.pace.now();
  // A cooldown this starts holds the agent's next write: its kept facts (limits.ts) are read again.
  forgetFacts(core, actor.id);
  return core.db.write(async (tx) => {
    await lockKeys(tx, [`cooldown ${actor.id}`]);
    await tx.query(sql.unsafe`
      WITH gone AS (DELETE FROM pace_refusals WHERE participant_id = ${actor.id} AND at <= ${now - COOLDOWN.windowMs})
      INSERT INTO pace_refusals (participant_id, at) VALUES (${actor.id}, ${now})`);
    const n = await tx.oneFirst(sql.type(CountRow)`
      SELECT count(*) AS n FROM pace_refusals WHERE participant_id = ${actor.id} AND at > ${now - COOLDOWN.windowMs}`);
    if (n < COOLDOWN.refusals) return null;
    const until = now + COOLDOWN.lastsMs;
    const started = await tx.maybeOneFirst(sql.type(UntilRow)`
      INSERT INTO pace_cooldowns (participant_id, since, until) VALUES (${actor.id}, ${now}, ${until})
      ON CONFLICT (participant_id) DO UPDATE SET since = EXCLUDED.since, until = EXCLUDED.until WHERE pace_cooldowns.until <= ${now}
      RETURNING until`);
    if (started === null) return null;
    // The refusals that led here are spent: after the cooldown the agent starts afresh.
    await tx.query(sql.unsafe`DELETE FROM pace_refusals WHERE participant_id = ${actor.id}`);
    if (actor.human !== null) {
      await deliver(tx, [
        {
          to: actor.human,
          kind: 'cooldown',
          from: actor.id,
          summary: `${actor.handle} was refused for pace ${COOLDOWN.refusals} times in 10 minutes and is read-only until ${new Date(until).toISOString()}.`,
        },
      ]);
    }
    return cooldownRefusal(until, now);
  });
}
