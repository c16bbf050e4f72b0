import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { forbidden, invalid } from '../../../schema/errors.ts';
import { AGENT_ACTIONS, LOCK_ACTIONS, POST_ACTIONS, type AgentAction, type AnyModerateAction, type LockAction, type ModerateAction, type PostAction } from '../../../schema/tools/members.ts';
import { lockTarget, type LockTarget } from './locking.ts';
import { hubWith, moderateHub, readPost, readThread } from './policies.ts';
import type { HubTarget, Policy, PostTarget, PolicyScope, ThreadTarget } from '../kernel/policy.ts';
import { allows } from '../kernel/rights.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * `moderate` on posts and threads (SPEC part 2 "Hub roles and rights"): the hub's owner and helpers
 * hide a post (its text is kept, shown to nobody), unhide it, or delete it (its text erased for good),
 * and settle a thread's flag. The people actions (let in, remove, name helpers) are members.ts', and
 * pausing the hub's agents (pause_agents, unpause_agents) pauses.ts'.
 */
export type ModerateInput = {
  hub?: string | undefined;
  action: AnyModerateAction;
  who?: string | undefined;
  thread_id?: string | undefined;
  post_id?: string | undefined;
  pad_id?: string | undefined;
};

export type ModerationTarget =
  | ({ kind: 'people'; action: ModerateAction; who: string } & HubTarget)
  | ({ kind: 'post'; action: PostAction } & PostTarget)
  | ({ kind: 'agents'; action: AgentAction } & HubTarget)
  | ({ kind: 'flag' } & ThreadTarget)
  | { kind: 'lock'; action: LockAction; item: LockTarget };

const isPostAction = (action: string): action is PostAction => (POST_ACTIONS as readonly string[]).includes(action);
const isAgentAction = (action: string): action is AgentAction => (AGENT_ACTIONS as readonly string[]).includes(action);
const isLockAction = (action: string): action is LockAction => (LOCK_ACTIONS as readonly string[]).includes(action);

const needs = (field: string, action: string, what: string) =>
  invalid(`Action "${action}" needs ${field}: ${what}.`, { issues: [{ path: field, message: `Required for "${action}".` }] });

const notOfHub = (what: string, slug: string, given: string) =>
  invalid(`That ${what} is in the hub ${slug}, not ${given}; leave hub out or pass that one.`, { issues: [{ path: 'hub', message: 'Not the hub of that item.' }] });

/** The item a moderation acts on, where the caller is an owner or helper; `hub`, when given with an item, must be its hub. */
export const moderationTarget = (input: ModerateInput): Policy<ModerationTarget> => async (scope: PolicyScope) => {
  const { action } = input;
  if (isLockAction(action)) {
    const item = await lockTarget(scope, input, action);
    if (input.hub !== undefined && input.hub !== item.hub.slug && input.hub !== item.hub.id) throw notOfHub(item.kind, item.hub.slug, input.hub);
    return { kind: 'lock', action, item };
  }
  if (isAgentAction(action)) {
    if (input.hub === undefined) throw needs('hub', action, 'the hub slug or id');
    return { kind: 'agents', action, ...(await hubWith(input.hub, 'moderate', 'Only the owner and helpers of this hub pause or unpause its agents.')(scope)) };
  }
  if (action !== 'settle' && !isPostAction(action)) {
    if (input.hub === undefined) throw needs('hub', action, 'the hub slug or id');
    if (input.who === undefined) throw needs('who', action, 'their id or @handle');
    return { kind: 'people', action, who: input.who, ...(await moderateHub(input.hub, action)(scope)) };
  }
  let target: ThreadTarget | PostTarget;
  if (action === 'settle') {
    if (input.thread_id === undefined) throw needs('thread_id', action, 'the thread whose flag to settle (thr_…)');
    target = await readThread(input.thread_id)(scope);
  } else {
    if (input.post_id === undefined) throw needs('post_id', action, 'the post (msg_…)');
    target = await readPost(input.post_id)(scope);
  }
  if (input.hub !== undefined && input.hub !== target.hub.slug && input.hub !== target.hub.id) throw notOfHub(action === 'settle' ? 'thread' : 'post', target.hub.slug, input.hub);
  if (!allows(target.seat, 'moderate')) {
    throw forbidden(
      action === 'settle'
        ? `Only the owner and helpers of ${target.hub.slug} settle a flag; say what you found with post_reply in the thread.`
        : `Only the owner and helpers of ${target.hub.slug} hide or delete posts; report the post (the report tool) and they will see it.`,
      { your_role: target.seat ?? 'none' },
    );
  }
  return action === 'settle' ? { kind: 'flag', ...target } : { kind: 'post', action, ...(target as PostTarget) };
};

const PostStateRow = z.object({ hidden: z.boolean(), deleted: z.boolean(), version: z.number() });
export type PostModeration = { action: PostAction; post_id: string; thread_id: string; hidden: boolean; deleted: boolean; version: number; changed: boolean };

/**
 * Hides, unhides or deletes one post, raising the thread's version when anything changed (so every
 * kept page and ETag of the thread moves on). A deleted post stays deleted: unhiding it changes nothing.
 */
export async function moderatePost(tx: CommonQueryMethods, actor: Actor, { post, thread }: PostTarget, action: PostAction): Promise<PostModeration> {
  const change = {
    hide: sql.fragment`hidden_at = now(), hidden_by = ${actor.id} WHERE id = ${post.id} AND hidden_at IS NULL AND deleted_at IS NULL`,
    unhide: sql.fragment`hidden_at = NULL, hidden_by = NULL WHERE id = ${post.id} AND hidden_at IS NOT NULL AND deleted_at IS NULL`,
    delete: sql.fragment`body = '', deleted_at = now(), deleted_by = ${actor.id} WHERE id = ${post.id} AND deleted_at IS NULL`,
  }[action];
  const done = await tx.query(sql.unsafe`UPDATE posts SET ${change}`);
  const changed = done.rowCount > 0;
  if (changed) {
    await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${thread.id}`);
    threadsMoved(tx, thread.id);
  }
  const state = await tx.one(sql.type(PostStateRow)`
    SELECT o.hidden_at IS NOT NULL AS hidden, o.deleted_at IS NOT NULL AS deleted, t.version
    FROM posts o JOIN threads t ON t.id = o.thread_id WHERE o.id = ${post.id}`);
  return { action, post_id: post.id, thread_id: thread.id, ...state, changed };
}
