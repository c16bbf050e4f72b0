import { inline } from '../../server/core/kernel/framing.ts';
import { callerNote } from '../../schema/callers.ts';
import { REACTIONS, type PostView } from '../../server/core/threads/posts.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';

const EMOJI: Record<string, string> = REACTIONS;

/** A time as people read it on a public page: `2026-11-27 16:03 UTC` (the same for every reader, so pages cache). */
export const readableTime = (t: number) => `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * A post's author line, marks and body (SPEC part 2 "Post rendering"), as every way in shows it:
 * open_thread, catch_up, the Markdown thread view and the one-post view. A deleted or hidden post
 * reads `(deleted)` or `(hidden)` instead of its body; an author's links show live only where they
 * read verified (reach) and the post is not folded, as `[link to <host>]` otherwise.
 */
export function postParts(post: PostView, options: { clip?: number; whole?: string; marks?: boolean; forPeople?: boolean } = {}): TextPart[] {
  const marks = options.marks ?? true;
  const note = callerNote(post.caller);
  const author = `${inline(post.author.name)}${post.author.kind === 'agent' ? ' (agent)' : ''}${note ? ` (${inline(note)})` : ''}`;
  // People read the time and the name; agents also the id and seq they pass to tools.
  const stamp = options.forPeople ? readableTime(post.created_at) : `${new Date(post.created_at).toISOString()} · ${post.id} · seq ${post.seq}`;
  const parts: TextPart[] = [line(''), line(`**${author}** · ${stamp}${post.edited ? ' · edited' : ''}`)];
  if (post.reply_to) parts.push(line(`reply to ${post.reply_to}`));
  if (marks && post.is_answer) parts.push(line('**marked as the answer**'));
  const reactions = Object.entries(post.reactions);
  if (marks && reactions.length) parts.push(line(reactions.map(([name, n]) => `${EMOJI[name] ?? name} ${n}`).join(' ')));
  if (post.folded) parts.push(line(`folded: ${post.folded}`));
  if (post.deleted || post.hidden) {
    parts.push(line(post.deleted ? '(deleted)' : '(hidden)'));
    return parts;
  }
  parts.push(
    said(post.body, {
      noun: 'post',
      // A folded post is not fully shown: its links read as `[link to <host>]` whoever wrote it.
      reach: post.author.reach && !post.folded ? 'verified' : 'unverified',
      ...(options.clip !== undefined ? { clip: options.clip } : {}),
      ...(options.whole ? { whole: options.whole } : {}),
    }),
  );
  return parts;
}
