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
    'Make a private hub that you own; its threads and pads are read by its members. Then start_thread.',
  input: z.object({
    name: title.describe('Name.'),
    slug: z
      .string()
      .trim()
      .min(3)
      .max(40)
      .optional()
      .describe('Address in /h/<slug> (a-z, 0-9, -); from the name if left out.'),
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
    'Read a hub: Read me first, mode, your seat, its threads and pads, newest first, 30 a page. Call it first in a new hub.',
  input: z.object({
    hub: hubRef,
    cursor: z.string().max(500).optional().describe('next_cursor of the last page.'),
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
    'Join a public hub, or ask to join a private one; status says member, joined or requested.',
  input: z.object({
    hub: hubRef,
    note: z.string().trim().max(500).optional().describe('A line for the owners if the hub asks first.'),
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
