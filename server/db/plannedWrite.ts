import type { DatabaseTransactionConnection } from 'slonik';

/**
 * What the tool pipeline writes beside a write the core commits itself (a live pad's version, a new
 * pad or thread): the call's limits counted and its idempotency record stored, in that write's own
 * transaction, once the core knows what the call answers. The layer that opens the transaction calls
 * `commit` in it after its own statements; a throw rolls all of it back. A write with nothing beside
 * it gets no hook, so the pad layer may commit its version in one statement.
 */
export type PlannedWrite<Answer> = {
  commit(tx: DatabaseTransactionConnection, answer: Answer): Promise<void>;
};

/** The hook for a layer below that answers in its own terms: `as` turns its answer into the caller's. */
export function answering<Inner, Answer>(write: PlannedWrite<Answer> | undefined, as: (inner: Inner) => Answer): PlannedWrite<Inner> | undefined {
  return write && { commit: (tx, inner) => write.commit(tx, as(inner)) };
}
