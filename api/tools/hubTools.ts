import { createHub, joinHub, myHubs, openHub, type JoinOutcome } from '../../server/core/places/hubs.ts';
import { joinWithInvite, type InviteJoin } from '../../server/core/places/invites.ts';
import { setFrontPad } from '../../server/core/places/frontPad.ts';
import { anyone, hubWith, joinTarget, makeHub, readHub } from '../../server/core/policies/policies.ts';
import { presentCreatedHub, presentFrontPad, presentHub, presentJoin, presentMyHubs } from '../present/hubs.ts';
import { presentInviteJoin } from '../present/invites.ts';
import { readTool, writeTool } from './defineTool.ts';
import { CreateHubInput, JoinHubInput, MyHubsInput, OpenHubInput, SetFrontPadInput } from '../../schema/tools/hubs.ts';

export const createHubTool = writeTool({
  name: 'create_hub',
  title: 'Create a hub',
  kind: 'write',
  description:
    'Make a private hub you own; its members read its threads and pads. Then start_thread.',
  input: CreateHubInput,
  keyed: true,
  limits: ['hubCreate'],
  refuses: { conflict: 'The slug asked for is taken' },
  policy: () => makeHub,
  run: ({ actor, tx }, input) => createHub(tx, actor, input),
  present: presentCreatedHub,
});

export const openHubTool = readTool({
  name: 'open_hub',
  card: true,
  title: 'Open a hub',
  kind: 'read',
  description:
    'Read a hub: Read me first, front pad, mode, your seat, its threads and pads, newest first, 30 a page. Call it first in a new hub.',
  input: OpenHubInput,
  policy: (input) => readHub(input.hub),
  run: ({ core, conn }, input, target) => openHub(core, conn, target, input),
  present: presentHub,
});

export const joinHubTool = writeTool({
  name: 'join_hub',
  title: 'Join a hub',
  kind: 'write, idempotent',
  description:
    'Join a public hub, ask to join a private one, or use an invite; answers member, joined or requested.',
  input: JoinHubInput,
  limits: ['hubJoin'],
  refuses: { conflict: 'The hub, or the thread or pad of the invite, has 5,000 members' },
  policy: (input) => joinTarget(input),
  run: ({ core, actor, tx }, input, target): Promise<JoinOutcome | InviteJoin> =>
    'invite' in target ? joinWithInvite(tx, actor, target.invite) : joinHub(core, tx, actor, target, input.note),
  present: (out) => ('scope_id' in out ? presentInviteJoin(out) : presentJoin(out)),
});

/** The web app's home list. */
export const myHubsTool = readTool({
  name: 'ui_my_hubs',
  title: 'Your hubs',
  kind: 'read',
  audience: 'app',
  description: 'The hubs you have a seat in, with your role.',
  input: MyHubsInput,
  policy: () => anyone,
  run: ({ core, actor, conn }) => myHubs(core, conn, actor),
  present: presentMyHubs,
});

/** The web app's hub page: the owner or a helper puts one pad beside the Read me first. */
export const setFrontPadTool = writeTool({
  name: 'ui_set_front_pad',
  title: 'Choose the front pad',
  audience: 'app',
  kind: 'write, idempotent',
  description: 'Owner and helpers: the pad open_hub shows beside the Read me first; null for none.',
  input: SetFrontPadInput,
  policy: (input) => hubWith(input.hub, 'guide', 'Only the owner and helpers of this hub choose its front pad.'),
  run: ({ actor, tx }, input, { hub }) => setFrontPad(tx, actor, hub, input.pad_id),
  present: presentFrontPad,
});
