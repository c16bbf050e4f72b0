import { deleteOwnPost, editOwnPost, ownPost } from '../../server/core/policies/ownPosts.ts';
import { renameItem, renameTarget } from '../../server/core/policies/renaming.ts';
import { deleteHub, deletePad, hubToDelete, padToDelete } from '../../server/core/policies/deletion.ts';
import { presentDeletedPost, presentDeletion, presentEditedPost, presentRenamed } from '../present/ownWork.ts';
import { readTool, writeTool } from './defineTool.ts';
import { mentionPeople } from '../../server/core/inbox/mentionPeople.ts';
import { readHub, readThread } from '../../server/core/policies/policies.ts';
import { invalid } from '../../schema/errors.ts';
import { DeleteHubInput, DeletePadInput, DeletePostInput, EditPostInput, MentionPeopleInput, RenameInput } from '../../schema/tools/ownWork.ts';
import { presentMentionPeople } from '../present/ownWork.ts';

// The web app's tools for changing what one made: the same rights and limits whatever page calls them.

export const editPostTool = writeTool({
  name: 'ui_edit_post',
  title: 'Edit your post',
  kind: 'destructive',
  audience: 'app',
  description: 'Replace the text of a post you wrote; a post takes 20 edits. It then shows as edited.',
  input: EditPostInput,
  texts: ['body'],
  limits: ['write'],
  refuses: { conflict: 'The post was deleted, or was edited 20 times already' },
  policy: (input) => ownPost(input.post_id, 'edit'),
  run: ({ core, actor, tx }, input, target) => editOwnPost(core, tx, actor, target, input.body),
  present: presentEditedPost,
});

export const deletePostTool = writeTool({
  name: 'ui_delete_post',
  title: 'Delete your post',
  kind: 'destructive',
  audience: 'app',
  description: 'Erase a post you wrote; it reads (deleted) everywhere.',
  input: DeletePostInput,
  policy: (input) => ownPost(input.post_id, 'delete'),
  run: ({ actor, tx }, _input, target) => deleteOwnPost(tx, actor, target),
  present: presentDeletedPost,
});

export const renameTool = writeTool({
  name: 'ui_rename',
  title: 'Rename',
  kind: 'write, idempotent',
  audience: 'app',
  description: "Rename a hub (owner and helpers; its slug stays), a thread (who started it) or a pad (who made it); the hub's owner and helpers rename anything in it.",
  input: RenameInput,
  texts: ['name'],
  limits: ['write'],
  policy: (input) => (scope) => renameTarget(input.item, scope.actor)(scope),
  run: ({ tx }, input, target) => renameItem(tx, target, input.name),
  present: presentRenamed,
});

export const deletePadTool = writeTool({
  name: 'ui_delete_pad',
  title: 'Delete a pad',
  kind: 'destructive',
  audience: 'app',
  description: 'Without confirm: what deleting the pad takes with it. With confirm: true, delete it (its maker, or the hub owner and helpers).',
  input: DeletePadInput,
  policy: (input) => (scope) => padToDelete(input.pad_id, scope.actor)(scope),
  run: ({ core, actor, tx }, input, target) => deletePad(core, tx, actor, target, input.confirm === true),
  present: (out) => presentDeletion<'ui_delete_pad'>(out),
});

export const deleteHubTool = writeTool({
  name: 'ui_delete_hub',
  title: 'Delete a hub',
  kind: 'destructive',
  audience: 'app',
  description: 'Without confirm: how many threads, pads and tasks deleting the hub takes with it. With confirm: true, delete it (its owner).',
  input: DeleteHubInput,
  policy: (input) => hubToDelete(input.hub),
  run: ({ core, actor, tx }, input, target) => deleteHub(core, tx, actor, target, input.confirm === true),
  present: (out) => presentDeletion<'ui_delete_hub'>(out),
});

/** The composer's `@` suggestions, and which handles of a draft name nobody (or someone who would not be told). */
export const mentionPeopleTool = readTool({
  name: 'ui_mention_people',
  title: 'People to mention',
  kind: 'read',
  audience: 'app',
  description: "The people of a thread (or a hub) to suggest after @, and which of a draft's handles name nobody.",
  input: MentionPeopleInput,
  policy: (input) => async (scope) => {
    if ((input.thread_id === undefined) === (input.hub === undefined)) {
      throw invalid('Give thread_id, or hub for a thread not started yet.', { issues: [{ path: 'thread_id', message: 'Give exactly one of thread_id and hub.' }] });
    }
    if (input.thread_id !== undefined) {
      const { hub, thread } = await readThread(input.thread_id)(scope);
      return { hubId: hub.id, threadId: thread.id };
    }
    return { hubId: (await readHub(input.hub!)(scope)).hub.id, threadId: null };
  },
  run: ({ conn }, input, place) => mentionPeople(conn, place, (input.handles ?? []).map((handle) => handle.toLowerCase())),
  present: presentMentionPeople,
});

export const ownWorkTools = [editPostTool, deletePostTool, renameTool, deletePadTool, deleteHubTool, mentionPeopleTool];
