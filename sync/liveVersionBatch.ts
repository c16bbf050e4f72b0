import type { Db } from '../server/db/database.ts';
import type { PadVersions, VersionPlan, Written } from './padVersions.ts';
import { recordVersions } from './versions.ts';

/**
 * Live versions planned within this long of each other are written by one statement. Typing on
 * hundreds of pads makes hundreds of versions a second, each pad's at a time of its own: one
 * statement per pad was as many round trips, commits and wake-ups of the database, each taking the
 * event loop and the CPU from the keystrokes being relayed.
 */
const BATCH_MS = 25;
/** At most this many versions in one statement: its text and its plan stay small. */
const BATCH_MAX = 32;

type Waiting = { plan: VersionPlan; resolve: (written: Written) => void; reject: (error: unknown) => void };

/**
 * Writes planned live versions of different pads together (each pad's versions are written one at a
 * time, within `exclusive`, so a batch holds one of a pad at most). Each pad's version is written or
 * not on its own, as by `PadVersions.record`: a pad past its plan's version is not written and its
 * write throws StaleVersion. A batch that fails as a whole is written again pad by pad, so that one
 * pad's failure is its own.
 */
export function createLiveVersionBatch(db: Db, versions: PadVersions) {
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | null = null;

  function flush() {
    if (timer) clearTimeout(timer);
    timer = null;
    // In the order of their pads, so that two batches (of two instances) lock their pads' rows in the same order.
    const batch = waiting.sort((a, b) => (a.plan.input.padId < b.plan.input.padId ? -1 : 1));
    waiting = [];
    if (batch.length) void write(batch);
  }

  async function write(batch: Waiting[]) {
    if (batch.length === 1) return one(batch[0]!);
    let recorded;
    try {
      recorded = await db.writeStatement((conn) => recordVersions(conn, batch.map(({ plan }) => plan.input)));
    } catch {
      await Promise.all(batch.map(one));
      return;
    }
    for (const [i, { plan, resolve, reject }] of batch.entries()) {
      // One pad's version finished a turn of the event loop (its announcement to the pad's
      // connections sent), so that keystrokes that arrived meanwhile are relayed between them.
      if (i > 0) await new Promise((next) => setImmediate(next));
      await settle(() => versions.writtenOrStale(plan, recorded[i] ?? null), resolve, reject);
    }
  }

  const one = ({ plan, resolve, reject }: Waiting) => settle(() => db.writeStatement((conn) => versions.record(conn, plan)), resolve, reject);

  return {
    /** Writes the planned version with the others planned about now; as `PadVersions.record`. */
    record(plan: VersionPlan): Promise<Written> {
      return new Promise((resolve, reject) => {
        waiting.push({ plan, resolve, reject });
        if (waiting.length >= BATCH_MAX) flush();
        else timer ??= setTimeout(flush, BATCH_MS);
      });
    },
  };
}

/** Answers a waiting writer with what `run` gives or throws. */
export async function settle<T>(run: () => T | Promise<T>, resolve: (value: T) => void, reject: (error: unknown) => void): Promise<void> {
  try {
    resolve(await run());
  } catch (error) {
    reject(error);
  }
}

export type LiveVersionBatch = ReturnType<typeof createLiveVersionBatch>;
