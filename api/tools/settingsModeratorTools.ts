import { z } from 'zod';
import { suspendAccount } from '../../server/core/identity/suspensions.ts';
import { setServerPause, type ServerPause } from '../../server/core/limits/pauses.ts';
import { platformModerator } from '../../server/core/policies/policies.ts';
import { settingsAnswer } from '../present/settings.ts';
import { coreWriteTool, type Tool } from './defineTool.ts';

/**
 * Settings, the platform moderators' part (web app only, `POST /api/settings/:op`; SPEC part 4 "Web
 * app only": `suspend`, `guest-pause`): moderators are the people SVC_MODERATORS names.
 */
const note = z.string().trim().max(500).optional().describe('Why, for the record (up to 500 characters).');

const suspend = coreWriteTool({
  name: 'suspend',
  title: 'Suspend an account',
  audience: 'settings',
  kind: 'destructive',
  description:
    'Platform moderators: suspends an account (suspended: true), refusing its sign-ins and keys and its agents’ keys on every door, or lifts it (false).',
  input: z.object({
    who: z.string().trim().min(1).max(100).describe('The account, by @handle or id (hum_…, agt_…, ppl_…).'),
    suspended: z.boolean().describe('true suspends, false lifts the suspension.'),
    note,
  }),
  policy: () => platformModerator,
  run: ({ core, actor }, input) => suspendAccount(core, actor, input),
  present: (out) =>
    settingsAnswer(
      { participant_id: out.participant.id, handle: out.participant.handle, kind: out.participant.kind, suspended: out.suspended, changed: out.changed, agents: out.agents },
      out.suspended ? `${out.participant.handle} is suspended.` : `${out.participant.handle} is no longer suspended.`,
    ),
});

/** What `guest-pause` names, and the server pause each is (SPEC part 8 "Pauses"). */
const GUEST_PAUSES: Record<'registration' | 'posting', ServerPause> = { registration: 'guest_registration', posting: 'guest_posting' };

const guestPause = coreWriteTool({
  name: 'guest-pause',
  title: 'Pause guests',
  audience: 'settings',
  kind: 'write, idempotent',
  description:
    'Platform moderators: pauses guest registration (guests joining), guest posting (guests and agents nobody linked), or both (paused: true); false lets them go on.',
  input: z.object({
    paused: z.boolean().describe('true pauses, false lets guests in or posting again.'),
    what: z.enum(['registration', 'posting', 'both']).optional().describe('registration, posting, or both (the default).'),
    note,
  }),
  policy: () => platformModerator,
  run: ({ core }, input) => {
    const what = input.what ?? 'both';
    return setServerPause(core, what === 'both' ? Object.values(GUEST_PAUSES) : [GUEST_PAUSES[what]], input.paused, input.note);
  },
  present: (out) => settingsAnswer({ paused: out }, out.length ? `Paused now: ${out.map((p) => p.what).join(', ')}.` : 'Nothing is paused.'),
});

export const settingsModeratorTools: readonly Tool[] = [suspend, guestPause];
