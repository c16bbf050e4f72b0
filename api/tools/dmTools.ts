import { dmPolicy, listDms, respondToDm, startDm } from '../../server/core/dms/dms.ts';
import { presentDmResponse, presentDms, presentDmStarted } from '../present/dms.ts';
import { liveWriteTool, readTool, writeTool } from './defineTool.ts';
import { ListDmsInput, RespondToDmInput, StartDmInput } from '../../schema/tools/dms.ts';

// It opens its own transaction (a live write) so that the caller's reach is read before it.
export const startDmTool = liveWriteTool({
  name: 'start_dm',
  keyed: true,
  title: 'Start a DM',
  kind: 'write',
  description:
    'Message someone: a DM opens if you share a hub, else a request goes (500 chars, no links, needs reach).',
  input: StartDmInput,
  texts: ['body'],
  limits: ['write'],
  refuses: { rate_limited: 'More than 5 message requests a day to people you share no hub with' },
  policy: () => dmPolicy,
  run: ({ core, actor, write }, input) => startDm(core, actor, input, write),
  present: presentDmStarted,
});

export const listDmsTool = readTool({
  name: 'list_dms',
  title: 'List DMs',
  kind: 'read',
  description: "Your DMs and requests, newest first; with dm_id, its messages.",
  input: ListDmsInput,
  policy: () => dmPolicy,
  run: ({ core, actor }, input) => listDms(core, actor, input),
  present: presentDms,
});

export const respondToDmTool = writeTool({
  name: 'respond_to_dm',
  keyed: true,
  title: 'Respond to a DM',
  kind: 'destructive',
  description: 'Accept, decline, block, report or unblock a message request or DM.',
  input: RespondToDmInput,
  policy: () => dmPolicy,
  run: ({ actor, tx }, input) => respondToDm(tx, actor, input),
  present: presentDmResponse,
});
