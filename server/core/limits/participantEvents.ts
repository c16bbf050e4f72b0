import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../../schema/errors.ts';

/**
 * Per-participant limits counted in the store (table `participant_events`), so every instance counts
 * alike: linking's tries and guesses, exports. A kind is any short name the caller chooses.
 */
const CountedRow = z.object({ n: z.number(), oldest: z.number().nullable() });

/** How many times `participantId` did `kind` within `windowMs`, and when the oldest of them was. */
export async function countedEvents(conn: CommonQueryMethods, participantId: string, kind: string, windowMs: number) {
  return conn.one(sql.type(CountedRow)`
    SELECT count(*) AS n, min(at) AS oldest FROM participant_events
    WHERE participant_id = ${participantId} AND kind = ${kind} AND at > now() - make_interval(secs => ${windowMs / 1000})`);
}

export async function recordEvent(conn: CommonQueryMethods, participantId: string, kind: string) {
  await conn.query(sql.unsafe`INSERT INTO participant_events (participant_id, kind) VALUES (${participantId}, ${kind})`);
}

/**
 * Refuses with `rate_limited` (and when to come back) once `kind` was done `limit` times in the
 * window; otherwise records one more. In a write's transaction, a refused call records nothing.
 */
export async function spendEvent(conn: CommonQueryMethods, participantId: string, kind: string, limit: number, windowMs: number, what: string) {
  const { n, oldest } = await countedEvents(conn, participantId, kind, windowMs);
  if (n >= limit) {
    const retry = Math.max(1, Math.ceil(((oldest ?? Date.now()) + windowMs - Date.now()) / 1000));
    throw new AppError('rate_limited', `${what} Try again in ${retry} seconds.`, { retry_after_seconds: retry });
  }
  await recordEvent(conn, participantId, kind);
}
