import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { Db } from '../server/db/database.ts';
import { changedBetween, deltaBetween, nextBlocks, type VersionBlock } from './blockLists.ts';
import { sectionChange } from './padSections.ts';
import { blocksAt, lockedLatest, recordVersion, StaleVersion, type Author, type ListAt, type Recorded, type VersionKind, type VersionWrite } from './versions.ts';

/** Who changed which blocks in a version. */
export type VersionNote = { version: number; actorId: string | null; changed: readonly string[] };
/** The current version of a pad as this instance knows it. */
export type PadState = ListAt;
/**
 * A version written but not yet known to have committed: `advance` makes it the current one.
 * `threaded`: its pad belongs to a thread, whose kept readings show the version.
 */
export type Written = { padId: string; state: PadState; note: VersionNote; threaded: boolean };

/** What a version is made of, besides the version it follows. */
export type VersionChange = {
  kind: VersionKind;
  author: Author;
  live: readonly VersionBlock[];
  mine: ReadonlySet<string>;
  changed?: readonly string[];
  update?: Uint8Array | null;
  restored?: number;
  /** What the caller writes beside the version, run by the same statement (`VersionWrite.alongside`). */
  alongside?: FragmentSqlToken | undefined;
};
/** A version ready to be written (`input`), and what it is once written. */
export type VersionPlan = { input: VersionWrite; written(recorded: Recorded): Written };

/** How many of a pad's latest versions are kept in memory, to answer "changed by others since". */
const HISTORY_MAX = 200;
/** After another instance wrote first even on a version just read, writes of the pad take its row lock first, for this long. */
const CONTENDED_MS = 10_000;

/**
 * The one owner of "the current version" of each pad on this instance: its number and block list,
 * the run of versions behind it (who changed what), and the turn-taking of those who write versions.
 * The database's `pads.version` is the truth across instances: every write names the version it
 * follows and fails with StaleVersion if the pad moved on; what is in memory is then forgotten, and
 * the writer runs again on what the database holds (`fresh`), or under the pad's row lock (`locked`).
 */
export function createPadVersions(db: Db) {
  const states = new Map<string, PadState>();
  const histories = new Map<string, VersionNote[]>();
  const contended = new Map<string, number>();
  const turns = new Map<string, Promise<unknown>>();
  const listeners = new Set<(padId: string, version: number) => void>();

  function forget(padId: string) {
    states.delete(padId);
    histories.delete(padId);
  }

  async function current(padId: string): Promise<PadState> {
    const known = states.get(padId);
    if (known) return known;
    const stored = (await blocksAt(db.pool, padId)) ?? { version: 0, blocks: [], sinceCheckpoint: 0 };
    states.set(padId, stored);
    return stored;
  }

  function noteHistory(padId: string, note: VersionNote) {
    const run = histories.get(padId);
    if (run && run.at(-1)!.version === note.version - 1) {
      run.push(note);
      if (run.length > HISTORY_MAX) run.shift();
    } else {
      histories.set(padId, [note]);
    }
  }

  /**
   * Plans the version after `state`: the blocks in `mine` as the live pad has them, the others as
   * `state` has them. With `changed`, those are the blocks the version names as changed (an API
   * edit); else the blocks whose text differs (live typing), and no version (null) when none does.
   * `record` writes the plan on its own; live versions of several pads are written together
   * (liveVersionBatch.ts), each finished by `written`.
   */
  function plan(padId: string, state: PadState, change: VersionChange): VersionPlan | null {
    const blocks = nextBlocks(state.blocks, change.live, change.mine);
    const changed = change.changed ?? changedBetween(state.blocks, blocks);
    if (changed.length === 0 && change.kind === 'live') return null;
    const delta = deltaBetween(state.blocks, blocks);
    // A checkpoint once the deltas since the last one hold a few hundred entries or twice the pad's
    // blocks: its cost is spread over as many entries, and a read folds no more than that.
    const checkpoint = state.version === 0 || state.sinceCheckpoint + delta.length > Math.max(256, 2 * blocks.length);
    return {
      input: {
        padId,
        kind: change.kind,
        author: change.author,
        previous: state.version,
        changed,
        restored: change.restored,
        body: checkpoint ? { checkpoint: blocks } : { delta },
        update: change.update,
        // Search's sections, in the same statement: the ones this version changed (all of them at a checkpoint).
        sections: sectionChange(state.blocks, blocks, checkpoint),
        alongside: change.alongside,
      },
      written: ({ version, threaded }) => ({
        padId,
        state: { version, blocks, sinceCheckpoint: checkpoint ? 0 : state.sinceCheckpoint + delta.length },
        note: { version, actorId: change.author?.id ?? null, changed },
        threaded,
      }),
    };
  }

  /** Writes a planned version. Throws StaleVersion (and forgets what it knew) when the pad is past the plan's. */
  async function record(conn: CommonQueryMethods, planned: VersionPlan): Promise<Written> {
    try {
      return planned.written(await recordVersion(conn, planned.input));
    } catch (error) {
      if (error instanceof StaleVersion) forget(planned.input.padId);
      throw error;
    }
  }

  return {
    /** Runs `run` as the pad's only version writer on this instance. */
    async exclusive<T>(padId: string, run: () => Promise<T>): Promise<T> {
      const previous = turns.get(padId);
      const next = (previous ?? Promise.resolve()).then(run, run);
      turns.set(padId, next);
      try {
        return await next;
      } finally {
        if (turns.get(padId) === next) turns.delete(padId);
      }
    },

    /** The latest version this instance knows, or (knowing none) the database's. Call within `exclusive`. */
    current,

    /** The database's current version, read again whatever this instance knew. Call within `exclusive`. */
    async fresh(padId: string): Promise<PadState> {
      forget(padId);
      return current(padId);
    },

    /**
     * The database's current version, its row locked for the caller's transaction: nobody else writes
     * a version of the pad until it ends. Call within `exclusive`.
     */
    async locked(tx: CommonQueryMethods, padId: string): Promise<PadState> {
      forget(padId);
      return lockedLatest(tx, padId);
    },

    /**
     * Another instance wrote the pad even as this one wrote on what it had just read: for a while,
     * writes of the pad take its row lock first.
     */
    contend(padId: string) {
      contended.set(padId, Date.now() + CONTENDED_MS);
    },

    /** Whether writes to the pad should take its row lock first: another instance is writing it too. */
    isContended(padId: string): boolean {
      const until = contended.get(padId);
      if (until === undefined) return false;
      if (until > Date.now()) return true;
      contended.delete(padId);
      return false;
    },

    plan,
    record,

    /**
     * A planned version written with others by one statement: what it is once written, or (null:
     * its pad was past the plan's version, and nothing of it was written) StaleVersion, what this
     * instance knew of the pad forgotten.
     */
    writtenOrStale(planned: VersionPlan, recorded: Recorded | null): Written {
      if (recorded) return planned.written(recorded);
      forget(planned.input.padId);
      throw new StaleVersion(planned.input.padId, planned.input.previous);
    },

    /** `plan` and `record` together: null when a live change changed no block. */
    async write(conn: CommonQueryMethods, padId: string, state: PadState, change: VersionChange): Promise<Written | null> {
      const planned = plan(padId, state, change);
      return planned && record(conn, planned);
    },

    /**
     * A written version committed: it is the pad's current one, and those waiting are told, here and
     * (after the commit, never inside it) on every other instance.
     */
    advance(written: Written) {
      states.set(written.padId, written.state);
      noteHistory(written.padId, written.note);
      for (const listener of listeners) listener(written.padId, written.note.version);
      db.announce({ wake: `pad:${written.padId}` });
      if (written.threaded) db.announce({ reads: 'pads' });
    },

    forget,

    /**
     * The blocks that participants other than `actorId` changed in the versions after `base`, up to
     * `current`, from the versions this instance recorded; null when it did not record all of them.
     */
    changedByOthersSince(padId: string, base: number, current: number, actorId: string | null): Set<string> | null {
      const run = histories.get(padId);
      if (!run || run[0]!.version > base + 1 || run.at(-1)!.version !== current) return null;
      const ids = new Set<string>();
      for (const note of run) if (note.version > base && note.actorId !== actorId) for (const id of note.changed) ids.add(id);
      return ids;
    },

    onVersion(listener: (padId: string, version: number) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type PadVersions = ReturnType<typeof createPadVersions>;
