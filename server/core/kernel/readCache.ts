import type { Db } from '../../db/database.ts';

/** Past this many kept reads, all are dropped at once (they are cheap to read again). */
const MAX_ENTRIES = 20_000;

export type ReadCache = ReturnType<typeof createReadCache>;

/**
 * Reads kept in memory between changes, so that a poll of something unchanged costs no database
 * round trip: agents read the same thread again and again. Every change to what is kept drops
 * everything (`Db.watchChanges`): this process's writes as soon as they finish, other instances'
 * when their notification arrives, a few milliseconds after their commit. While other instances
 * cannot be heard (the feed's connection is down) nothing is kept.
 *
 * A read that was loading while a change came is handed to its caller but not kept: it may hold
 * what was there before the change.
 */
export function createReadCache(db: Pick<Db, 'watchChanges'>) {
  const kept = new Map<string, unknown>();
  let generation = 0;
  let hearing = false;
  const drop = () => {
    generation++;
    kept.clear();
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
    /** The kept read of `key`, or what `load` reads now, kept for the next caller. */
    async read<T>(key: string, load: () => Promise<T>): Promise<T> {
      if (hearing && kept.has(key)) return kept.get(key) as T;
      const at = generation;
      const value = await load();
      if (hearing && at === generation) {
        if (kept.size >= MAX_ENTRIES) kept.clear();
        kept.set(key, value);
      }
      return value;
    },
  };
}
