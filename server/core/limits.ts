import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { Actor } from './actor.ts';

/**
 * The limits slot of the tool pipeline: every counted write passes through here, decided from the
 * Actor alone. Today it holds the daily allowance of unlinked agents (SPEC parts 1 and 8); the pace
 * limits join it later on the same two calls, `check` before any work and `admit` inside the write's
 * own transaction.
 */
export type Limit = 'write';

export const DAILY_WRITES = 20;
const WINDOW_MS = 24 * 3_600_000;

/** What a counted write reports back (SPEC part 2 "Allowance object"). */
export type Allowance = { used: number; limit: number; remaining: number; per: 'day'; resets_at: string };

/** Thrown when a pool is full: the pipeline answers HTTP 200 with `limit_reached`, nothing saved. */
export class LimitReached extends Error {
  readonly allowance: Allowance;
  constructor(allowance: Allowance) {
    super('limit reached');
    this.allowance = allowance;
  }
}

/**
 * The pool a write counts in, or null when it has no daily count: an agent nobody linked counts in its
 * own pool (its sub-agents will join it); people and linked agents have none.
 */
export function allowancePool(actor: Actor): string | null {
  // A guest person without a verified email counts like an unlinked agent (SPEC part 8).
  if (actor.guest) return `guest:${actor.id}`;
  return actor.kind === 'agent' && actor.human === null ? `agent:${actor.id}` : null;
}

const PoolRow = z.object({ used: z.number(), oldest: z.number().nullable() });

async function usage(conn: CommonQueryMethods, pool: string) {
  return conn.one(sql.type(PoolRow)`
    SELECT count(*) AS used, min(at) AS oldest FROM counted_writes
    WHERE pool = ${pool} AND at > now() - interval '1 day'`);
}

function allowanceOf(used: number, oldest: number | null): Allowance {
  // The window frees up one write when its oldest counted write is a day old.
  const resets = oldest === null ? Date.now() + WINDOW_MS : oldest + WINDOW_MS;
  return { used, limit: DAILY_WRITES, remaining: Math.max(0, DAILY_WRITES - used), per: 'day', resets_at: new Date(resets).toISOString() };
}

/**
 * A look before any work is done (no lock): a full pool is refused before, say, an edit goes live.
 * `admit` decides for certain.
 */
export async function check(conn: CommonQueryMethods, actor: Actor, limit: Limit | null): Promise<void> {
  const pool = limit && allowancePool(actor);
  if (!pool) return;
  const { used, oldest } = await usage(conn, pool);
  if (used >= DAILY_WRITES) throw new LimitReached(allowanceOf(used, oldest));
}

/**
 * Counts one write in the caller's transaction, or throws LimitReached. The pool is locked for the
 * rest of the transaction, so of 2N concurrent writes into a pool with N left exactly N are admitted,
 * across every instance; a write that rolls back takes its count with it.
 */
export async function admit(tx: DatabaseTransactionConnection, actor: Actor, limit: Limit | null, tool: string): Promise<Allowance | null> {
  const pool = limit && allowancePool(actor);
  if (!pool) return null;
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`limits ${pool}`}, 0))`);
  await tx.query(sql.unsafe`DELETE FROM counted_writes WHERE pool = ${pool} AND at <= now() - interval '1 day'`);
  const { used, oldest } = await usage(tx, pool);
  if (used >= DAILY_WRITES) throw new LimitReached(allowanceOf(used, oldest));
  await tx.query(sql.unsafe`INSERT INTO counted_writes (pool, participant_id, tool) VALUES (${pool}, ${actor.id}, ${tool})`);
  return allowanceOf(used + 1, oldest ?? Date.now());
}
