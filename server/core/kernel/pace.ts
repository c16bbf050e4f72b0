import { AppError } from '../../../schema/errors.ts';
import { createKept, type Kept } from './kept.ts';
import { keptBatch, type KeptBatch } from './keptBatch.ts';

export type { Kept } from './kept.ts';

/**
 * What the limits read beside the store: the clock every window is measured by, the scale of the
 * pace numbers, and this instance's count of agent reads (SPEC part 8 "Reads": in memory, per
 * instance). One per server, on the core.
 */
export type Pace = {
  /** Epoch milliseconds. Tests move it (`core.pace.now = () => …`) to cross a window's end. */
  now: () => number;
  /** Multiplies every pace number (SVC_PACE_SCALE): 1 in production; test servers loosen it. */
  scale: number;
  /** Counts one read of an agent, or refuses it past 600 a minute. */
  read(agentId: string): void;
  /**
   * What the limits keep in memory between writes, by name, one store per name and server: the facts
   * of a write (limits.ts) and the windows found full (paceWindows.ts).
   */
  kept<T>(name: string): Kept<T>;
  /**
   * Reads of many keys kept by name, each at most `maxAgeMs` and read again ahead of its age, many in
   * one statement (keptBatch.ts): made at their first use with the reader of their keys, `loadMany`
   * (the facts of writes, limits.ts).
   */
  batch<T>(name: string, maxAgeMs: number, loadMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, T>>): KeptBatch<T>;
  /** Forgets every key of the named reads. */
  forgetBatch(name: string): void;
};

/** The reads of the facts of writes (limits.ts), kept a few seconds; and the store of whether a hub or thread holds anyone but one human and their agents. */
export const KEPT_FACTS = 'facts';
export const KEPT_SHARED = 'shared';

/**
 * Forgets the kept facts of one participant's writes (a cooldown began), or of everyone's (a pause or
 * suspension changed), so that this instance reads them again at the next write.
 */
export function forgetFacts(core: { pace: Pace }, participantId?: string): void {
  // Read in batches, the facts are forgotten all at once: they are read again ahead of need anyway.
  core.pace.forgetBatch(KEPT_FACTS);
  if (participantId === undefined) core.pace.kept<unknown>(KEPT_SHARED).forget();
}

/** Past this many kept values in one store, all are dropped at once. */
const MAX_KEPT = 20_000;

const AGENT_READS_PER_MINUTE = 600;
const MINUTE = 60_000;

export function createPace(scale: number): Pace {
  // Each agent's read times of the last minute, oldest first; an agent quiet for a minute is dropped.
  const reads = new Map<string, number[]>();
  const stores = new Map<string, Kept<unknown>>();
  const batches = new Map<string, KeptBatch<unknown>>();
  const pace: Pace = {
    now: () => Date.now(),
    scale,
    read(agentId) {
      const now = pace.now();
      const max = scaled(AGENT_READS_PER_MINUTE, pace.scale);
      const times = reads.get(agentId) ?? [];
      let stale = 0;
      while (stale < times.length && times[stale]! <= now - MINUTE) stale++;
      if (stale) times.splice(0, stale);
      if (times.length >= max) {
        const retry = secondsUntil(times[times.length - max]! + MINUTE, now);
        throw new AppError(
          'rate_limited',
          `An agent reads at most ${max} times a minute here. Instead of reading again and again, call wait_for_changes: it answers when something changes. Try again in ${retry} s.`,
          { retry_after_seconds: retry, retryAfterSeconds: retry },
        );
      }
      times.push(now);
      reads.set(agentId, times);
      if (reads.size > 10_000) for (const [id, list] of reads) if (!list.length || list.at(-1)! <= now - MINUTE) reads.delete(id);
    },
    kept<T>(name: string) {
      let store = stores.get(name);
      if (!store) stores.set(name, (store = createKept<unknown>(MAX_KEPT)));
      return store as Kept<T>;
    },
    batch<T>(name: string, maxAgeMs: number, loadMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, T>>) {
      let batch = batches.get(name);
      if (!batch) batches.set(name, (batch = keptBatch<unknown>({ maxAgeMs, now: Date.now, loadMany, readAheadFailed: () => {} })));
      return batch as KeptBatch<T>;
    },
    forgetBatch(name: string) {
      batches.get(name)?.drop();
    },
  };
  return pace;
}

/** A pace number at the server's scale: never below one. */
export const scaled = (n: number, scale: number) => Math.max(1, Math.round(n * scale));

/** Whole seconds until `at`, at least one: what `retry_after_seconds` says. */
export const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));
