import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../db/logger.ts';
import { AppError } from '../../../schema/errors.ts';

/** SPEC part 8 "Reads": 4 open waits per participant. */
export const WAITS_PER_PARTICIPANT = 4;
/**
 * While other instances cannot be heard (the change feed's connection is down) every wait is checked
 * this often, by one batched read, so that nobody waits out a change that was made meanwhile.
 */
const FALLBACK_POLL_MS = 3_000;

/** A thread's or a pad's key: `thread:<id>`, `pad:<id>`. */
export type VersionKey = `thread:${string}` | `pad:${string}`;

type Waiter = {
  /** Whether what it waits for has come; reads through `version` share one query per key. */
  check(): Promise<boolean>;
  come(): void;
  checking: boolean;
  again: boolean;
};

const KeyedVersion = z.object({ key: z.string(), version: z.number() });

export type WaitRegistry = ReturnType<typeof createWaitRegistry>;

/**
 * This instance's open waits, filed under the keys of what they wait on. A wait holds no database
 * connection: it is checked once when it starts and again only when one of its keys is woken. Keys
 * are woken by what writes announce after their commit (`afterCommit`), which every instance hears
 * on Postgres (its own included), and by this instance's live pads as their versions commit.
 * The embedded store tells no keys but has no other instance either: after each of its writes every
 * wait is checked. Checks of the same version, however many wait on it, are one query; checks woken
 * together are one query for them all.
 */
export function createWaitRegistry(db: Db, log: Logger, onPadVersion: (listener: (padId: string) => void) => unknown) {
  const filed = new Map<string, Set<Waiter>>();
  const open = new Map<string, number>();
  let hearing = false;
  let poll: NodeJS.Timeout | undefined;

  // Reads of versions asked for in the same turn go in one query. A read in flight when its key is
  // woken is not shared with those who ask after: it may have started before the commit.
  const reading = new Map<string, Promise<number | null>>();
  let batch: Map<string, PromiseWithResolvers<number | null>> | null = null;

  function version(key: VersionKey): Promise<number | null> {
    // Not read yet: as fresh as a new read.
    const queued = batch?.get(key);
    if (queued) return queued.promise;
    const inFlight = reading.get(key);
    if (inFlight) return inFlight;
    if (!batch) {
      const mine = (batch = new Map());
      setImmediate(() => {
        batch = null;
        void readBatch(mine);
      });
    }
    const read = Promise.withResolvers<number | null>();
    batch!.set(key, read);
    reading.set(key, read.promise);
    const forget = () => reading.get(key) === read.promise && reading.delete(key);
    read.promise.then(forget, forget);
    return read.promise;
  }

  async function readBatch(keys: Map<string, PromiseWithResolvers<number | null>>) {
    const ids = (kind: string) => [...keys.keys()].filter((key) => key.startsWith(`${kind}:`)).map((key) => key.slice(kind.length + 1));
    try {
      const rows = await db.pool.any(sql.type(KeyedVersion)`
        SELECT 'thread:' || id AS key, version FROM threads WHERE id = ANY(${sql.array(ids('thread'), 'text')})
        UNION ALL SELECT 'pad:' || id, version FROM pads WHERE id = ANY(${sql.array(ids('pad'), 'text')})`);
      const found = new Map(rows.map((row) => [row.key, row.version]));
      for (const [key, read] of keys) read.resolve(found.get(key) ?? null);
    } catch (error) {
      for (const read of keys.values()) read.reject(error);
    }
  }

  function recheck(waiter: Waiter) {
    if (waiter.checking) {
      waiter.again = true;
      return;
    }
    waiter.checking = true;
    waiter.again = false;
    waiter.check().then(
      (came) => {
        waiter.checking = false;
        if (came) waiter.come();
        else if (waiter.again) recheck(waiter);
      },
      (error: Error) => {
        waiter.checking = false;
        log.warn('wait check failed', { message: error.message });
      },
    );
  }

  function wake(key: string) {
    const waiters = filed.get(key);
    if (!waiters) return;
    reading.delete(key);
    for (const waiter of waiters) recheck(waiter);
  }

  function wakeAll() {
    reading.clear();
    // A wait filed under two keys is checked once.
    for (const waiter of new Set([...filed.values()].flatMap((waiters) => [...waiters]))) recheck(waiter);
  }

  /** The slow shared check, while other instances cannot be heard and someone waits; it stops itself. */
  function polling() {
    if (hearing || poll || !filed.size) return;
    poll = setInterval(() => {
      if (hearing || !filed.size) {
        clearInterval(poll);
        poll = undefined;
      } else {
        wakeAll();
      }
    }, FALLBACK_POLL_MS).unref();
  }

  db.watchChanges({
    // The embedded store names no keys: every write may be what someone waits for. On Postgres,
    // while the change feed is not heard (its connection down, or a pooler that drops LISTEN), this
    // instance's own writes still wake its waits at once; only other instances' wait for the poll.
    changed: () => (db.kind === 'pglite' || !hearing) && filed.size > 0 && wakeAll(),
    hearing(on) {
      hearing = on;
      // Whatever was notified while nobody listened is lost: look again.
      if (on) wakeAll();
      else polling();
    },
    woke: wake,
  });
  onPadVersion((padId) => wake(`pad:${padId}`));

  return {
    version,

    /** How many waits are open on this instance. */
    get size() {
      let n = 0;
      for (const count of open.values()) n += count;
      return n;
    },

    /**
     * Resolves true once `check` is (checked now, then each time one of `keys` is woken), or false
     * after `ms`. A first check that throws refuses the wait; `participantId` holds at most 4.
     */
    async until(participantId: string, keys: readonly string[], check: () => Promise<boolean>, ms: number, gone?: AbortSignal): Promise<boolean> {
      const mine = open.get(participantId) ?? 0;
      if (mine >= WAITS_PER_PARTICIPANT) {
        throw new AppError('rate_limited', `At most ${WAITS_PER_PARTICIPANT} waits are open per participant; let one finish first.`, { retry_after_seconds: 1, retryAfterSeconds: 1 });
      }
      open.set(participantId, mine + 1);
      const answered = Promise.withResolvers<boolean>();
      const waiter: Waiter = { check, come: () => answered.resolve(true), checking: true, again: false };
      for (const key of keys) {
        const waiters = filed.get(key) ?? new Set();
        filed.set(key, waiters.add(waiter));
      }
      polling();
      const deadline = setTimeout(() => answered.resolve(false), ms);
      const leave = () => answered.resolve(false);
      gone?.addEventListener('abort', leave, { once: true });
      try {
        // Filed first, checked second: a change committed meanwhile wakes it and is checked again.
        if (await check()) return true;
        waiter.checking = false;
        if (waiter.again) recheck(waiter);
        return await answered.promise;
      } finally {
        clearTimeout(deadline);
        gone?.removeEventListener('abort', leave);
        for (const key of keys) {
          const waiters = filed.get(key)!;
          waiters.delete(waiter);
          if (!waiters.size) filed.delete(key);
        }
        const left = (open.get(participantId) ?? 1) - 1;
        if (left > 0) open.set(participantId, left);
        else open.delete(participantId);
      }
    },
  };
}
