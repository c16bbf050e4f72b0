import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { secondsUntil } from './pace.ts';
import type { Rule } from './paceRules.ts';

/**
 * Rolling windows kept in Postgres (table `pace_marks`): one row per admitted write in each window it
 * counts in. A write takes the lock of each of its windows, in one order everywhere, then looks and
 * records in its own transaction: of 2N writes racing for N places, on any number of instances,
 * exactly N get in, and a write that rolls back takes its rows with it.
 */

/** `429 rate_limited`: which limit ran out and when it frees one place. */
export class PaceRefused extends AppError {
  /** The caller's own window ran out (not a pool others share): it counts toward the cooldown. */
  readonly own: boolean;
  constructor(rule: Pick<Rule, 'name' | 'says'>, freeAt: number, now: number, own: boolean) {
    const retry = secondsUntil(freeAt, now);
    const at = new Date(now + retry * 1000).toISOString();
    super('rate_limited', `Slow down: this passes the limit on ${rule.says}. You can write again at ${at} (in ${retry} s).`, {
      limit: rule.name,
      retry_after_seconds: retry,
      retryAfterSeconds: retry,
      retry_at: at,
    });
    this.own = own;
  }
}

const AtRow = z.object({ at: z.number() });
const HereRow = z.object({ here: z.boolean() });

/** When the window of `rule` frees a place, or null while it has room for this write. */
async function fullUntil(conn: CommonQueryMethods, rule: Rule, now: number): Promise<number | null> {
  const since = now - rule.windowMs;
  if (rule.distinct === undefined) {
    // The max-th newest write in the window: while it is in, the window is full.
    const at = await conn.maybeOneFirst(sql.type(AtRow)`
      SELECT at FROM pace_marks WHERE key = ${rule.key} AND at > ${since} ORDER BY at DESC OFFSET ${rule.max - 1} LIMIT 1`);
    return at === null ? null : at + rule.windowMs;
  }
  // Distinct places (threads): one already counted takes no new place.
  const here = await conn.oneFirst(sql.type(HereRow)`
    SELECT EXISTS (SELECT 1 FROM pace_marks WHERE key = ${rule.key} AND at > ${since} AND place = ${rule.distinct}) AS here`);
  if (here) return null;
  const at = await conn.maybeOneFirst(sql.type(AtRow)`
    SELECT max(at) AS at FROM pace_marks WHERE key = ${rule.key} AND at > ${since} GROUP BY place ORDER BY 1 DESC OFFSET ${rule.max - 1} LIMIT 1`);
  return at === null ? null : at + rule.windowMs;
}

/** Refuses when any window is full, naming the one that frees last (when the write would pass them all). */
export async function refuseIfFull(conn: CommonQueryMethods, rules: readonly Rule[], now: number): Promise<void> {
  let last: { rule: Rule; freeAt: number } | null = null;
  let own = false;
  for (const rule of rules) {
    const freeAt = await fullUntil(conn, rule, now);
    if (freeAt === null) continue;
    own ||= !rule.shared;
    if (!last || freeAt > last.freeAt) last = { rule, freeAt };
  }
  if (last) throw new PaceRefused(last.rule, last.freeAt, now, own);
}

/** Takes the locks of these keys until the transaction ends, in one order everywhere (no deadlock between two writes). */
export async function lockKeys(tx: DatabaseTransactionConnection, keys: readonly string[]): Promise<void> {
  if (!keys.length) return;
  await tx.query(sql.unsafe`
    SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) FROM (SELECT DISTINCT unnest(${sql.array([...keys], 'text')}) AS k ORDER BY 1) s`);
}

/** Counts this write in every window, dropping the rows that have left them. */
export async function record(tx: DatabaseTransactionConnection, rules: readonly Rule[], now: number): Promise<void> {
  if (!rules.length) return;
  const keys = rules.map((rule) => rule.key);
  await tx.query(sql.unsafe`
    WITH gone AS (
      DELETE FROM pace_marks m USING unnest(${sql.array(keys, 'text')}, ${sql.array(rules.map((rule) => now - rule.windowMs), 'int8')}) AS u(k, since)
      WHERE m.key = u.k AND m.at <= u.since)
    INSERT INTO pace_marks (key, at, place)
    SELECT k, ${now}::int8, p FROM unnest(${sql.array(keys, 'text')}, ${sql.array(rules.map((rule) => rule.distinct ?? null), 'text')}) AS u(k, p)`);
}
