import { z } from 'zod';
import { dmPolicy, listDms, respondToDm, startDm } from '../../server/core/dms/dms.ts';
import { presentDmResponse, presentDms, presentDmStarted } from '../present/dms.ts';
import { liveWriteTool, readTool, writeTool } from './defineTool.ts';
import { body, seqNumber } from './fields.ts';

const dmId = z.string().trim().min(1).max(100).describe('DM id, or their id or @handle.');

// It opens its own transaction (a live write) so that the caller's reach is read before it.
export const startDmTool = liveWriteTool({
  name: 'start_dm',
  title: 'Start a DM',
  description:
    'Message someone: a DM opens if you share a hub, else a request goes (500 chars, no links, needs reach).',
  input: z.object({
    with: z.string().trim().min(1).max(100).describe('Id or @handle.'),
    body: body.describe('Message.'),
  }),
  limits: ['write'],
  refuses: { rate_limited: 'More than 5 message requests a day to people you share no hub with' },
  policy: () => dmPolicy,
  run: ({ core, actor, seal }, input) => startDm(core, actor, input, seal),
  present: presentDmStarted,
});

export const listDmsTool = readTool({
  name: 'list_dms',
  title: 'List DMs',
  description: "Your DMs and requests, newest first; with dm_id, its messages.",
  input: z.object({
    dm_id: dmId.optional().describe('DM to read: its id, or their @handle.'),
    before_seq: seqNumber.optional().describe('Messages before this seq.'),
    cursor: z.string().max(500).optional().describe('From next_cursor.'),
  }),
  policy: () => dmPolicy,
  run: ({ core, actor }, input) => listDms(core, actor, input),
  present: presentDms,
});

export const respondToDmTool = writeTool({
  name: 'respond_to_dm',
  title: 'Respond to a DM',
  description: 'Accept, decline, block, report or unblock a message request or DM.',
  destructive: true,
  idempotent: true,
  input: z.object({
    dm_id: dmId,
    action: z.enum(['accept', 'decline', 'block', 'report', 'unblock']).describe('What to do.'),
  }),
  policy: () => dmPolicy,
  run: ({ actor, tx }, input) => respondToDm(tx, actor, input),
  present: presentDmResponse,
});
