import { pacePrune } from './pacePrune.ts';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Core } from '../kernel/context.ts';
import { disputeLapse } from './disputeLapse.ts';
import { editWar } from './editWar.ts';
import { uncheckedMerge } from './uncheckedMerge.ts';
import { idleTask } from './idleTask.ts';
import { ownerSilence } from './ownerSilence.ts';
import { takeoverNotice } from './takeoverNotice.ts';
import type { Rule } from './rule.ts';

/**
 * The rulebook's timers (SPEC part 8 "Rulebook timers"). Each rule is idempotent SQL judged by a
 * clock handed in (tests inject theirs), run by `/internal/prune` and by every instance's in-process
 * timer every 10 minutes: the spec lets a rule land up to an hour late. A run holds the rule's
 * transaction-scoped advisory lock; a run that finds it taken (another instance's timer, or another
 * prune, is running the rule) is skipped, and a run after that one finds nothing left to move. Every
 * run that took the lock is recorded in `rule_runs`.
 *
 * Stale sections (unchanged for 90 days) are no rule: a section's status is worked out when the pad
 * is read, from when the section last changed (sections.ts `padStatus`), so there is nothing to write
 * when the time passes. Edit wars are found here, from the versions, not on the write path; small
 * suggestions in Checked hubs go in unchecked after 24 hours. Hiding a person's recent posts is no
 * timer: `undo_everything` with `include_linked` reads the last 72 hours when it runs.
 */
const RULES: readonly Rule[] = [idleTask, disputeLapse, pacePrune, editWar, uncheckedMerge, ownerSilence, takeoverNotice];

/** The advisory lock space of rule runs (the second key is the rule's name hashed). */
const LOCK_SPACE = 21;
const EVERY_MS = 10 * 60_000;

export type RuleStatus = 'ran' | 'busy' | 'failed';
/** A rule's run: the ids of the objects it moved, and how many rows it moved. */
export type RuleRun = { rule: string; status: RuleStatus; moved: readonly string[]; rows: number };

/**
 * Runs one rule at `now` in one transaction under its lock (a rule of its own transactions runs
 * unlocked, each object guarded by its state), and records the run (runs older than a
 * week go). `busy` when another run of the rule holds the lock: nothing was done.
 */
export async function runRule(core: Core, rule: Rule, now: Date = new Date()): Promise<RuleRun> {
  if ('run' in rule) {
    const { ids, rows } = await rule.run(core, now);
    await core.db.write((tx) => recordRun(tx, rule, now, rows));
    return { rule: rule.name, status: 'ran', moved: ids, rows };
  }
  const run = await core.db.write(async (tx): Promise<RuleRun> => {
    const locked = await tx.oneFirst(sql.type(z.object({ locked: z.boolean() }))`
      SELECT pg_try_advisory_xact_lock(${LOCK_SPACE}, hashtext(${rule.name})) AS locked`);
    if (!locked) return { rule: rule.name, status: 'busy', moved: [], rows: 0 };
    const { ids, rows } = await rule.apply(tx, now);
    await recordRun(tx, rule, now, rows);
    return { rule: rule.name, status: 'ran', moved: ids, rows };
  });
  // What a rule moved may change who edits what directly (an edit war's mark, a hub handed over):
  // this instance's editor grants are read again; other instances' lapse within their few seconds.
  if (run.rows) core.editors.forget();
  return run;
}

/** A run in `rule_runs`; runs older than a week go. */
async function recordRun(tx: CommonQueryMethods, rule: Rule, now: Date, rows: number) {
  await tx.query(sql.unsafe`INSERT INTO rule_runs (rule, clock, moved) VALUES (${rule.name}, ${now.toISOString()}, ${rows})`);
  await tx.query(sql.unsafe`DELETE FROM rule_runs WHERE rule = ${rule.name} AND ran_at < now() - interval '7 days'`);
}

/** Every rule of the rulebook at `now`, one after another; one that fails is logged and the rest still run. */
export async function runRules(core: Core, now: Date = new Date()): Promise<RuleRun[]> {
  const runs: RuleRun[] = [];
  for (const rule of RULES) {
    try {
      const run = await runRule(core, rule, now);
      if (run.rows) core.log.info('rule moved rows', { rule: rule.name, moved: run.rows });
      runs.push(run);
    } catch (error) {
      core.log.error('rule failed', { rule: rule.name, error });
      runs.push({ rule: rule.name, status: 'failed', moved: [], rows: 0 });
    }
  }
  return runs;
}

const MovedRow = z.object({ rule: z.string(), moved: z.number() });

/** How many rows each rule moved over the last 24 hours, in every run recorded (every instance's timer and every prune). */
export async function movedLastDay(conn: CommonQueryMethods): Promise<Record<string, number>> {
  const rows = await conn.any(sql.type(MovedRow)`
    SELECT r.rule, (SELECT coalesce(sum(moved), 0) FROM rule_runs WHERE rule = r.rule AND ran_at > now() - interval '24 hours') AS moved
    FROM unnest(${sql.array(RULES.map((rule) => rule.name), 'text')}) AS r(rule)`);
  return Object.fromEntries(rows.map((row) => [row.rule, row.moved]));
}

/**
 * Runs every rule every `everyMs` (10 minutes by default) until stopped; a round still running when
 * the next is due makes that one skip. `now` is the clock. `stop()` resolves once a round under way
 * has finished, so the store can close after it.
 */
export function startRulebookTimer(core: Core, options: { everyMs?: number; now?: () => Date } = {}): { stop(): Promise<void> } {
  const now = options.now ?? (() => new Date());
  let round: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    round ??= runRules(core, now()).finally(() => (round = undefined));
  }, options.everyMs ?? EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}
