import type { HubRow, PadRow } from '../../../schema/rows.ts';
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
  const entries = new Map<string, { value: EditablePad; at: number }>();
  const key = (participantId: string, padId: string) => `${participantId} ${padId}`;
  return {
    get(participantId: string, padId: string): EditablePad | null {
      const entry = entries.get(key(participantId, padId));
      if (!entry) return null;
      if (now() - entry.at < EDITOR_TTL_MS) return entry.value;
      entries.delete(key(participantId, padId));
      return null;
    },
    set(participantId: string, value: EditablePad) {
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(key(participantId, value.pad.id), { value, at: now() });
    },
    /** Forgets every grant of this participant (or of everyone). */
    forget(participantId?: string) {
      if (participantId === undefined) return entries.clear();
      for (const k of entries.keys()) if (k.startsWith(`${participantId} `)) entries.delete(k);
    },
  };
}
