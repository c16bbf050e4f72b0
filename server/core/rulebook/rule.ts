import type { DatabaseTransactionConnection } from 'slonik';
import type { Core } from '../kernel/context.ts';

export const HOUR = 3_600_000;

/**
 * What a run moved: the ids of the objects it moved (a task opened, a flag lapsed), and how many rows
 * it moved or dropped. A housekeeping rule whose rows nobody names (old pace rows) gives no ids.
 */
export type Moved = { ids: readonly string[]; rows: number };

/** A run that moved these objects, a row each. */
export const movedObjects = (ids: readonly string[]): Moved => ({ ids, rows: ids.length });

/**
 * One rule of the rulebook (SPEC part 8 "Rulebook timers"): SQL that moves what is due at `now` (the
 * clock, injected by tests) and returns what it moved: the ids of the objects, and how many rows. Idempotent: a second run at the
 * same `now` finds nothing due and moves nothing. Run only through `runRule`, which holds the rule's
 * lock and records the run.
 */
export type Rule = TransactionRule | EachRule;

export type TransactionRule = {
  /** Stable: the key of the rule's lock, and its name in `rule_runs` and in /internal/prune's answer. */
  name: string;
  apply(tx: DatabaseTransactionConnection, now: Date): Promise<Moved>;
};

/**
 * A rule whose every object moves in a transaction of its own, through a core flow that writes more
 * than rows (a suggestion going into the live pad). No lock is held around the run: each object's
 * own state change is its guard, so two runs at once (two instances) move it once, and one that fails
 * leaves the others moved.
 */
export type EachRule = {
  name: string;
  run(core: Core, now: Date): Promise<Moved>;
};
