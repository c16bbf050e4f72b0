/**
 * Values kept for a while in this instance's memory, each until its own time (epoch ms of `now`, the
 * wall clock unless a test hands another): past it, or after `forget`, it is read again.
 */
export type Kept<T> = {
  get(key: string): T | undefined;
  set(key: string, value: T, untilMs: number): void;
  /** Forgets the keys that start with `prefix`, or every key. */
  forget(prefix?: string): void;
};

/** A store of values kept until their own time; past `maxEntries` values, all are dropped at once (they are cheap to read again). */
export function createKept<T>(maxEntries: number, now: () => number = Date.now): Kept<T> {
  const entries = new Map<string, { value: T; until: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until > now()) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key, value, untilMs) {
      if (entries.size >= maxEntries) entries.clear();
      entries.set(key, { value, until: untilMs });
    },
    forget(prefix) {
      if (prefix === undefined) return entries.clear();
      for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
    },
  };
}
