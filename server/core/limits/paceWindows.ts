import { sql, type CommonQueryMethods, type DatabaseTransactionConnection, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../../schema/errors.ts';
import { secondsUntil } from '../kernel/pace.ts';
import type { Rule } from './paceRules.ts';
import type { PaceCount } from '../../db/plannedWrite.ts';

/**
 * Rolling windows kept in Postgres: a window of at most 128 writes keeps its key's newest marks in one
 * row (`pace_rings`, a slot overwritten per write); others a row per admitted write (`pace_marks`), or
 * per minute for a window of amounts. A write takes the lock of each of its windows, in one order
 * everywhere, then looks and records in its own transaction, all in one call of `pace_windows`
 * (migrations 0022 and 0039): of 2N writes racing for N places, on any number of instances, exactly N
 * get in, and a write that rolls back takes its marks with it.
 */

/** `429 rate_limited`: which limit ran out and when it frees one place. */
export class PaceRefused extends AppError {
  /** The caller's own window ran out (not a pool others share): it counts toward the cooldown. */
  readonly own: boolean;
  /** Every window found full, with when it frees a place (epoch ms): remembered until then (limits.ts). */
  readonly full: readonly { key: string; freeAt: number }[];
  constructor(rule: Pick<Rule, 'name' | 'says'>, freeAt: number, now: number, own: boolean, full: readonly { key: string; freeAt: number }[] = []) {
    const retry = secondsUntil(freeAt, now);
    const at = new Date(now + retry * 1000).toISOString();
    super('rate_limited', `Slow down: this passes the limit on ${rule.says}. You can write again at ${at} (in ${retry} s).`, {
      limit: rule.name,
      retry_after_seconds: retry,
      retryAfterSeconds: retry,
      retry_at: at,
    });
    this.own = own;
    this.full = full;
  }
}

/**
 * The refusal of a write whose windows `full` are full, each with when it frees a place: it names the
 * one that frees last (when the write would pass them all). Null when none is.
 */
export function refusalOf(full: readonly { rule: Rule; freeAt: number }[], now: number): PaceRefused | null {
  let last: { rule: Rule; freeAt: number } | null = null;
  let own = false;
  for (const entry of full) {
    own ||= !entry.rule.shared;
    if (!last || entry.freeAt > last.freeAt) last = entry;
  }
  return last && new PaceRefused(last.rule, last.freeAt, now, own, full.map(({ rule, freeAt }) => ({ key: rule.key, freeAt })));
}

const FullRow = z.object({ i: z.number(), free_at: z.number() });

/**
 * Takes the locks of `locks` and of every window of these rules, looks at each window and records the
 * write in each when none is full (or, with `always`, whatever they hold), in one call (`pace_windows`,
 * migrations 0039 and 0043). Answers the windows that are full (1-based index into `rules`) and when
 * each frees the place.
 */
function lookAndCount(conn: CommonQueryMethods, rules: readonly Rule[], now: number, counting: { locks: readonly string[]; always?: boolean }) {
  return conn.any(sql.type(FullRow)`
    SELECT i, free_at FROM pace_windows(${windowArguments(counting.locks, paceCountOf(rules, now))}, true, ${counting.always === true})`);
}

/** The rules and the time as plain lists, as `pace_windows`, `pace_count_or_refuse` and `pace_count_or_refuse_many` take them. */
const paceCountOf = (rules: readonly Rule[], now: number): PaceCount => ({
  keys: rules.map((rule) => rule.key),
  max: rules.map((rule) => rule.max),
  windowMs: rules.map((rule) => rule.windowMs),
  place: rules.map((rule) => rule.distinct ?? null),
  weight: rules.map((rule) => rule.weight ?? 1),
  bucketMs: rules.map((rule) => rule.bucketMs ?? 0),
  at: now,
});

/** The locks, the rules and the time as `pace_windows` and `pace_count_or_refuse` take them. */
const windowArguments = (locks: readonly string[], count: PaceCount) => sql.fragment`
      ${sql.array([...locks], 'text')},
      ${sql.array([...count.keys], 'text')},
      ${sql.array([...count.max], 'int8')},
      ${sql.array([...count.windowMs], 'int8')},
      ${sql.array([...count.place], 'text')},
      ${sql.array([...count.weight], 'int8')},
      ${sql.array([...count.bucketMs], 'int8')},
      ${count.at}::int8`;

/** pace_count_or_refuse's error (migration 0040): a window was full; its detail, the full windows as [[i, free_at], ...]. */
const INLINE_REFUSED = 'DP429';

/**
 * `countIn` as one SQL expression inside another statement (`pace_count_or_refuse`, migration 0040):
 * the windows locked, looked at and counted, and the whole statement failed when one is full.
 * `refused` turns that failure into the PaceRefused `countIn` would throw, or null for another error.
 */
export function countInline(rules: readonly Rule[], now: number): { sql: FragmentSqlToken; windows: PaceCount; refused(error: unknown): PaceRefused | null } {
  const windows = paceCountOf(rules, now);
  return {
    // Built when asked for: a write counted with others by one statement uses `windows` alone.
    get sql() {
      return sql.fragment`pace_count_or_refuse(${windowArguments([], windows)})`;
    },
    windows,
    refused(error) {
      const failed = error as { code?: unknown; detail?: unknown } | null;
      if (failed?.code !== INLINE_REFUSED || typeof failed.detail !== 'string') return null;
      return refusalOf((JSON.parse(failed.detail) as [number, number][]).map(([i, freeAt]) => ({ rule: rules[i - 1]!, freeAt })), now);
    },
  };
}

/**
 * One write's windows, through `lookAndCount`: refuses when any is full, naming the one that frees
 * last (when the write would pass them all).
 */
async function windows(conn: CommonQueryMethods, rules: readonly Rule[], now: number, counting: { locks: readonly string[]; always?: boolean }): Promise<void> {
  const full = await lookAndCount(conn, rules, now, counting);
  const refused = refusalOf(full.map(({ i, free_at: freeAt }) => ({ rule: rules[i - 1]!, freeAt })), now);
  if (refused) throw refused;
}

/**
 * Takes the locks of `locks` and of every window until the transaction ends, refuses when any window
 * is full, and otherwise counts this write in every window, dropping the marks that have left them.
 */
export const countIn = (tx: DatabaseTransactionConnection, rules: readonly Rule[], now: number, locks: readonly string[]) => windows(tx, rules, now, { locks });

/**
 * Counts what was done already (text typed live is in the pad before it is counted) in every window,
 * under their locks; then refuses, as `countIn` would have, when a window is now past its max, so the
 * caller can stop the writer until the time the refusal names.
 */
export const countDone = (tx: DatabaseTransactionConnection, rules: readonly Rule[], now: number) => windows(tx, rules, now, { locks: [], always: true });

/**
 * Counts what many were done already, each in its own windows (no two rules on one key), in one call;
 * answers, for each rule whose window is now past its max, the time (epoch ms, on the whole second a
 * refusal names) it frees room, by index into `rules`.
 */
export async function countEachDone(tx: DatabaseTransactionConnection, rules: readonly Rule[], now: number): Promise<Map<number, number>> {
  const full = rules.length ? await lookAndCount(tx, rules, now, { locks: [], always: true }) : [];
  return new Map(full.map(({ i, free_at: freeAt }) => [i - 1, now + secondsUntil(freeAt, now) * 1000]));
}

/** Takes the locks of these keys until the transaction ends, in one order everywhere (no deadlock between two writes). */
export async function lockKeys(tx: DatabaseTransactionConnection, keys: readonly string[]): Promise<void> {
  if (!keys.length) return;
  await tx.query(sql.unsafe`
    SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) FROM (SELECT DISTINCT unnest(${sql.array([...keys], 'text')}) AS k ORDER BY 1) s`);
}
