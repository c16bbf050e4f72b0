import type { DatabaseTransactionConnection, FragmentSqlToken } from 'slonik';

/**
 * What the tool pipeline writes beside a write the core commits itself (a live pad's version, a new
 * pad or thread): the call's limits counted and its idempotency record stored, in that write's own
 * transaction, once the core knows what the call answers. The layer that opens the transaction calls
 * `commit` in it after its own statements; a throw rolls all of it back. A write with nothing beside
 * it gets no hook, so the pad layer may commit its version in one statement.
 */
export type PlannedWrite<Answer> = {
  commit(tx: DatabaseTransactionConnection, answer: Answer): Promise<void>;
  /**
   * The same write as one SQL expression, when it can be one (only counting, nothing read back): the
   * layer below that commits in a single statement runs it inside that statement, once, after its own
   * writes and only when they were made, instead of opening a transaction for `commit`. An error of
   * the statement goes through `refusal`, which answers the pipeline's own error for one of its
   * expression's (a window found full), or null. Null when this call's write cannot be inline.
   */
  inline?(answer: Answer): InlineWrite | null;
};

export type InlineWrite = {
  sql: FragmentSqlToken;
  refusal(error: unknown): Error | null;
  /**
   * The same count as plain values, when it is a pace count (`pace_count_or_refuse`, migration 0040):
   * the windows' rules and the time. A layer that writes several such writes by one statement counts
   * them together from these (`pace_count_or_refuse_many`, migration 0045); without them, it writes
   * the write alone, with `sql`.
   */
  windows?: PaceCount;
  /**
   * The write stands only while the pad written has no open flag (an owner's or helper's edit, which
   * settles the flags it fixes): the layer below refuses its statement otherwise (`pad_flags_refuse`,
   * migration 0047) and writes it again in a transaction, through `commit`.
   */
  onlyUnflagged?: boolean;
};

/** One write's rolling windows as `pace_full` takes them (server/core/limits/paceWindows.ts), and the time it counts at. */
export type PaceCount = {
  keys: readonly string[];
  max: readonly number[];
  windowMs: readonly number[];
  place: readonly (string | null)[];
  weight: readonly number[];
  bucketMs: readonly number[];
  at: number;
};

/** The hook for a layer below that answers in its own terms: `as` turns its answer into the caller's. */
export function answering<Inner, Answer>(write: PlannedWrite<Answer> | undefined, as: (inner: Inner) => Answer): PlannedWrite<Inner> | undefined {
  if (!write) return undefined;
  const { inline } = write;
  return { commit: (tx, inner) => write.commit(tx, as(inner)), ...(inline ? { inline: (inner: Inner) => inline(as(inner)) } : {}) };
}
