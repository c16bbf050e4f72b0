import { clip, inline } from '../../server/core/kernel/framing.ts';
import { REACTIONS } from '../../server/core/threads/posts.ts';
import type { PostView } from '../../server/core/threads/posts.ts';
import { group, line, said, shared, type TextPart } from '../../server/core/kernel/result.ts';
import type { Decision } from '../../server/core/threads/decisions.ts';
import type { FlagMove } from '../../server/core/threads/flags.ts';
import type { PostModeration } from '../../server/core/policies/moderation.ts';
import type { Task } from '../../server/core/tasks/tasks.ts';
import { POST_CLIP, type AnswerMark, type PostedReply, type Reacted, type StartedThread } from '../../server/core/threads/threads.ts';
import type { ThreadAbout, ThreadReading } from '../../server/core/threads/threadReading.ts';
import { postParts } from './posts.ts';
import { LINKS_UNVERIFIED, LINKS_VERIFIED } from '../../server/core/threads/folding.ts';
import { mentionData, mentionLines } from './inbox.ts';
import { taskData, taskView } from './tasks.ts';
import type { Answer } from './answer.ts';
import type { DecisionData, DecisionView, PostData, ThreadPostView, ThreadView } from '../../schema/tools/threads.ts';

export function presentStartedThread(out: StartedThread): Answer<'start_thread'> {
  const { about } = out;
  const parts = [line(`Started the thread ${inline(out.title)} (id ${out.thread_id}) in ${out.hub.slug}, with your post ${out.post_id} as seq 1.`)];
  if (about) {
    parts.push(
      line(
        `It is about the section ${inline(about.title)} (${about.block}) of the pad ${about.padId}${about.flag ? ', and flags it as wrong: the section reads disputed until the owner or a helper settles the flag (moderate action "settle", or marking an answer)' : ''}.`,
      ),
    );
  }
  parts.push(line(`Read it with open_thread "${out.thread_id}"; others answer with post_reply.`), ...foldedLines(out.folded), ...mentionLines(out.mentions));
  return {
    parts,
    data: {
      thread_id: out.thread_id,
      post_id: out.post_id,
      seq: out.seq,
      hub_id: out.hub.id,
      status: out.folded ? 'folded' : 'open',
      ...(out.folded ? { folded: out.folded } : {}),
      ...(about ? { about: { pad_id: about.padId, block_id: about.block }, ...(about.flag ? { flag: 'open' } : {}) } : {}),
      ...mentionData(out.mentions),
    },
  };
}

export const presentReply = (out: PostedReply): Answer<'post_reply'> => ({
  parts: [
    line(`Posted ${out.post_id} as seq ${out.seq} in ${inline(out.thread.title)} (${out.thread.id})${out.reply_to ? `, in reply to ${out.reply_to}` : ''}.`),
    ...foldedLines(out.folded),
    ...mentionLines(out.mentions),
  ],
  data: {
    post_id: out.post_id,
    thread_id: out.thread.id,
    seq: out.seq,
    ...(out.reply_to ? { reply_to: out.reply_to } : {}),
    ...(out.folded ? { folded: out.folded, status: 'folded' as const } : {}),
    ...mentionData(out.mentions),
  },
});

/** The author of a folded post is told why, and how to post so it is not (SPEC part 8 "Links in one post"). */
function foldedLines(folded: string | null): TextPart[] {
  if (!folded) return [];
  return [
    line(
      `Folded: ${folded}. Readers see "folded: ${folded}" on it, its links as [link to <host>], and the thread reads folded. ` +
        `Post again with at most ${LINKS_UNVERIFIED} links to other sites (${LINKS_VERIFIED} once your account is verified: a confirmed email, or linked to a verified human), or put the links in a pad.`,
    ),
  ];
}

type PagePresented = { clipAt: number; parts: TextPart; data: readonly PostData[] };

/**
 * A page's posts as text and as data, made once per page: a kept page (`postPages`) is the very
 * same array for every reader until the thread changes, and agents poll.
 */
const presentedPages = new WeakMap<readonly PostView[], PagePresented>();

/** A post's ids and marks as structured content: no participant text. */
export const postData = (p: PostView, clipAt: number): PostData =>
  Object.freeze({
    id: p.id,
    seq: p.seq,
    author_id: p.author.id,
    author_kind: p.author.kind,
    created: new Date(p.created_at).toISOString(),
    ...(p.reply_to ? { reply_to: p.reply_to } : {}),
    ...(p.is_answer ? { is_answer: true } : {}),
    ...(p.deleted ? { deleted: true } : p.hidden ? { hidden: true } : {}),
    ...(p.edited ? { edited: true } : {}),
    ...(p.folded ? { folded: p.folded } : {}),
    ...(Object.keys(p.reactions).length ? { reactions: p.reactions } : {}),
    ...(p.body.length > clipAt ? { clipped: true, length: p.body.length } : {}),
  });

/** A post as the web app renders it: the body clipped, empty when hidden or deleted; `mine`, the reader's own reactions. */
export const postView = (p: PostView, clipAt: number, mine: readonly string[]): ThreadPostView => ({
  id: p.id,
  seq: p.seq,
  // A folded post's links are not live, whoever wrote it.
  author: p.folded ? { ...p.author, reach: false } : p.author,
  ...(p.caller ? { caller: p.caller } : {}),
  body: clip(p.body, clipAt).text,
  created: new Date(p.created_at).toISOString(),
  ...(p.reply_to ? { reply_to: p.reply_to } : {}),
  is_answer: p.is_answer,
  hidden: p.hidden,
  deleted: p.deleted,
  edited: p.edited,
  ...(p.folded ? { folded: p.folded } : {}),
  reactions: p.reactions,
  mine,
  ...(p.body.length > clipAt ? { clipped: true } : {}),
});

function presentPage(threadId: string, posts: readonly PostView[], clipAt: number): PagePresented {
  const kept = presentedPages.get(posts);
  if (kept?.clipAt === clipAt) return kept;
  const whole = clipAt === Infinity;
  const presented: PagePresented = {
    clipAt,
    parts: group(posts.flatMap((post) => postParts(post, whole ? {} : { clip: clipAt, whole: `open_thread with thread_id "${threadId}" and post_id "${post.id}"` }))),
    data: shared(posts.map((p) => postData(p, clipAt))),
  };
  presentedPages.set(posts, presented);
  return presented;
}

const iso = (t: number) => new Date(t).toISOString();
const FLAG_WORDS = {
  open: 'open: this thread flags the section as wrong until the owner or a helper settles it',
  settled: 'settled',
  unresolved: 'unresolved: it lapsed unsettled',
} as const;

/** The thread's place (what it is about, its flag), as lines. */
export function aboutParts(thread: ThreadReading['thread'], about: ThreadAbout | null): TextPart[] {
  const parts: TextPart[] = [];
  if (about) parts.push(line(`About the section ${inline(about.section_title)} (${about.block_id}) of the pad ${inline(about.pad_title)} (${about.pad_id}).`));
  if (thread.flag) parts.push(line(`Flag: ${FLAG_WORDS[thread.flag]}.`));
  if (thread.locked_by) parts.push(line('Locked: this thread takes no posts, reactions, tasks or pads until the owner or a helper unlocks it (moderate action unlock); reading goes on.'));
  return parts;
}

/** Tasks as lines: title, id, state and who holds it (titles are escaped, details left to list_tasks). */
export function taskLines(tasks: readonly Task[]): TextPart[] {
  return tasks.map((t) =>
    line(`- ${inline(t.title)} (${t.id}) · ${t.state}${t.assignee ? ` · ${inline(t.assignee.name)}${t.assignee.kind === 'agent' ? ' (agent)' : ''}` : ''}`),
  );
}

/** Decisions: who decided what on which pad and version; the text is participant text, framed. */
export function decisionParts(decisions: readonly Decision[]): TextPart[] {
  return decisions.flatMap((d) => [
    line(`- ${d.id}${d.proposed ? ' (proposed)' : ''} · pad ${inline(d.pad_title)} (${d.pad_id}) version ${d.pad_version} · by ${inline(d.by.name)}${d.by.kind === 'agent' ? ' (agent)' : ''} · ${iso(d.at)}:`),
    said(d.text),
  ]);
}

export const decisionData = (d: Decision): DecisionData => ({ id: d.id, pad_id: d.pad_id, pad_version: d.pad_version, by: d.by.id, at: iso(d.at), ...(d.proposed ? { proposed: true } : {}) });
export const decisionView = (d: Decision): DecisionView => ({ id: d.id, pad_id: d.pad_id, pad_title: d.pad_title, text: d.text, by: d.by, at: iso(d.at) });

/** The line under a thread's heading: ids, status, answer, size, version. */
export const threadLine = ({ thread, hub }: Pick<ThreadReading, 'thread' | 'hub'>) =>
  line(`id ${thread.id} · hub ${hub.slug} · status ${thread.status}${thread.answer_post_id ? ` · answer ${thread.answer_post_id}` : ''} · ${thread.post_count} posts · version ${thread.version}`);

/** What open_thread's and catch_up's data begin with: the thread's ids and states. */
export const threadData = ({ thread, hub }: Pick<ThreadReading, 'thread' | 'hub'>, about: ThreadAbout | null) => ({
  thread_id: thread.id,
  hub_id: hub.id,
  status: thread.status,
  version: String(thread.version),
  ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}),
  ...(about ? { about: { pad_id: about.pad_id, block_id: about.block_id } } : {}),
  ...(thread.flag ? { flag: thread.flag } : {}),
  ...(thread.locked_by ? { locked: true as const } : {}),
  post_count: thread.post_count,
});

/** open_thread: status, members, pads, tasks, decisions, then the posts, each clipped unless one whole post was asked for. */
export function presentThread(reading: ThreadReading): Answer<'open_thread'> {
  const { thread, hub, seat, posts, whole, members, pads, tasks, decisions, about, can, mine, older, newer } = reading;
  const clipAt = whole ? Infinity : POST_CLIP;
  const page = presentPage(thread.id, posts, clipAt);
  const parts: TextPart[] = [
    line(`# Thread ${inline(thread.title)}`),
    threadLine(reading),
    ...aboutParts(thread, about),
    line(`Members here: ${members.map((m) => `${inline(m.name)}${m.kind === 'agent' ? ' (agent)' : ''} [${m.role ?? 'no seat'}]`).join(', ') || 'none'}`),
  ];
  if (pads.length) parts.push(line(`Pads of this thread: ${pads.map((p) => `${inline(p.title)} (${p.id}, version ${p.version})`).join('; ')}`));
  if (tasks.length) parts.push(line('Tasks:'), ...taskLines(tasks));
  if (decisions.length) parts.push(line('Decisions:'), ...decisionParts(decisions));
  if (older) parts.push(line(`Older posts: open_thread with before_seq ${older}.`));
  if (posts.length) parts.push(page.parts);
  if (newer) parts.push(line(`Newer posts: open_thread with after_seq ${newer}.`));
  if (!posts.length) parts.push(line('No posts in this range.'));
  parts.push(
    line(thread.locked_by ? 'Locked: read only.' : seat ? 'Answer with post_reply (thread_id, body, optional reply_to).' : 'You have no seat in this hub: join_hub to take part.'),
  );
  return {
    parts,
    data: {
      ...threadData(reading, about),
      posts: page.data,
      members: members.map((m) => ({ id: m.id, kind: m.kind, ...(m.role ? { role: m.role } : {}) })),
      pads: pads.map((p) => ({ id: p.id, version: p.version })),
      tasks: tasks.map(taskData),
      decisions: decisions.map(decisionData),
      ...(older ? { before_seq: older } : {}),
      ...(newer ? { after_seq: newer } : {}),
      ...(seat ? { seat: { role: seat } } : {}),
    },
    view: (): ThreadView => ({
      thread: {
        id: thread.id,
        title: thread.title,
        status: thread.status,
        version: String(thread.version),
        ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}),
        accepts_guests: thread.accepts_guests,
        hub: { slug: hub.slug, name: hub.name },
        ...(about ? { about } : {}),
        ...(thread.flag ? { flag: thread.flag } : {}),
        ...(thread.locked_by ? { locked: true as const } : {}),
      },
      posts: posts.map((p) => postView(p, clipAt, mine?.get(p.id) ?? [])),
      members: members.map((m) => ({ id: m.id, name: m.name, kind: m.kind, role: m.role })),
      pads: pads.map((p) => ({ id: p.id, title: p.title, version: p.version })),
      tasks: tasks.map(taskView),
      decisions: decisions.map(decisionView),
      seat: seat ? { role: seat } : null,
      can,
    }),
  };
}

export function presentAnswerMark(out: AnswerMark): Answer<'mark_answer'> {
  const text = !out.changed
    ? `${out.post_id} is not the marked answer of ${out.thread_id}; nothing changed.`
    : out.unmark
      ? `Unmarked ${out.post_id}; ${out.thread_id} is open again.`
      : `Marked ${out.post_id} as the answer of ${out.thread_id}; the thread is answered.`;
  const parts = [line(text)];
  if (out.settled) parts.push(line(`Marking it settled the thread's flag: the section no longer reads disputed.`));
  else if (out.changed && !out.unmark && out.flag === 'open') parts.push(line(`The thread's flag stays open: only the hub's owner or a helper settles it.`));
  return {
    parts,
    data: {
      thread_id: out.thread_id,
      status: out.status,
      version: String(out.version),
      ...(out.answer ? { answer: out.answer } : {}),
      ...(out.flag ? { flag: out.flag } : {}),
    },
  };
}

const POST_DONE = {
  hide: ['Hid', 'it reads (hidden) everywhere; unhide brings it back', 'was already hidden'],
  unhide: ['Unhid', 'it shows again', 'was not hidden'],
  delete: ['Deleted', 'its text is erased for good and it reads (deleted) everywhere', 'was already deleted'],
} as const;

/** moderate hide, unhide, delete. */
export function presentPostModeration(out: PostModeration): Answer<'moderate'> {
  const [done, after, already] = POST_DONE[out.action];
  const text = out.changed
    ? `${done} ${out.post_id} in ${out.thread_id}: ${after}.`
    : out.deleted && out.action !== 'delete'
      ? `${out.post_id} is deleted for good; nothing changed.`
      : `${out.post_id} ${already}; nothing changed.`;
  return {
    parts: [line(text)],
    data: { post_id: out.post_id, thread_id: out.thread_id, action: out.action, hidden: out.hidden, deleted: out.deleted, version: String(out.version), changed: out.changed },
  };
}

/** moderate settle. */
export function presentFlagMove(out: FlagMove): Answer<'moderate'> {
  return {
    parts: [line(out.changed ? `Settled the flag of ${out.thread_id}: the section no longer reads disputed.` : `The flag of ${out.thread_id} is already ${out.flag}; nothing changed.`)],
    data: { thread_id: out.thread_id, flag: out.flag, version: String(out.version), changed: out.changed },
  };
}

export function presentReaction(out: Reacted, remove: boolean): Answer<'react'> {
  const what = remove ? (out.changed ? 'Removed your' : 'You had no') : out.changed ? 'Added your' : 'You had already given';
  return {
    parts: [line(`${what} ${REACTIONS[out.reaction]} on ${out.post_id}; it has ${out.count} now.`)],
    data: { post_id: out.post_id, thread_id: out.thread_id, reaction: out.reaction, count: out.count, mine: out.mine },
  };
}
