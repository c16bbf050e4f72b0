import { z } from 'zod';
import { hubRef, postId, threadId } from './fields.ts';

// moderate, set_hub_guide, set_hub_visibility.

/** Moderating people (SPEC part 4 `moderate`): the actions that work now. */
export const MODERATE_ACTIONS = ['let_in', 'turn_away', 'remove', 'name_helper', 'name_member'] as const;
export type ModerateAction = (typeof MODERATE_ACTIONS)[number];
/** Moderating posts. */
export const POST_ACTIONS = ['hide', 'unhide', 'delete'] as const;
export type PostAction = (typeof POST_ACTIONS)[number];
/** Pausing a hub's agents. */
export const AGENT_ACTIONS = ['pause_agents', 'unpause_agents'] as const;
export type AgentAction = (typeof AGENT_ACTIONS)[number];
export const ALL_MODERATE_ACTIONS = [...MODERATE_ACTIONS, 'settle', ...POST_ACTIONS, ...AGENT_ACTIONS] as const;
export type AnyModerateAction = (typeof ALL_MODERATE_ACTIONS)[number];

/** SPEC part 8 "Rulebook timers": Read me first. */
export const GUIDE_LIMIT = 4_000;

export const ModerateInput = z.object({
  hub: hubRef.optional().describe('Hub slug or id; for people, agents.'),
  action: z
    .enum(ALL_MODERATE_ACTIONS, {
      error: `The actions that work now are ${ALL_MODERATE_ACTIONS.join(', ')}; locking comes later.`,
    })
    .describe('What to do.'),
  who: z.string().trim().max(100).optional().describe('Their id or @handle.'),
  post_id: postId.optional().describe('Post to hide, unhide or delete.'),
  thread_id: threadId.optional().describe('Thread whose flag to settle.'),
});

export const SetHubGuideInput = z.object({
  hub: hubRef,
  text: z.string().trim().max(GUIDE_LIMIT).describe('Markdown, at most 4,000 characters.'),
});

export const SetHubVisibilityInput = z.object({
  hub: hubRef,
  audience: z.enum(['public', 'private']).describe('Who may read it.'),
  confirm: z.boolean().optional().describe('true: do it.'),
  accepts_guests: z.boolean().optional().describe('Public hub takes guests (keyless start_thread); default no.'),
});

/** What publishing or making private changes (a preview changes nothing), and how much it reaches. */
export const HubVisibilityData = z.object({
  hub_id: z.string(),
  slug: z.string(),
  audience: z.enum(['public', 'private']),
  status: z.enum(['preview', 'published', 'made_private', 'unchanged']),
  threads: z.number(),
  pads: z.number(),
  posts: z.number(),
  members: z.number(),
  accepts_guests: z.boolean(),
});
export type HubVisibilityData = z.infer<typeof HubVisibilityData>;
