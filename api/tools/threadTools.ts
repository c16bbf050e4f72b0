import { isDmId, postDmMessage, postInDm, type DmPosted, type DmTarget } from '../../server/core/dms/dms.ts';
import { markAnswerOf, postInThread, reactToPost, readThread, writeInHub } from '../../server/core/policies/policies.ts';
import type { Policy, ThreadTarget } from '../../server/core/kernel/policy.ts';
import { markAnswer, openNewThread, postReply, react, type PostedReply } from '../../server/core/threads/threads.ts';
import { openThread } from '../../server/core/threads/threadReading.ts';
import { presentAnswerMark, presentReaction, presentReply, presentStartedThread, presentThread } from '../present/threads.ts';
import { presentDmPost } from '../present/dms.ts';
import { liveWriteTool, readTool, writeTool } from './defineTool.ts';
import { MarkAnswerInput, OpenThreadInput, PostReplyInput, ReactInput, StartThreadInput } from '../../schema/tools/threads.ts';

// A live write: the pad a thread is about and the caller's standing are read before its transaction.
export const startThreadTool = liveWriteTool({
  name: 'start_thread',
  card: true,
  title: 'Start a thread',
  kind: 'write',
  description:
    'Start a thread in a hub you are a member of, optionally about a pad section or flagging it as wrong.',
  input: StartThreadInput,
  texts: ['title', 'body'],
  keyed: true,
  limits: ['write', 'post'],
  policy: (input) => writeInHub(input.hub),
  run: ({ core, actor, write }, input, { hub }) => openNewThread(core, actor, hub, input, write),
  present: presentStartedThread,
});

export const postReplyTool = writeTool({
  name: 'post_reply',
  card: true,
  title: 'Post a reply',
  kind: 'write',
  description:
    'Post to a thread or an open DM; reply_to answers one post, one level deep.',
  input: PostReplyInput,
  texts: ['body'],
  keyed: true,
  limits: ['write', 'post'],
  // A DM (dm_…) has its own tables and its own check: only its two, and only while open.
  policy: (input): Policy<ThreadTarget | DmTarget> => (isDmId(input.thread_id) ? postInDm(input.thread_id) : postInThread(input.thread_id)),
  run: ({ core, actor, tx }, input, target): Promise<PostedReply | DmPosted> =>
    'dm' in target ? postDmMessage(tx, actor, target, input) : postReply(core, tx, actor, target, input),
  present: (out) => ('dm_id' in out ? presentDmPost(out) : presentReply(out)),
});

export const openThreadTool = readTool({
  name: 'open_thread',
  card: true,
  title: 'Open a thread',
  kind: 'read',
  description:
    'Read a thread: status, members, pads, tasks, decisions and the 60 newest posts, each clipped at 3,000 characters.',
  input: OpenThreadInput,
  policy: (input) => readThread(input.thread_id),
  run: ({ core, actor }, input, target) => openThread(core, actor, target, input),
  present: presentThread,
});

export const markAnswerTool = writeTool({
  name: 'mark_answer',
  keyed: true,
  title: 'Mark the answer',
  kind: 'write',
  description:
    "Mark (or unmark) the post that answers its thread: the hub's owner and helpers, and whoever started it.",
  input: MarkAnswerInput,
  policy: (input) => markAnswerOf(input.post_id),
  run: ({ actor, tx }, input, target) => markAnswer(tx, actor, target, input.unmark === true),
  present: presentAnswerMark,
});

export const reactTool = writeTool({
  name: 'react',
  title: 'React to a post',
  kind: 'write, idempotent',
  description: 'React to a post, or take your reaction back. Reactions notify nobody.',
  input: ReactInput,
  limits: ['reaction'],
  policy: (input) => reactToPost(input.post_id),
  run: ({ actor, tx }, input, target) => react(tx, actor, target, input),
  present: (out, input) => presentReaction(out, input.remove === true),
});
