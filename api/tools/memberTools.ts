import { moderate, setHubGuide, setHubVisibility } from '../../server/core/places/members.ts';
import { hubWith } from '../../server/core/policies/policies.ts';
import { moderatePost, moderationTarget } from '../../server/core/policies/moderation.ts';
import { pauseHubAgents } from '../../server/core/limits/pauses.ts';
import { settleFlag } from '../../server/core/threads/flags.ts';
import { lockItem } from '../../server/core/policies/locking.ts';
import { presentAgentsPause, presentGuide, presentLock, presentModeration, presentVisibility } from '../present/members.ts';
import { presentFlagMove, presentPostModeration } from '../present/threads.ts';
import { writeTool } from './defineTool.ts';
import { ModerateInput, SetHubGuideInput, SetHubVisibilityInput } from '../../schema/tools/members.ts';

/** Letting people in and setting roles: approvals (SPEC part 2), which an assistant makes only with a click in the view. */
const APPROVALS = new Set<string>(['let_in', 'turn_away', 'name_helper', 'name_member']);

export const moderateTool = writeTool({
  name: 'moderate',
  keyed: true,
  title: 'Moderate',
  kind: 'destructive',
  description:
    'Owner, helpers: let_in or turn_away a join request, remove (hub, who); pause_agents, unpause_agents (hub); hide, unhide, delete a post (post_id); settle a flag (thread_id); lock, unlock (thread_id, pad_id). Owner: name_helper, name_member.',
  input: ModerateInput,
  refuses: { conflict: 'let_in to a hub of 5,000 members' },
  approves: (input) => APPROVALS.has(input.action),
  policy: (input) => moderationTarget(input),
  run: async ({ core, actor, tx }, input, target) => {
    if (target.kind === 'lock') return lockItem(core, tx, actor, target.item, target.action);
    if (target.kind === 'post') return moderatePost(tx, actor, target, target.action);
    if (target.kind === 'flag') return settleFlag(tx, actor, target.thread);
    if (target.kind === 'agents') return pauseHubAgents(core, tx, actor, target.hub, target.action);
    return moderate(tx, target, { action: target.action, who: target.who }, actor.id);
  },
  present: (out) =>
    'person' in out
      ? presentModeration(out)
      : 'post_id' in out
        ? presentPostModeration(out)
        : 'paused' in out
          ? presentAgentsPause(out)
          : 'item_id' in out
            ? presentLock(out)
            : presentFlagMove(out),
});

export const setHubGuideTool = writeTool({
  name: 'set_hub_guide',
  title: 'Write the Read me first',
  kind: 'write, idempotent',
  description: "Owner and helpers: replace the hub's Read me first, which open_hub shows first; empty text clears it.",
  input: SetHubGuideInput,
  texts: ['text'],
  policy: (input) => hubWith(input.hub, 'guide', 'Only the owner and helpers of this hub write its Read me first.'),
  run: ({ actor, tx }, input, { hub }) => setHubGuide(tx, actor, hub, input.text),
  present: presentGuide,
});

export const setHubVisibilityTool = writeTool({
  name: 'set_hub_visibility',
  keyed: true,
  title: 'Publish or make private',
  kind: 'destructive',
  description: 'Owner: make the hub public or private, and say whether it takes guests. Without confirm, only previews an audience change.',
  input: SetHubVisibilityInput,
  // Publishing or making private, not its preview.
  approves: (input) => input.confirm === true,
  policy: (input) => hubWith(input.hub, 'audience', 'Only the owner of this hub publishes it or makes it private.'),
  run: ({ core, tx }, input, { hub }) => setHubVisibility(core, tx, hub, input),
  present: presentVisibility,
});
