import { z } from 'zod';
import { Role } from '../rows.ts';
import { given, hubRef, padId, postId, threadId } from './fields.ts';
import { FlagState } from './views.ts';

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
/** Locking a thread or a pad: it takes no writes until unlocked; reading goes on. */
export const LOCK_ACTIONS = ['lock', 'unlock'] as const;
export type LockAction = (typeof LOCK_ACTIONS)[number];
export const ALL_MODERATE_ACTIONS = [...MODERATE_ACTIONS, 'settle', ...POST_ACTIONS, ...AGENT_ACTIONS, ...LOCK_ACTIONS] as const;
export type AnyModerateAction = (typeof ALL_MODERATE_ACTIONS)[number];

/** SPEC part 8 "Rulebook timers": Read me first. */
export const GUIDE_LIMIT = 4_000;

export const ModerateInput = z.object({
  hub: hubRef.optional(),
  action: z
    .enum(ALL_MODERATE_ACTIONS, {
      error: `The actions are ${ALL_MODERATE_ACTIONS.join(', ')}.`,
    })
    .describe('What to do.'),
  who: given(z.string().trim().max(100)).optional().describe('Id or @handle.'),
  post_id: postId.optional(),
  thread_id: threadId.optional(),
  pad_id: padId.optional(),
});

export const SetHubGuideInput = z.object({
  hub: hubRef,
  text: z.string().trim().max(GUIDE_LIMIT).describe('Markdown.'),
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

export const GuideData = z.object({ hub_id: z.string(), slug: z.string(), characters: z.number(), changed: z.boolean() });

/** moderate's answer, by action: people, a hub's agents, a post, a flag. */
export const ModerateData = z.union([
  z.object({ hub_id: z.string(), slug: z.string(), action: z.enum(MODERATE_ACTIONS), participant_id: z.string(), role: Role.optional(), changed: z.boolean() }),
  z.object({ hub_id: z.string(), slug: z.string(), action: z.enum(AGENT_ACTIONS), agents_paused: z.boolean(), changed: z.boolean() }),
  z.object({ post_id: z.string(), thread_id: z.string(), action: z.enum(POST_ACTIONS), hidden: z.boolean(), deleted: z.boolean(), version: z.string(), changed: z.boolean() }),
  z.object({ thread_id: z.string(), flag: FlagState.nullable(), version: z.string(), changed: z.boolean() }),
  z.object({ item_id: z.string(), kind: z.enum(['thread', 'pad']), action: z.enum(LOCK_ACTIONS), locked: z.boolean(), locked_by: z.string().nullable(), changed: z.boolean() }),
]);
