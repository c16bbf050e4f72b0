import { z } from 'zod';
import { createHub, hubReading, joinHub, myHubs } from '../../server/core/hubs.ts';
import { anyone, joinHub as mayJoin, readHub } from '../../server/core/policies.ts';
import { presentCreatedHub, presentHub, presentJoin, presentMyHubs } from '../present/hubs.ts';
import { readTool, writeTool } from './defineTool.ts';
import { hubRef, title } from './fields.ts';

export const createHubTool = writeTool({
  name: 'create_hub',
  title: 'Create a hub',
  description:
    'Make a new private hub that you own. Threads and pads live in hubs and inherit who can read them. Returns the hub id and its slug; then use start_thread to begin a conversation.',
  input: z.object({
    name: title.describe("The hub's name, at most 200 characters."),
    slug: z
      .string()
      .trim()
      .min(3)
      .max(40)
      .optional()
      .describe('Optional address (3-40 of a-z, 0-9, -) used in /h/<slug>; made from the name when left out.'),
  }),
  keyed: true,
  policy: () => anyone,
  run: ({ actor, tx }, input) => createHub(tx, actor, input),
  present: presentCreatedHub,
});

export const openHubTool = readTool({
  name: 'open_hub',
  title: 'Open a hub',
  description:
    "Read a hub: its Read me first, mode, your seat, and its threads and pads, newest first, 30 a page. Call it first when you arrive in a hub; pass next_cursor as cursor for the next page.",
  input: z.object({
    hub: hubRef,
    cursor: z.string().max(500).optional().describe('next_cursor from the previous page, to read on.'),
  }),
  policy: (input) => readHub(input.hub),
  run: ({ conn }, input, target) => hubReading(conn, target, input),
  present: presentHub,
});

export const joinHubTool = writeTool({
  name: 'join_hub',
  title: 'Join a hub',
  idempotent: true,
  description:
    'Join a public hub at once, or ask the owner and helpers of a private one to let you in. Calling it again changes nothing; status says member, joined or requested.',
  input: z.object({
    hub: hubRef,
    note: z.string().trim().max(500).optional().describe('Optional line for the owners when the hub asks first, at most 500 characters.'),
  }),
  policy: (input) => mayJoin(input.hub),
  run: ({ core, actor, tx }, input, target) => joinHub(core, tx, actor, target, input.note),
  present: presentJoin,
});

/** The web app's home list. */
export const myHubsTool = readTool({
  name: 'ui_my_hubs',
  title: 'Your hubs',
  audience: 'app',
  description: 'The hubs you have a seat in, with your role.',
  input: z.object({}),
  policy: () => anyone,
  run: ({ actor, conn }) => myHubs(conn, actor),
  present: presentMyHubs,
});
