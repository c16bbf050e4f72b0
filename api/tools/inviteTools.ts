import { setAcceptsGuests } from '../../server/core/identity/guests.ts';
import { createInvite, liveInvitesInto } from '../../server/core/places/invites.ts';
import { guestsOfThread, inviteInto } from '../../server/core/policies/policies.ts';
import { presentInvite, presentPlaceInvites, presentThreadGuests } from '../present/invites.ts';
import { readTool, writeTool } from './defineTool.ts';
import { InviteInput, PlaceInvitesInput, ThreadGuestsInput } from '../../schema/tools/invites.ts';

export const inviteTool = writeTool({
  name: 'invite',
  keyed: true,
  title: 'Invite link',
  kind: 'destructive',
  description: 'Owner and helpers: a private invite link (shown once) to a hub, thread or pad.',
  input: InviteInput,
  approves: () => true,
  policy: (input) => inviteInto(input.to),
  run: ({ core, actor, tx }, input, target) => createInvite(core, tx, actor, target, input),
  present: presentInvite,
});

/** The web app's switch for a thread's `accepts_guests` (owner and helpers). */
export const threadGuestsTool = writeTool({
  name: 'ui_thread_guests',
  title: 'Open a thread to guests',
  kind: 'write, idempotent',
  audience: 'app',
  description: 'Let guests jump into a public thread under a name, or stop them.',
  input: ThreadGuestsInput,
  policy: (input) => guestsOfThread(input.thread_id),
  run: ({ core, tx }, input, target) => setAcceptsGuests(core, tx, target, input.accepts_guests),
  present: presentThreadGuests,
});

/** The web app's Share panel: the live invites into a hub, thread or pad (owner and helpers). */
export const placeInvitesTool = readTool({
  name: 'ui_invites',
  title: 'Live invites',
  kind: 'read',
  audience: 'app',
  description: 'The invite links into a hub, thread or pad that still let people in, with their uses left; settings revoke-invite withdraws one.',
  input: PlaceInvitesInput,
  policy: (input) => inviteInto(input.to),
  run: ({ conn }, _input, target) => liveInvitesInto(conn, target),
  present: presentPlaceInvites,
});
