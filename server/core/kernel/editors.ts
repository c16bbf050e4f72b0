import type { HubRow, PadRow, Role } from '../../../schema/rows.ts';
import { keptBatch, type KeptBatch } from './keptBatch.ts';
import type { Seat } from './rights.ts';

/** How long a reader's access to a pad, read for an edit, is taken on trust. */
export const EDITOR_TTL_MS = 4_000;

/** A pad as the edit path needs it: who may edit, not the version (that comes from the live layer). */
export type EditablePad = {
  pad: Omit<PadRow, 'version'>;
  hub: HubRow;
  seat: Seat;
  /** Sections of the pad under an edit war (they take suggestions only), read with the grant and trusted as long. */
  war?: readonly string[] | undefined;
};

/** What is kept of one reader's access to one pad, as read (pads.ts decides what it grants). */
export type PadAccess = Omit<PadRow, 'version'> & { hub: HubRow; role: Role | null; war: string[] };

export type EditorCache = ReturnType<typeof createEditorCache>;

/**
 * Who may edit which pad, remembered for a few seconds: the check sits on the path of every edit,
 * where it would cost a database round trip before the change can go live. What is kept is read
 * again ahead of its age, many readers' in one statement (keptBatch.ts), so an agent at work never
 * waits for it. Only grants are trusted (pads.ts reads a refusal again at once), so joining a hub
 * counts at once; losing the right (a seat taken away, a pad gone) counts within EDITOR_TTL_MS on
 * every instance, inside the 5 s SPEC part 5 allows revocation elsewhere. Code that takes a right
 * away on this instance calls `forget` to make it count at once here.
 */
export function createEditorCache(now: () => number = Date.now) {
  let reads: KeptBatch<PadAccess> | null = null;
  return {
    /**
     * The kept reads, keyed by `key`, made at their first use with the reader of many keys
     * (`loadMany`, pads.ts: the kernel does not know how a pad is read).
     */
    reads(loadMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, PadAccess>>): KeptBatch<PadAccess> {
      return (reads ??= keptBatch({ maxAgeMs: EDITOR_TTL_MS, now, loadMany, readAheadFailed: () => {} }));
    },
    key: (participantId: string, padId: string) => `${participantId} ${padId}`,
    /** Forgets every reader's access. */
    forget: () => reads?.drop(),
  };
}
