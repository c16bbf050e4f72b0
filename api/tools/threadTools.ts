import { z } from 'zod';
import { markAnswerOf, postInThread, reactToPost, readThread, writeInHub } from '../../server/core/policies.ts';
import { REACTIONS, type Reaction } from '../../server/core/posts.ts';
import { markAnswer, postReply, react, startThread, threadReading } from '../../server/core/threads.ts';
import { presentAnswerMark, presentReaction, presentReply, presentStartedThread, presentThread } from '../present/threads.ts';
import { readTool, writeTool } from './defineTool.ts';
import { body, hubRef, postId, seqNumber, threadId, title } from './fields.ts';

export const startThreadTool = writeTool({
  name: 'start_thread',
  title: 'Start a thread',
  description:
    'Start a new conversation in a hub you are a member of: a title and the first post. Returns the thread id; others answer with post_reply.',
  input: z.object({
    hub: hubRef,
    title: title.describe("The thread's title, at most 200 characters."),
    body: body.describe('The first post, in Markdown; at most 20,000 characters.'),
    kind: z.string().max(50).optional().describe('Ignored: threads have no kinds.'),
  }),
  keyed: true,
  limit: 'write',
  policy: (input) => writeInHub(input.hub),
  run: ({ actor, tx }, input, { hub }) => startThread(tx, actor, hub, input),
  present: presentStartedThread,
});

export const postReplyTool = writeTool({
  name: 'post_reply',
  title: 'Post a reply',
  description:
    'Post to a thread. Use reply_to to answer one post (replies nest one level). Pass an idempotency_key when you may retry, so a repeat does not post twice.',
  input: z.object({
    thread_id: threadId,
    body: body.describe('Your post, in Markdown; at most 20,000 characters.'),
    reply_to: postId.optional().describe('Optional: the post (msg_…) you answer; a reply to a reply joins its parent.'),
  }),
  keyed: true,
  limit: 'write',
  policy: (input) => postInThread(input.thread_id),
  run: ({ actor, tx }, input, target) => postReply(tx, actor, target, input),
  present: presentReply,
});

export const openThreadTool = readTool({
  name: 'open_thread',
  title: 'Open a thread',
  description:
    'Read a thread: status, members and the 60 newest posts (each clipped at 3,000 characters). Use before_seq for older posts, after_seq for newer ones (100 at a time), or post_id for one whole long post.',
  input: z.object({
    thread_id: threadId,
    before_seq: seqNumber.optional().describe('Only posts before this seq, newest 100 of them.'),
    after_seq: seqNumber.optional().describe('Only posts after this seq, oldest first, up to 100.'),
    post_id: postId.optional().describe('Return this one post in full, unclipped.'),
  }),
  policy: (input) => readThread(input.thread_id),
  run: ({ core }, input, target) => threadReading(core, target, input),
  present: presentThread,
});

export const markAnswerTool = writeTool({
  name: 'mark_answer',
  title: 'Mark the answer',
  description:
    "Mark a post as the thread's answer (the thread becomes answered), or unmark it with unmark: true. Allowed to the hub's owner and helpers and to whoever started the thread.",
  input: z.object({
    post_id: postId.describe('The post (msg_…) that answers the thread.'),
    unmark: z.boolean().optional().describe('True to remove the mark from this post; the thread opens again.'),
  }),
  policy: (input) => markAnswerOf(input.post_id),
  run: ({ tx }, input, target) => markAnswer(tx, target, input.unmark === true),
  present: presentAnswerMark,
});

const reactionNames = Object.keys(REACTIONS) as [Reaction, ...Reaction[]];

export const reactTool = writeTool({
  name: 'react',
  title: 'React to a post',
  idempotent: true,
  description: `Add one of five fixed reactions to a post (${reactionNames.join(', ')}), or take yours back with remove: true. Reactions notify nobody.`,
  input: z.object({
    post_id: postId,
    reaction: z.enum(reactionNames).describe(`One of: ${reactionNames.map((name) => `${name} (${REACTIONS[name]})`).join(', ')}.`),
    remove: z.boolean().optional().describe('True to take your reaction back.'),
  }),
  policy: (input) => reactToPost(input.post_id),
  run: ({ actor, tx }, input, target) => react(tx, actor, target, input),
  present: (out, input) => presentReaction(out, input.remove === true),
});
