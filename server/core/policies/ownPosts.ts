import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { Policy, PostTarget } from '../kernel/policy.ts';
import { AppError, forbidden } from '../../../schema/errors.ts';
import { EDITS_PER_POST } from '../../../schema/tools/ownWork.ts';
import { foldReason } from '../threads/folding.ts';
import { reactToPost } from './policies.ts';
import { moderatePost } from './moderation.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * A person's own posts (the web app's `ui_edit_post` and `ui_delete_post`): only the author edits or
 * deletes a post, and only while they may still post in its thread. Deleting by the hub's owner and
 * helpers is `moderate`'s; both erase the text for good, and the post reads `(deleted)` everywhere.
 */
const AuthorRow = z.object({ author_id: z.string() });

export const ownPost = (id: string, doing: 'edit' | 'delete'): Policy<PostTarget> => async (scope) => {
  const target = await reactToPost(id)(scope);
  const author = await scope.conn.oneFirst(sql.type(AuthorRow)`SELECT author_id FROM posts WHERE id = ${target.post.id}`);
  if (author !== scope.actor.id) {
    throw forbidden(
      doing === 'edit'
        ? 'Only its author edits a post; answer it with post_reply instead.'
        : `Only its author deletes a post (the owner and helpers of ${target.hub.slug} may too, with moderate); report it if something is wrong with it.`,
    );
  }
  return target;
};

const EditStateRow = z.object({ edit_count: z.number(), deleted: z.boolean(), body: z.string() });
const VersionRow = z.object({ version: z.number() });

export type EditedPost = { post_id: string; thread_id: string; edits: number; edits_left: number; version: number; changed: boolean };

/**
 * Puts new text in one's own post (SPEC part 8: at most 20 edits to one post), raising the thread's
 * version so every kept page and ETag moves on. The same text again changes nothing and counts no
 * edit. Mentions added by an edit notify nobody: the post was already delivered. More links than
 * the author may post fold it, as they would a new post.
 */
export async function editOwnPost(core: Core, tx: CommonQueryMethods, actor: Actor, { post, thread }: PostTarget, body: string): Promise<EditedPost> {
  const state = await tx.one(sql.type(EditStateRow)`
    SELECT edit_count, deleted_at IS NOT NULL AS deleted, body FROM posts WHERE id = ${post.id} FOR UPDATE`);
  if (state.deleted) throw new AppError('conflict', 'This post was deleted, so it cannot be edited; post_reply to say it again.');
  const unchanged = { post_id: post.id, thread_id: thread.id, edits: state.edit_count, edits_left: EDITS_PER_POST - state.edit_count, version: thread.version, changed: false };
  if (state.body === body) return unchanged;
  if (state.edit_count >= EDITS_PER_POST) {
    throw new AppError('conflict', `This post was edited ${EDITS_PER_POST} times, the most a post takes; post_reply with the correction instead.`, {
      edits: state.edit_count,
      limit: EDITS_PER_POST,
    });
  }
  const folded = await foldReason(core, tx, actor, body);
  await tx.query(sql.unsafe`
    UPDATE posts SET body = ${body}, edit_count = edit_count + 1, edited_at = now(), folded = coalesce(${folded}, folded)
    WHERE id = ${post.id}`);
  const version = await tx.oneFirst(sql.type(VersionRow)`
    UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${thread.id} RETURNING version`);
  threadsMoved(tx, thread.id);
  const edits = state.edit_count + 1;
  return { post_id: post.id, thread_id: thread.id, edits, edits_left: EDITS_PER_POST - edits, version, changed: true };
}

/** Deletes one's own post: its text is erased for good, as a moderator's delete does. */
export async function deleteOwnPost(tx: CommonQueryMethods, actor: Actor, target: PostTarget) {
  const { post_id, thread_id, version, changed } = await moderatePost(tx, actor, target, 'delete');
  return { post_id, thread_id, version, changed };
}
