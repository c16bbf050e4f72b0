import { clip, inline } from '../../server/core/framing.ts';
import { REACTIONS } from '../../server/core/posts.ts';
import type { PostView } from '../../server/core/posts.ts';
import { group, line, type Result, type TextPart } from '../../server/core/result.ts';
import { POST_CLIP, type AnswerMark, type PostedReply, type Reacted, type StartedThread, type ThreadReading } from '../../server/core/threads.ts';
import { postParts } from './posts.ts';
import { mentionData, mentionLines } from './inbox.ts';

export const presentStartedThread = (out: StartedThread): Result => ({
  parts: [
    line(`Started the thread ${inline(out.title)} (id ${out.thread_id}) in ${out.hub.slug}, with your post ${out.post_id} as seq 1.`),
    line(`Read it with open_thread "${out.thread_id}"; others answer with post_reply.`),
    ...mentionLines(out.post_id),
  ],
  data: { thread_id: out.thread_id, post_id: out.post_id, seq: out.seq, hub_id: out.hub.id, status: 'open', ...mentionData(out.post_id) },
});

export const presentReply = (out: PostedReply): Result => ({
  parts: [line(`Posted ${out.post_id} as seq ${out.seq} in ${inline(out.thread.title)} (${out.thread.id})${out.reply_to ? `, in reply to ${out.reply_to}` : ''}.`), ...mentionLines(out.post_id)],
  data: { post_id: out.post_id, thread_id: out.thread.id, seq: out.seq, ...(out.reply_to ? { reply_to: out.reply_to } : {}), ...mentionData(out.post_id) },
});

type PagePresented = { clipAt: number; parts: TextPart; data: readonly Record<string, unknown>[] };

/**
 * A page's posts as text and as data, made once per page: a kept page (`postPages`) is the very
 * same array for every reader until the thread changes, and agents poll.
 */
const presentedPages = new WeakMap<readonly PostView[], PagePresented>();

function presentPage(threadId: string, posts: readonly PostView[], clipAt: number): PagePresented {
  const kept = presentedPages.get(posts);
  if (kept?.clipAt === clipAt) return kept;
  const whole = clipAt === Infinity;
  const presented: PagePresented = {
    clipAt,
    parts: group(posts.flatMap((post) => postParts(post, whole ? {} : { clip: clipAt, whole: `open_thread with thread_id "${threadId}" and post_id "${post.id}"` }))),
    data: Object.freeze(
      posts.map((p) =>
        Object.freeze({
          id: p.id,
          seq: p.seq,
          author_id: p.author.id,
          author_kind: p.author.kind,
          created: new Date(p.created_at).toISOString(),
          ...(p.reply_to ? { reply_to: p.reply_to } : {}),
          ...(p.is_answer ? { is_answer: true } : {}),
          ...(Object.keys(p.reactions).length ? { reactions: p.reactions } : {}),
          ...(p.body.length > clipAt ? { clipped: true, length: p.body.length } : {}),
        }),
      ),
    ),
  };
  presentedPages.set(posts, presented);
  return presented;
}

/** open_thread: status, members, pads, then the posts, each clipped unless one whole post was asked for. */
export function presentThread(reading: ThreadReading): Result {
  const { thread, hub, seat, posts, whole, members, pads, older, newer } = reading;
  const clipAt = whole ? Infinity : POST_CLIP;
  const page = presentPage(thread.id, posts, clipAt);
  const parts: TextPart[] = [
    line(`# Thread ${inline(thread.title)}`),
    line(`id ${thread.id} · hub ${hub.slug} · status ${thread.status}${thread.answer_post_id ? ` · answer ${thread.answer_post_id}` : ''} · ${thread.post_count} posts · version ${thread.version}`),
    line(`Members here: ${members.map((m) => `${inline(m.name)}${m.kind === 'agent' ? ' (agent)' : ''} [${m.role ?? 'no seat'}]`).join(', ') || 'none'}`),
  ];
  if (pads.length) parts.push(line(`Pads of this thread: ${pads.map((p) => `${inline(p.title)} (${p.id}, version ${p.version})`).join('; ')}`));
  if (older) parts.push(line(`Older posts: open_thread with before_seq ${older}.`));
  if (posts.length) parts.push(page.parts);
  if (newer) parts.push(line(`Newer posts: open_thread with after_seq ${newer}.`));
  if (!posts.length) parts.push(line('No posts in this range.'));
  parts.push(line(seat ? 'Answer with post_reply (thread_id, body, optional reply_to).' : 'You have no seat in this hub: join_hub to take part.'));
  return {
    parts,
    data: {
      thread_id: thread.id,
      hub_id: hub.id,
      status: thread.status,
      version: String(thread.version),
      ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}),
      post_count: thread.post_count,
      posts: page.data,
      members: members.map((m) => ({ id: m.id, kind: m.kind, ...(m.role ? { role: m.role } : {}) })),
      pads: pads.map((p) => ({ id: p.id, version: p.version })),
      ...(older ? { before_seq: older } : {}),
      ...(newer ? { after_seq: newer } : {}),
      ...(seat ? { seat: { role: seat } } : {}),
    },
    view: () => ({
      thread: {
        id: thread.id,
        title: thread.title,
        status: thread.status,
        ...(thread.answer_post_id ? { answer: thread.answer_post_id } : {}),
        accepts_guests: thread.accepts_guests,
        hub: { slug: hub.slug, name: hub.name },
      },
      posts: posts.map((p) => ({
        id: p.id,
        seq: p.seq,
        author: p.author,
        body: clip(p.body, clipAt).text,
        created: new Date(p.created_at).toISOString(),
        ...(p.reply_to ? { reply_to: p.reply_to } : {}),
        is_answer: p.is_answer,
        reactions: p.reactions,
        ...(p.body.length > clipAt ? { clipped: true } : {}),
      })),
      members,
      pads,
      seat: seat ? { role: seat } : null,
    }),
  };
}

export function presentAnswerMark(out: AnswerMark): Result {
  const text = !out.changed
    ? `${out.post_id} is not the marked answer of ${out.thread_id}; nothing changed.`
    : out.unmark
      ? `Unmarked ${out.post_id}; ${out.thread_id} is open again.`
      : `Marked ${out.post_id} as the answer of ${out.thread_id}; the thread is answered.`;
  return {
    parts: [line(text)],
    data: { thread_id: out.thread_id, status: out.status, version: String(out.version), ...(out.answer ? { answer: out.answer } : {}) },
  };
}

export function presentReaction(out: Reacted, remove: boolean): Result {
  const what = remove ? (out.changed ? 'Removed your' : 'You had no') : out.changed ? 'Added your' : 'You had already given';
  return {
    parts: [line(`${what} ${REACTIONS[out.reaction]} on ${out.post_id}; it has ${out.count} now.`)],
    data: { post_id: out.post_id, thread_id: out.thread_id, reaction: out.reaction, count: out.count, mine: out.mine },
  };
}
