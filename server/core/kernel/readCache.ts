import type { Db } from '../../db/database.ts';
import { keptBatch, type KeptBatch } from './keptBatch.ts';

/** Past this many kept reads, all are dropped at once (they are cheap to read again). */
const MAX_ENTRIES = 20_000;
/**
 * The largest age of any kept read. Changes are told after their commit by the instance that wrote
 * them (`afterCommit`); one that stopped between its commit and telling leaves the others' reads
 * (who may read a thread, which hubs one sits in) as they were: this bounds how long, below the 5 s
 * SPEC part 5 gives a revocation.
 */
export const KEPT_READ_MS = 4_000;

export type ReadCache = ReturnType<typeof createReadCache>;

/**
 * Reads kept in memory between changes, so that a poll of something unchanged costs no database
 * round trip: agents read the same thread again and again. Every change to what is kept drops
 * everything (`Db.watchChanges`): this process's writes as soon as they finish, other instances'
 * when their notification arrives, a few milliseconds after their commit. While other instances
 * cannot be heard (the feed's connection is down) nothing is kept.
 *
 * A read that was loading while a change came is handed to its caller but not kept: it may hold
 * what was there before the change. Every read is read again once KEPT_READ_MS old though nothing was
 * heard; a read of something the feed carries only in part is kept a shorter while (`maxAgeMs`).
 */
export function createReadCache(db: Pick<Db, 'watchChanges'>, now: () => number = performance.now.bind(performance)) {
  /** Each read with when it goes stale on its own. */
  const kept = new Map<string, { value: unknown; until: number }>();
  /** Reads under way, each with the generation it began in. */
  const loading = new Map<string, { value: Promise<unknown>; generation: number }>();
  /** Reads of many keys of one kind, each group read in batches (`readOf`). */
  const groups = new Map<string, KeptBatch<unknown>>();
  /** How many keys the groups keep between them, bounded as `kept` is. */
  const tally = { kept: 0 };
  const dropGroups = () => {
    for (const group of groups.values()) group.drop();
    groups.clear();
  };
  let generation = 0;
  let hearing = false;
  const drop = () => {
    generation++;
    kept.clear();
    dropGroups();
  };
  db.watchChanges({
    changed: drop,
    hearing(on) {
      hearing = on;
      drop();
    },
  });
  return {
    /** Whether reads are kept now: every change can be heard. */
    get keeping() {
      return hearing;
    },
    /**
     * The kept read of `key`, or what `load` reads now, kept for the next caller until a change or
     * KEPT_READ_MS; with `maxAgeMs`, a read of something the change feed does not carry in full is read
     * again once that old.
     */
    async read<T>(key: string, load: () => Promise<T>, options: { maxAgeMs?: number } = {}): Promise<T> {
      const found = hearing ? kept.get(key) : undefined;
      if (found && found.until > now()) return found.value as T;
      // Callers who come while it loads, with no change heard since it began, wait for the same read.
      const under = hearing ? loading.get(key) : undefined;
      if (under && under.generation === generation) return under.value as Promise<T>;
      const at = generation;
      const begun = now();
      const value = load();
      if (hearing) loading.set(key, { value, generation: at });
      try {
        const read = await value;
        if (hearing && at === generation) {
          if (kept.size >= MAX_ENTRIES) kept.clear();
          kept.set(key, { value: read, until: begun + Math.min(options.maxAgeMs ?? KEPT_READ_MS, KEPT_READ_MS) });
        }
        return read;
      } finally {
        if (loading.get(key)?.value === value) loading.delete(key);
      }
    },
    /**
     * The kept read of `key` of a group (one thread's readers), or null when `loadMany` finds none; a
     * key read afresh is read with the others of its group that will soon be due, in one statement
     * (keptBatch.ts). `loadMany` reads the group's keys it is given: the group's first caller's is used.
     * `fresh` (a read inside a transaction) reads the key alone, now, and keeps nothing.
     */
    readOf<T>(group: string, key: string, loadMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, T>>, fresh = false): Promise<T | null> {
      if (fresh || !hearing) return loadMany([key]).then((found) => found.get(key) ?? null);
      // Past MAX_ENTRIES kept between the groups (or groups), all are dropped at once, as `kept` is.
      if (tally.kept + groups.size >= MAX_ENTRIES) dropGroups();
      let batch = groups.get(group) as KeptBatch<T> | undefined;
      if (!batch) {
        batch = keptBatch({ maxAgeMs: KEPT_READ_MS, now, loadMany, readAheadFailed: () => {}, tally });
        groups.set(group, batch as KeptBatch<unknown>);
      }
      return batch.get(key);
    },
  };
}
