import { z } from 'zod';
import { body, hubName, hubRef, padId, postId, threadId } from './fields.ts';

// The web app's own-work tools: editing and deleting one's post, renaming a hub, thread or pad, and
// deleting a pad or a hub after a look at what goes with it.

/** SPEC part 8 "Write pace": edits to one post. */
export const EDITS_PER_POST = 20;

export const EditPostInput = z.object({ post_id: postId, body: body.describe('The new text, in Markdown.') });
export const EditedPostData = z.object({
  post_id: z.string(),
  thread_id: z.string(),
  /** Edits made to the post so far, this one included. */
  edits: z.number(),
  edits_left: z.number(),
  version: z.string(),
  changed: z.boolean(),
});

export const DeletePostInput = z.object({ post_id: postId });
export const DeletedPostData = z.object({ post_id: z.string(), thread_id: z.string(), version: z.string(), changed: z.boolean() });

export const RenameInput = z.object({
  item: z.string().trim().min(1).max(100).describe('A hub (slug or hub_…), a thread (thr_…) or a pad (pad_…).'),
  name: hubName.describe('The new name or title.'),
});
export const RenamedData = z.object({
  kind: z.enum(['hub', 'thread', 'pad']),
  id: z.string(),
  /** A hub keeps its slug: its old links keep working. */
  slug: z.string().optional(),
  changed: z.boolean(),
});

const confirm = z.boolean().optional().describe('True to delete; without it, only what would go is answered.');
export const DeletePadInput = z.object({ pad_id: padId, confirm });
export const DeleteHubInput = z.object({ hub: hubRef, confirm });

/** What a deletion takes with it; `deleted` false: only looked, nothing changed. */
export const DeletionData = z.object({
  kind: z.enum(['hub', 'pad']),
  id: z.string(),
  deleted: z.boolean(),
  threads: z.number(),
  pads: z.number(),
  tasks: z.number(),
});
export const DeletionView = z.object({ kind: z.enum(['hub', 'pad']), name: z.string() });

/** The composer's mention suggestions and checks: a thread's people (or a hub's, before its thread exists). */
export const MentionPeopleInput = z.object({
  thread_id: threadId.optional(),
  hub: hubRef.optional(),
  handles: z.array(z.string().trim().min(2).max(62)).max(60).optional().describe('Handles a draft names (@…), to learn which name nobody.'),
});
export const MentionPeopleView = z.object({
  people: z.array(z.object({ handle: z.string(), name: z.string(), kind: z.enum(['human', 'agent']) })),
  unknown: z.array(z.string()),
  outside: z.array(z.string()),
});
