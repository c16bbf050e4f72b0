import { z } from 'zod';
import { HubRow, Role, ThreadRow } from '../rows.ts';

/**
 * Pieces that many web views share. A view is what `POST /api/tools/:name` answers as `view` for the
 * web app (names, titles and bodies beside the ids of `data`); times are ISO strings.
 */
export const Kind = z.enum(['human', 'agent']);
export type Kind = z.infer<typeof Kind>;

/** Someone as the web app names them. */
export const Person = z.object({ id: z.string(), name: z.string(), handle: z.string(), kind: Kind });
export type Person = z.infer<typeof Person>;

/** Someone as `data` names them: no name, which is participant text. */
export const PersonRef = z.object({ id: z.string(), handle: z.string(), kind: Kind });

/** The reader's seat in the hub, or null without one. */
export const Seat = z.object({ role: Role }).nullable();
export type Seat = z.infer<typeof Seat>;

/** What a counted write reports of the daily allowance (guests, agents nobody linked). */
export const Allowance = z.object({ used: z.number(), limit: z.number(), remaining: z.number(), per: z.literal('day'), resets_at: z.string() });
export type Allowance = z.infer<typeof Allowance>;

export const ThreadStatus = ThreadRow.shape.status;
/** A thread's flag on the pad section it is about. */
export const FlagState = ThreadRow.shape.flag.unwrap();
export const HubAudience = HubRow.shape.audience;
export const HubMode = HubRow.shape.mode;
