import { z } from 'zod';
import { hubRef, personRef } from './fields.ts';

// undo_everything and take_over_hub (SPEC part 4 "Hubs"), and the web app's count before an undo.

/** SPEC part 8 "Rulebook timers": what `include_linked` hides of a human's and their agents' posts. */
export const LINKED_HOURS = 72;
/** SPEC part 8: owner silence, and the notice a member's takeover request gives. */
export const SILENCE_DAYS = 90;
export const NOTICE_DAYS = 30;

export const UndoEverythingInput = z.object({
  hub: hubRef,
  id: personRef,
  take_back: z.boolean().optional().describe('Restore last undo.'),
  include_linked: z.boolean().optional().describe("Also their human's group's posts, last 72 h."),
});

/** What an undo (or taking one back) covered, by kind. */
const UndoCounts = z.object({ posts: z.number(), edits: z.number(), suggestions: z.number(), claims: z.number() });

export const UndoEverythingData = UndoCounts.extend({
  hub_id: z.string(),
  participant_id: z.string(),
  /** Null when there was nothing to undo. */
  run_id: z.string().nullable(),
  taken_back: z.boolean(),
  /** The ids whose posts were hidden with `include_linked` (the human and their agents). */
  linked: z.array(z.string()).optional(),
  /** Pad blocks changed by others since, left as they are. */
  conflicts: z.array(z.object({ pad_id: z.string(), block_id: z.string() })),
});

/** The web app's count before it asks to confirm: what undo_everything would undo now, and the last undo that can be taken back. */
export const UndoPreviewInput = UndoEverythingInput.pick({ hub: true, id: true, include_linked: true });
export const UndoPreviewView = UndoCounts.extend({
  participant_id: z.string(),
  name: z.string(),
  /** The last undo of this person in this hub that was not taken back, if any. */
  last_run: z.object({ id: z.string(), at: z.string() }).nullable(),
});
export type UndoPreviewView = z.infer<typeof UndoPreviewView>;

export const TakeOverHubInput = z.object({ hub: hubRef });

export const TakeOverData = z.object({
  hub_id: z.string(),
  slug: z.string(),
  /**
   * `taken_over`: the caller owns the hub now; `asked`: a request with its notice is waiting;
   * `objected`: the owner ended a waiting request; `no_request`: the owner called, and none waits.
   */
  status: z.enum(['taken_over', 'asked', 'waiting', 'objected', 'no_request']),
  /** When a waiting request goes through, unless the owner acts. */
  due: z.string().optional(),
  request_id: z.string().optional(),
});

/** A waiting takeover request as the hub shows it to its members. */
export const TakeoverNotice = z.object({ request_id: z.string(), asker: z.object({ id: z.string(), name: z.string() }), asked: z.string(), due: z.string() });
export type TakeoverNotice = z.infer<typeof TakeoverNotice>;
