import type { HubRow, PadRow } from '../../../schema/rows.ts';
import { createKept } from './kept.ts';
import type { Seat } from './rights.ts';

/** How long a granted right to edit a pad is taken on trust. */
export const EDITOR_TTL_MS = 4_000;
const MAX_ENTRIES = 10_000;

/** A pad as the edit path needs it: who may edit, not the version (that comes from the live layer). */
export type EditablePad = {
  pad: Omit<PadRow, 'version'>;
  hub: HubRow;
  seat: Seat;
  /** Sections of the pad under an edit war (they take suggestions only), read with the grant and trusted as long. */
  war?: readonly string[] | undefined;
};

export type EditorCache = ReturnType<typeof createEditorCache>;

/**
 * Who may edit which pad, remembered for a few seconds: the check sits on the path of every edit,
 * where it would cost a database round trip before the change can go live. Only grants are kept, so
 * joining a hub counts at once; losing the right (a seat taken away, a pad gone) counts within
 * EDITOR_TTL_MS on every instance, inside the 5 s SPEC part 5 allows revocation elsewhere. Code that
 * takes a right away on this instance calls `forget` to make it count at once here.
 */
export function createEditorCache(now: () => number = Date.now) {
  const grants = createKept<EditablePad>(MAX_ENTRIES, now);
  const key = (participantId: string, padId: string) => `${participantId} ${padId}`;
  return {
    get: (participantId: string, padId: string): EditablePad | null => grants.get(key(participantId, padId)) ?? null,
    set: (participantId: string, value: EditablePad) => grants.set(key(participantId, value.pad.id), value, now() + EDITOR_TTL_MS),
    /** Forgets every grant of this participant (or of everyone). */
    forget: (participantId?: string) => grants.forget(participantId === undefined ? undefined : `${participantId} `),
  };
}
