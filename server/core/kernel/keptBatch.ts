/**
 * Reads of many keys of one kind (the credentials of many agents, the seats of a thread's many
 * readers), each kept for at most `maxAgeMs`, and read again in batches: one statement for many keys.
 *
 * A key past half its age is read again with the others due at the moment, its callers answered from
 * what is kept meanwhile; a key not kept, or past its age, is read at once, and with it every other key
 * past half its age that was asked for within the last minute. Many readers each calling now and then
 * would otherwise cost a statement per reader every `maxAgeMs`. Each read is dated from before its
 * statement was sent, so nothing is answered from a read older than `maxAgeMs`.
 */

/** How long a key read again ahead of its age waits for others to go with it. */
const GATHER_MS = 500;
/** A key not asked for this long is not read again with others, only when next asked for. */
const IDLE_MS = 60_000;
/** At most this many keys in one statement. */
const BATCH = 1_000;
/** Past this many kept keys, all are dropped at once. */
const MAX_KEPT = 10_000;

export type KeptBatch<T> = ReturnType<typeof keptBatch<T>>;

type Kept<T> = { value: T | null; at: number; usedAt: number };
/** When a caller's own read began, for `keep`. */
export type Begun = { at: number; generation: number };

export function keptBatch<T>(options: {
  maxAgeMs: number;
  now: () => number;
  /** The values of these keys; a key it leaves out reads as null. */
  loadMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, T>>;
  /** A read ahead that failed: its keys are read when next asked for. */
  readAheadFailed: (error: Error) => void;
  /** Counts the keys kept, with those of other batches it is handed to (ReadCache's bound on all it keeps). */
  tally?: { kept: number };
}) {
  const { maxAgeMs, now, loadMany } = options;
  const kept = new Map<string, Kept<T>>();
  /** Keys being read now, each with its answer. */
  const reading = new Map<string, Promise<T | null>>();
  /** Keys to read again ahead of their age. */
  const due = new Set<string>();
  let gathering = false;
  /** Bumped whenever what is kept is dropped: a read begun before then is answered but not kept. */
  let generation = 0;
  const tally = options.tally ?? { kept: 0 };
  const forget = (key?: string) => {
    if (key === undefined) {
      tally.kept -= kept.size;
      kept.clear();
    } else if (kept.delete(key)) tally.kept--;
  };

  /** One statement for these keys: each one's answer, kept unless what is kept was dropped meanwhile. */
  function read(keys: readonly string[]): Map<string, Promise<T | null>> {
    const at = now();
    const started = generation;
    const values = loadMany(keys).then((found) => {
      if (started === generation) {
        if (kept.size + keys.length > MAX_KEPT) forget();
        for (const key of keys) {
          const before = kept.get(key);
          if (!before) tally.kept++;
          kept.set(key, { value: found.get(key) ?? null, at, usedAt: before?.usedAt ?? at });
        }
      }
      return found;
    });
    const answers = new Map<string, Promise<T | null>>();
    const settled = values.finally(() => {
      for (const key of keys) if (reading.get(key) === answers.get(key)) reading.delete(key);
    });
    for (const key of keys) {
      const answer = settled.then((found) => found.get(key) ?? null);
      answers.set(key, answer);
      reading.set(key, answer);
    }
    return answers;
  }

  function readAhead(key: string) {
    due.add(key);
    if (gathering) return;
    gathering = true;
    setTimeout(() => {
      gathering = false;
      const keys = [...due].filter((key) => !reading.has(key)).slice(0, BATCH);
      due.clear();
      if (!keys.length) return;
      Promise.all(read(keys).values()).catch(options.readAheadFailed);
    }, GATHER_MS).unref();
  }

  /** The kept value of `key` while younger than `maxAgeMs` (null: there is none), read again ahead of its age; undefined when it must be read. */
  function peek(key: string): T | null | undefined {
    const found = kept.get(key);
    const time = now();
    if (!found || time - found.at >= maxAgeMs) return undefined;
    found.usedAt = time;
    if (time - found.at >= maxAgeMs / 2 && !reading.has(key)) readAhead(key);
    return found.value;
  }

  return {
    peek,
    /** The value of `key` (null when there is none), kept or read now. */
    get(key: string): Promise<T | null> {
      const found = peek(key);
      if (found !== undefined) return Promise.resolve(found);
      const time = now();
      const loading = reading.get(key);
      if (loading) return loading;
      // Going to the store anyway: the keys in use that will soon be due go along.
      const along: string[] = [];
      for (const [other, entry] of kept) {
        if (along.length >= BATCH - 1) break;
        if (other !== key && time - entry.at >= maxAgeMs / 2 && time - entry.usedAt < IDLE_MS && !reading.has(other)) along.push(other);
      }
      for (const other of along) due.delete(other);
      const answers = read([key, ...along]);
      // A failure is this caller's to answer; those who wait for the others are told it themselves.
      for (const other of along) answers.get(other)!.catch(() => {});
      return answers.get(key)!;
    },
    /**
     * When a read of the caller's own begins (one on a connection it holds, which this must not wait
     * for): hand it to `keep` with what was read, so that the key is kept and read again ahead of its age.
     */
    begin(): Begun {
      return { at: now(), generation };
    },
    /** Keeps what the caller read since `begun`, unless what is kept was dropped meanwhile. */
    keep(key: string, value: T | null, begun: Begun) {
      if (begun.generation !== generation) return;
      const before = kept.get(key);
      if (before && before.at >= begun.at) return;
      if (!before && kept.size + 1 > MAX_KEPT) forget();
      if (!kept.has(key)) tally.kept++;
      kept.set(key, { value, at: begun.at, usedAt: now() });
    },
    /**
     * Forgets `key`, or every key; reads under way are answered to those who asked already but not
     * kept, nor shared with those who ask after: they may have begun before the change.
     */
    drop(key?: string) {
      generation++;
      forget(key);
      if (key === undefined) reading.clear();
      else reading.delete(key);
    },
  };
}
