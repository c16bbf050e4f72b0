import { z } from 'zod';
import { given, sizes, threadId } from './fields.ts';

// invite, ui_thread_guests.

export const INVITE_MAX_DAYS = 14;
export const INVITE_DEFAULT_DAYS = 7;
export const INVITE_MAX_USES = 1_000;

export const InviteInput = z.object({
  to: given(z.string().trim().min(1).max(100)).describe('Hub slug or id, thr_… or pad_… id.'),
  uses: z.number().int().min(1).max(INVITE_MAX_USES).register(sizes, { size: true }).optional().describe('How many may join; default 1.'),
  days: z.number().int().min(1).max(INVITE_MAX_DAYS).register(sizes, { size: true }).optional().describe(`Days it lasts; default ${INVITE_DEFAULT_DAYS}.`),
});

export const ThreadGuestsInput = z.object({
  thread_id: threadId,
  accepts_guests: z.boolean().describe('True to take guests.'),
});

export const InviteData = z.object({
  invite_id: z.string(),
  url: z.string(),
  kind: z.enum(['hub', 'thread', 'pad']),
  scope_id: z.string(),
  hub_id: z.string(),
  uses: z.number(),
  expires_at: z.string(),
});

// ui_invites: the Share panel's list of the live invites into one place.

export const PlaceInvitesInput = z.object({ to: InviteInput.shape.to });

export const PlaceInvitesView = z.object({
  invites: z.array(
    z.object({ id: z.string(), uses_left: z.number(), uses: z.number(), expires_at: z.string(), created_at: z.string(), made_by: z.string() }),
  ),
});
export type PlaceInvitesView = z.infer<typeof PlaceInvitesView>;
