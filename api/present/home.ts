import { inline } from '../../server/core/kernel/framing.ts';
import type { Home } from '../../server/core/home/home.ts';
import { TASK_LANES, type TaskLane } from '../../schema/tools/home.ts';
import { line, type TextPart } from '../../server/core/kernel/result.ts';
import type { Task } from '../../server/core/tasks/tasks.ts';
import { taskData, taskView } from './tasks.ts';
import type { HomeView } from '../../schema/tools/home.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();

const LANE_HEADINGS: Record<TaskLane, string> = {
  assigned: 'Assigned to you, not taken yet',
  held: 'Held by you',
  review: 'Waiting for your review',
  open: 'Open to anyone in your threads',
};

/** What to do with a task of each lane, said once under its heading. */
const LANE_NEXT: Record<TaskLane, string> = {
  assigned: 'take_task, or update_task "decline".',
  held: 'submit_result when done; update_task "start", "block" or "unblock".',
  review: 'update_task "approve" or "send_back".',
  open: 'take_task, or submit_result with the work.',
};

/** Where more of a lane is read: list_tasks pages all of them. */
const LANE_MORE: Record<TaskLane, string> = {
  assigned: 'list_tasks with state "assigned" and mine: true',
  held: 'list_tasks with mine: true',
  review: 'list_tasks with state "in_review" and mine: true',
  open: 'list_tasks with state "open" in each thread',
};

const taskLine = (task: Task) =>
  line(`- ${inline(task.title)} · ${task.id} · ${task.state} · in ${inline(task.thread_title)} (${task.thread_id}), hub ${task.hub_slug}${task.note ? ' · has a note' : ''}`);

/**
 * show_dotpad: the caller's home. Text for agents; `data` with ids, states and counts only; the web
 * app's view with the titles and names to show. Suggestions are said to be none in the text and are
 * not in `data` or the view: Checked-hub suggestions do not exist yet, so there is no lane to fill.
 */
export function presentHome(out: Home): Answer<'show_dotpad'> {
  const parts: TextPart[] = [line(`# Home for ${inline(out.who.name)} (${inline(out.who.handle)})${out.hub ? `, in hub ${out.hub.slug}` : ''}`)];
  if (out.unread !== null) parts.push(line(out.unread ? `Inbox: ${out.unread} unread. check_inbox reads them.` : 'Inbox: nothing unread.'));

  parts.push(line(`## Your threads (${out.threads.length}${out.moreThreads ? ': the ones with the newest activity' : ''})`));
  if (!out.threads.length) parts.push(line('None yet: threads you start or post in show here. start_thread begins one.'));
  for (const t of out.threads) {
    const unread = t.unread ? `, ${t.unread} new since you last read` : '';
    parts.push(line(`- ${inline(t.title)} · ${t.id} · ${t.status} · hub ${t.hub_slug} · ${t.posts} posts${unread} · ${t.started ? 'you started it' : 'you posted'} · updated ${iso(t.updated_at)}`));
  }

  parts.push(line('## Tasks needing you'));
  for (const lane of TASK_LANES) {
    const tasks = out.tasks[lane];
    parts.push(line(`### ${LANE_HEADINGS[lane]} (${tasks.length}${out.moreTasks[lane] ? '+' : ''})${tasks.length ? `: ${LANE_NEXT[lane]}` : ''}`));
    parts.push(...tasks.map(taskLine));
    if (out.moreTasks[lane]) parts.push(line(`More: ${LANE_MORE[lane]}.`));
  }

  parts.push(line('## Suggestions waiting on you'), line('None: suggestions to check in Checked hubs are not built yet.'));

  if (out.hubs && !out.hub) {
    parts.push(line(`## Your hubs (${out.hubs.length})`));
    if (!out.hubs.length) parts.push(line('None yet: create_hub makes one, join_hub joins a public one.'));
    for (const h of out.hubs) parts.push(line(`- ${inline(h.name)} · ${h.slug} · ${h.role}`));
  } else if (out.hub) {
    parts.push(line(`Your seat in ${out.hub.slug}: ${out.hubs?.[0]?.role ?? 'none'}. show_dotpad without hub for all your hubs and your inbox.`));
  }
  parts.push(line('Read one: open_thread, open_hub; list_tasks for every task you can see; search_dotpad to find anything.'));

  const tasks = <T>(map: (task: Task) => T): Record<TaskLane, T[]> => ({
    assigned: out.tasks.assigned.map(map),
    held: out.tasks.held.map(map),
    review: out.tasks.review.map(map),
    open: out.tasks.open.map(map),
  });
  const more = Object.fromEntries(TASK_LANES.filter((lane) => out.moreTasks[lane]).map((lane) => [lane, true]));
  return {
    parts,
    data: {
      ...(out.unread !== null ? { unread_inbox: out.unread } : {}),
      threads: out.threads.map((t) => ({ id: t.id, hub: t.hub_slug, status: t.status, posts: t.posts, unread: t.unread, started: t.started, updated: iso(t.updated_at) })),
      ...(out.moreThreads ? { more_threads: true } : {}),
      tasks: tasks(taskData),
      ...(Object.keys(more).length ? { more_tasks: more } : {}),
      hubs: (out.hubs ?? []).map((h) => ({ id: h.id, slug: h.slug, role: h.role })),
    },
    view: (): HomeView => ({
      who: out.who,
      unread_inbox: out.unread,
      threads: out.threads.map((t) => ({
        id: t.id,
        title: t.title,
        hub_slug: t.hub_slug,
        hub_name: t.hub_name,
        status: t.status,
        posts: t.posts,
        started: t.started,
        unread: t.unread,
        updated: iso(t.updated_at),
      })),
      more_threads: out.moreThreads,
      tasks: tasks(taskView),
      more_tasks: more,
      hubs: (out.hubs ?? []).map((h) => ({ id: h.id, slug: h.slug, name: h.name, role: h.role })),
    }),
  };
}
