import type { CatchUp } from '../../server/core/threads/catchUp.ts';
import { inline } from '../../server/core/kernel/framing.ts';
import type { Reported } from '../../server/core/threads/reports.ts';
import { line, type TextPart } from '../../server/core/kernel/result.ts';
import { postParts } from './posts.ts';
import { taskData } from './tasks.ts';
import { aboutParts, decisionData, decisionParts, postData, taskLines, threadData, threadLine } from './threads.ts';
import type { Answer } from './answer.ts';

/** The answer and the newest posts are clipped shorter than in open_thread: this is a summary. */
const CATCH_UP_CLIP = 1_000;

const iso = (t: number) => new Date(t).toISOString();

/** catch_up: what changed since the caller last read, then where the thread stands. */
export function presentCatchUp(out: CatchUp): Answer<'catch_up'> {
  const { thread, about, answer, openTasks, pads, decisions, lastRead, since } = out;
  const whole = (id: string) => `open_thread with thread_id "${thread.id}" and post_id "${id}"`;
  const parts: TextPart[] = [
    line(`# Catching up: ${inline(thread.title)}`),
    threadLine(out),
    ...aboutParts(thread, about),
    line(''),
    line(lastRead ? `## Since you last read it (${iso(lastRead.at)}, up to seq ${lastRead.seq})` : '## You have not read this thread before'),
  ];
  const quiet = lastRead && !since.newPosts && !since.tasks.length && !since.decisions.length;
  if (quiet) parts.push(line('Nothing changed.'));
  if (since.newPosts) {
    parts.push(line(`${since.newPosts} new post${since.newPosts === 1 ? '' : 's'}${since.newest.length < since.newPosts ? `; the newest ${since.newest.length}:` : ':'}`));
    for (const post of since.newest) parts.push(...postParts(post, { clip: CATCH_UP_CLIP, whole: whole(post.id) }));
    if (lastRead) parts.push(line(`Read them all: open_thread with after_seq ${lastRead.seq}.`));
  } else if (!lastRead) {
    parts.push(line('No posts yet.'));
  }
  if (since.tasks.length) parts.push(line('Tasks changed:'), ...taskLines(since.tasks));
  if (since.decisions.length) parts.push(line('Decisions since:'), ...decisionParts(since.decisions));

  parts.push(line(''), line('## Where it stands'));
  if (answer) parts.push(line('The answer:'), ...postParts(answer, { clip: CATCH_UP_CLIP, whole: whole(answer.id), marks: false }));
  else parts.push(line('No answer is marked.'));
  parts.push(...(openTasks.length ? [line('Open tasks:'), ...taskLines(openTasks)] : [line('No open tasks.')]));
  if (pads.length) parts.push(line(`Pads: ${pads.map((p) => `${inline(p.title)} (${p.id}, version ${p.version})`).join('; ')}`));
  if (decisions.length) parts.push(line('Latest decisions:'), ...decisionParts(decisions));
  parts.push(line(''), line('Your last-read mark is now here. open_thread reads the posts; post_reply answers.'));
  return {
    parts,
    data: {
      ...threadData(out, about),
      ...(lastRead ? { last_read: { seq: lastRead.seq, at: iso(lastRead.at) } } : {}),
      since: {
        new_posts: since.newPosts,
        posts: since.newest.map((p) => postData(p, CATCH_UP_CLIP)),
        tasks: since.tasks.map(taskData),
        decisions: since.decisions.map(decisionData),
      },
      open_tasks: openTasks.map(taskData),
      pads: pads.map((p) => ({ id: p.id, version: p.version })),
      decisions: decisions.map(decisionData),
    },
  };
}

/** report: sent, or the earlier report of the same post. */
export function presentReport(out: Reported): Answer<'report'> {
  const text = out.first
    ? `Reported ${out.post_id} to the owner and helpers of its hub (${out.told} told, in their inbox).`
    : `You reported ${out.post_id} already, at ${iso(out.created_at)}; that report stands and nobody is told again.`;
  return {
    parts: [line(text)],
    data: { report_id: out.report_id, post_id: out.post_id, thread_id: out.thread_id, reported_at: iso(out.created_at), ...(out.first ? {} : { already: true }) },
  };
}
