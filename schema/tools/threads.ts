import { z } from 'zod';
import { Role } from '../rows.ts';
import { blockId, body, hubRef, padId, postId, seqNumber, threadId, title } from './fields.ts';
import { TaskData, TaskView } from './tasks.ts';
import { FlagState, Kind, Seat, ThreadStatus } from './views.ts';

// start_thread, post_reply, open_thread, mark_answer, react, catch_up, report.

/** The five reactions, in the order they are offered. */
export const Reaction = z.enum(['thumbs_up', 'heart', 'laugh', 'eyes', 'check']);
export type Reaction = z.infer<typeof Reaction>;

export const REASON_MAX = 500;

export const StartThreadInput = z.object({
  hub: hubRef,
  title: title.describe('Title.'),
  body: body.describe('First post, Markdown.'),
  pad_id: padId.optional().describe('Pad it is about.'),
  anchor_block: blockId.optional().describe('Section id in that pad.'),
  flag: z.boolean().optional().describe('Section is wrong (verified only).'),
  kind: z.string().max(50).optional().describe('Ignored.'),
});

/** Who a post's mentions did not reach: past the cap, or a chain of agents too long to wake anyone. */
const mentionData = { not_notified: z.array(z.string()).optional(), quiet: z.boolean().optional() };

export const StartedThreadData = z.object({
  thread_id: z.string(),
  post_id: z.string(),
  seq: z.number(),
  hub_id: z.string(),
  status: z.enum(['open', 'folded']),
  /** Why the first post, and so the thread, was folded (more links than its author may post). */
  folded: z.string().optional(),
  about: z.object({ pad_id: z.string(), block_id: z.string() }).optional(),
  flag: z.literal('open').optional(),
  ...mentionData,
});

export const PostReplyInput = z.object({
  thread_id: threadId.describe('Thread id (thr_…) or DM id (dm_…).'),
  body: body.describe('Your post, Markdown.'),
  reply_to: postId.optional().describe('Post you answer (msg_…).'),
});

export const PostedReplyData = z.object({
  post_id: z.string(),
  thread_id: z.string(),
  seq: z.number(),
  reply_to: z.string().optional(),
  /** Why the post was folded, and the thread's status that follows. */
  folded: z.string().optional(),
  status: z.literal('folded').optional(),
  ...mentionData,
});
/** post_reply in a DM (dm_…). */
export const PostedDmData = z.object({ post_id: z.string(), dm_id: z.string(), seq: z.number() });

export const OpenThreadInput = z.object({
  thread_id: threadId,
  before_seq: seqNumber.optional().describe('The 100 posts before this seq.'),
  after_seq: seqNumber.optional().describe('The 100 posts after this seq.'),
  post_id: postId.optional().describe('Read this post whole.'),
});

/** A post's ids and marks as structured content: no participant text. */
export const PostData = z.object({
  id: z.string(),
  seq: z.number(),
  author_id: z.string(),
  author_kind: Kind,
  created: z.string(),
  reply_to: z.string().optional(),
  is_answer: z.boolean().optional(),
  deleted: z.boolean().optional(),
  hidden: z.boolean().optional(),
  /** Its author changed its text since it was posted. */
  edited: z.boolean().optional(),
  /** Why the post is folded (too many links), when it is. */
  folded: z.string().optional(),
  reactions: z.record(z.string(), z.number()).optional(),
  clipped: z.boolean().optional(),
  /** The whole body's length, when clipped. */
  length: z.number().optional(),
});
export type PostData = z.infer<typeof PostData>;

export const DecisionData = z.object({ id: z.string(), pad_id: z.string(), pad_version: z.number(), by: z.string(), at: z.string(), proposed: z.literal(true).optional() });
export type DecisionData = z.infer<typeof DecisionData>;

/** What open_thread's and catch_up's data begin with: the thread's ids and states. */
export const ThreadHeadData = z.object({
  thread_id: z.string(),
  hub_id: z.string(),
  status: ThreadStatus,
  /** The thread's version, as a string: wait_for_changes takes it back. */
  version: z.string(),
  answer: z.string().optional(),
  about: z.object({ pad_id: z.string(), block_id: z.string() }).optional(),
  flag: FlagState.optional(),
  /** Present when the thread is locked: it takes no writes until unlocked. */
  locked: z.literal(true).optional(),
  post_count: z.number(),
});

export const OpenThreadData = ThreadHeadData.extend({
  posts: z.array(PostData).readonly(),
  members: z.array(z.object({ id: z.string(), kind: Kind, role: z.string().optional() })),
  pads: z.array(z.object({ id: z.string(), version: z.number() })),
  tasks: z.array(TaskData),
  decisions: z.array(DecisionData),
  /** Pass as before_seq (after_seq) for the posts before (after) this page, when there are any. */
  before_seq: z.number().optional(),
  after_seq: z.number().optional(),
  seat: z.object({ role: Role }).optional(),
});

/** A post as the web app renders it: the body clipped, empty when hidden or deleted for a reader who may not see it. */
export const ThreadPostView = z.object({
  id: z.string(),
  seq: z.number(),
  /** `reach`: the author reads verified, so their links are live. */
  author: z.object({ id: z.string(), name: z.string(), kind: Kind, reach: z.boolean() }),
  /** Which way it came in: `assistant`, `via <host>`, `agent` or `direct`; absent on older posts. */
  caller: z.string().optional(),
  body: z.string(),
  created: z.string(),
  reply_to: z.string().optional(),
  is_answer: z.boolean(),
  hidden: z.boolean(),
  deleted: z.boolean(),
  edited: z.boolean(),
  /** Why the post is folded (too many links), when it is. */
  folded: z.string().optional(),
  /** Counts by reaction. */
  reactions: z.record(z.string(), z.number()),
  /** The reactions the reader gave. */
  mine: z.array(z.string()).readonly(),
  clipped: z.boolean().optional(),
});
export type ThreadPostView = z.infer<typeof ThreadPostView>;

export const DecisionView = z.object({
  id: z.string(),
  pad_id: z.string(),
  pad_title: z.string(),
  text: z.string(),
  by: z.object({ id: z.string(), name: z.string(), kind: Kind }),
  at: z.string(),
});
export type DecisionView = z.infer<typeof DecisionView>;

/** What the reader may do in a thread beyond posting, decided by the server from their seat. */
export const ThreadCan = z.object({ moderate: z.boolean(), mark_answer: z.boolean(), rename: z.boolean(), lock: z.boolean() });
export type ThreadCan = z.infer<typeof ThreadCan>;

export const ThreadMemberView = z.object({ id: z.string(), name: z.string(), kind: Kind, role: z.string().nullable() });
export type ThreadMemberView = z.infer<typeof ThreadMemberView>;

export const ThreadView = z.object({
  thread: z.object({
    id: z.string(),
    title: z.string(),
    status: ThreadStatus,
    version: z.string(),
    answer: z.string().optional(),
    accepts_guests: z.boolean(),
    hub: z.object({ slug: z.string(), name: z.string() }),
    /** The pad section the thread is about. */
    about: z.object({ pad_id: z.string(), pad_title: z.string(), block_id: z.string(), section_title: z.string() }).optional(),
    flag: FlagState.optional(),
    locked: z.literal(true).optional(),
  }),
  posts: z.array(ThreadPostView),
  /** Those who posted, with their seat in the hub (null without one). */
  members: z.array(ThreadMemberView),
  pads: z.array(z.object({ id: z.string(), title: z.string(), version: z.number() })),
  tasks: z.array(TaskView),
  decisions: z.array(DecisionView),
  seat: Seat,
  can: ThreadCan,
});
export type ThreadView = z.infer<typeof ThreadView>;

export const MarkAnswerInput = z.object({
  post_id: postId.describe('The answering post (msg_…).'),
  unmark: z.boolean().optional().describe('True to remove the mark.'),
});

export const ReactInput = z.object({
  post_id: postId,
  reaction: Reaction.describe('Which reaction.'),
  remove: z.boolean().optional().describe('True to take it back.'),
});

export const ReactData = z.object({ post_id: z.string(), thread_id: z.string(), reaction: Reaction, count: z.number(), mine: z.boolean() });

export const CatchUpInput = z.object({ thread_id: threadId });

export const CatchUpData = ThreadHeadData.extend({
  /** Where the reader last read the thread; absent the first time. */
  last_read: z.object({ seq: z.number(), at: z.string() }).optional(),
  since: z.object({ new_posts: z.number(), posts: z.array(PostData), tasks: z.array(TaskData), decisions: z.array(DecisionData) }),
  open_tasks: z.array(TaskData),
  pads: z.array(z.object({ id: z.string(), version: z.number() })),
  decisions: z.array(DecisionData),
});
export type CatchUpData = z.infer<typeof CatchUpData>;

export const ReportInput = z.object({
  post_id: postId,
  reason: z.string().trim().max(REASON_MAX).optional().describe('Why.'),
});

export const MarkAnswerData = z.object({ thread_id: z.string(), status: z.string(), version: z.string(), answer: z.string().optional(), flag: FlagState.optional() });

export const ReportData = z.object({ report_id: z.string(), post_id: z.string(), thread_id: z.string(), reported_at: z.string(), already: z.literal(true).optional() });
