import type { DatabaseTransactionConnection } from 'slonik';

export const HOUR = 3_600_000;

/**
 * One rule of the rulebook (SPEC part 8 "Rulebook timers"): SQL that moves what is due at `now` (the
 * clock, injected by tests) and returns the ids of what it moved. Idempotent: a second run at the
 * same `now` finds nothing due and moves nothing. Run only through `runRule`, which holds the rule's
 * lock and records the run.
 */
export type Rule = {
  /** Stable: the key of the rule's lock, and its name in `rule_runs` and in /internal/prune's answer. */
  name: string;
  apply(tx: DatabaseTransactionConnection, now: Date): Promise<string[]>;
};
