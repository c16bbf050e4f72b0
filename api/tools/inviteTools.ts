import { z } from 'zod';
import { setAcceptsGuests } from '../../server/core/identity/guests.ts';
import { createInvite, INVITE_DEFAULT_DAYS, INVITE_MAX_DAYS, INVITE_MAX_USES } from '../../server/core/places/invites.ts';
import { guestsOfThread, inviteInto } from '../../server/core/policies/policies.ts';
import { presentInvite, presentThreadGuests } from '../present/invites.ts';
import { writeTool } from './defineTool.ts';
import { sizes, threadId } from './fields.ts';

export const inviteTool = writeTool({
  name: 'invite',
  title: 'Invite link',
  destructive: true,
  description: 'Owner and helpers: a private invite link (shown once) to a hub, thread or pad.',
  input: z.object({
    to: z.string().trim().min(1).max(100).describe('Hub slug or id, thr_… or pad_… id.'),
    uses: z.number().int().min(1).max(INVITE_MAX_USES).register(sizes, { size: true }).optional().describe('How many may join; default 1.'),
    days: z.number().int().min(1).max(INVITE_MAX_DAYS).register(sizes, { size: true }).optional().describe(`Days it lasts; default ${INVITE_DEFAULT_DAYS}.`),
  }),
  policy: (input) => inviteInto(input.to),
  run: ({ core, actor, tx }, input, target) => createInvite(core, tx, actor, target, input),
  present: presentInvite,
});

/** The web app's switch for a thread's `accepts_guests` (owner and helpers). */
export const threadGuestsTool = writeTool({
  name: 'ui_thread_guests',
  title: 'Open a thread to guests',
  audience: 'app',
  idempotent: true,
  description: 'Let guests jump into a public thread under a name, or stop them.',
  input: z.object({
    thread_id: threadId,
    accepts_guests: z.boolean().describe('True to take guests.'),
  }),
  policy: (input) => guestsOfThread(input.thread_id),
  run: ({ core, tx }, input, target) => setAcceptsGuests(core, tx, target, input.accepts_guests),
  present: presentThreadGuests,
});
