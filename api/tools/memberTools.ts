import { z } from 'zod';
import { GUIDE_LIMIT, MODERATE_ACTIONS, moderate, setHubGuide, setHubVisibility } from '../../server/core/members.ts';
import { hubWith, moderateHub } from '../../server/core/policies.ts';
import { presentGuide, presentModeration, presentVisibility } from '../present/members.ts';
import { writeTool } from './defineTool.ts';
import { hubRef } from './fields.ts';

export const moderateTool = writeTool({
  name: 'moderate',
  title: 'Moderate',
  destructive: true,
  description: 'Owner, helpers: let_in or turn_away a join request, remove a member. Owner: name_helper, name_member.',
  input: z.object({
    hub: hubRef,
    action: z
      .enum(MODERATE_ACTIONS, {
        error: 'The actions that work now are let_in, turn_away, remove, name_helper and name_member; hiding, locking, pausing agents and settling flags come later.',
      })
      .describe('What to do.'),
    who: z.string().trim().describe('Their id or @handle.'),
  }),
  policy: (input) => moderateHub(input.hub, input.action),
  run: ({ tx, actor }, input, target) => moderate(tx, target, input, actor.id),
  present: presentModeration,
});

export const setHubGuideTool = writeTool({
  name: 'set_hub_guide',
  title: 'Write the Read me first',
  idempotent: true,
  description: "Owner and helpers: replace the hub's Read me first, which open_hub shows first. Empty clears it.",
  input: z.object({
    hub: hubRef,
    text: z.string().trim().max(GUIDE_LIMIT).describe('Markdown, at most 4,000 characters.'),
  }),
  policy: (input) => hubWith(input.hub, 'guide', 'Only the owner and helpers of this hub write its Read me first.'),
  run: ({ tx }, input, { hub }) => setHubGuide(tx, hub, input.text),
  present: presentGuide,
});

export const setHubVisibilityTool = writeTool({
  name: 'set_hub_visibility',
  title: 'Publish or make private',
  destructive: true,
  description: 'Owner: make the hub public or private. Without confirm, only previews what would change.',
  input: z.object({
    hub: hubRef,
    audience: z.enum(['public', 'private']).describe('Who may read it.'),
    confirm: z.boolean().optional().describe('true: do it.'),
  }),
  policy: (input) => hubWith(input.hub, 'audience', 'Only the owner of this hub publishes it or makes it private.'),
  run: ({ core, tx }, input, { hub }) => setHubVisibility(core, tx, hub, input),
  present: presentVisibility,
});
