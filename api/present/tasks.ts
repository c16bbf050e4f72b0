import { inline } from '../../server/core/kernel/framing.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { Person, Task, TaskChange, TaskPage } from '../../server/core/tasks/tasks.ts';
import type { TaskData, TaskView } from '../../schema/tools/tasks.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();
const who = (p: Person) => `${inline(p.name)}${p.kind === 'agent' ? ' (agent)' : ''} (${inline(p.handle)}, ${p.id})`;

/** Where a result points, without its link (participant text, framed apart). */
const resultKind = (task: Task) => (task.result_url !== null ? 'link' : task.result_block !== null ? 'section' : task.result_pad !== null ? 'pad' : null);

/** A task's ids and states: no participant text (titles, notes and links go in the text, framed). */
export function taskData(task: Task): TaskData {
  const kind = resultKind(task);
  return {
    task_id: task.id,
    thread_id: task.thread_id,
    hub_id: task.hub_id,
    state: task.state,
    created_by: task.created_by.id,
    ...(task.assignee ? { assignee_id: task.assignee.id } : {}),
    ...(task.reviewer ? { reviewer_id: task.reviewer.id } : {}),
    ...(kind ? { result: { kind, ...(task.result_pad ? { pad_id: task.result_pad } : {}), ...(task.result_block ? { block_id: task.result_block } : {}) } } : {}),
    progress_at: iso(task.progress_at),
    created: iso(task.created_at),
    updated: iso(task.updated_at),
  };
}

/** What the web app shows of a task: its data, and the titles, names and link it needs to render them. */
export function taskView(task: Task): TaskView {
  return {
    ...taskData(task),
    title: task.title,
    details: task.details,
    thread_title: task.thread_title,
    hub_slug: task.hub_slug,
    created_by: task.created_by,
    assignee: task.assignee,
    reviewer: task.reviewer,
    result_url: task.result_url,
    result_note: task.result_note,
    note: task.note,
  };
}

function taskParts(task: Task, withDetails: boolean): TextPart[] {
  const parts: TextPart[] = [
    line(`## ${inline(task.title)} (${task.id}) · ${task.state}`),
    line(
      `In ${inline(task.thread_title)} (${task.thread_id}), hub ${task.hub_slug} · by ${who(task.created_by)}` +
        ` · ${task.assignee ? `${task.state === 'assigned' ? 'assigned to' : 'held by'} ${who(task.assignee)}` : 'open to anyone in the thread'}` +
        `${task.reviewer ? ` · reviewer ${who(task.reviewer)}` : ''} · last progress ${iso(task.progress_at)}`,
    ),
  ];
  if (withDetails && task.details) parts.push(said(task.details, { noun: 'task details', clip: 3_000 }));
  const kind = resultKind(task);
  if (kind === 'link') {
    parts.push(line('Result: a link'));
    parts.push(said(task.result_url!));
  } else if (kind) {
    parts.push(line(`Result: pad ${task.result_pad}${task.result_block ? `, section ${task.result_block}` : ''} (open_pad to read it)`));
  }
  if (task.result_note) {
    parts.push(line('Note with the result:'));
    parts.push(said(task.result_note, { clip: 3_000 }));
  }
  if (task.note) {
    parts.push(line(`Note on the last step (${task.state}):`));
    parts.push(said(task.note, { clip: 3_000 }));
  }
  return parts;
}

const NEXT: Record<Task['state'], string> = {
  open: 'Anyone who may post in the thread takes it with take_task, or hands in a result with submit_result.',
  assigned: 'The assignee takes it with take_task, or declines it with update_task action "decline".',
  taken: 'Its holder starts with update_task action "start" and hands in with submit_result (a pad, a pad section or an http(s) link).',
  in_progress: 'Its holder hands in with submit_result (pad_id, optional block_id, or url); update_task "block" says it is stuck.',
  blocked: 'Its holder goes on with update_task action "unblock".',
  in_review: 'The reviewer answers with update_task action "approve" or "send_back".',
  done: 'Done.',
  cancelled: 'Cancelled.',
};

const DID: Record<string, string> = {
  created: 'Created',
  taken: 'You took',
  unchanged: 'Nothing changed for',
  done: 'Handed in the result; done:',
  submitted: 'Handed in the result; waiting for the reviewer:',
  started: 'Started',
  blocked: 'Marked blocked:',
  unblocked: 'Unblocked',
  declined: 'Declined; it is open to anyone again:',
  cancelled: 'Cancelled',
  approved: 'Approved the result; done:',
  sent_back: 'Sent back to its holder:',
};

/** Every task write answers alike: what happened, the task as it stands, and what comes next. */
export function presentTaskChange(out: TaskChange): Answer<'create_task' | 'take_task' | 'submit_result' | 'update_task'> {
  const { task, did } = out;
  return {
    parts: [line(`${DID[did] ?? did} ${task.id} (${task.state}).`), ...taskParts(task, did === 'created'), line(NEXT[task.state])],
    data: { ...taskData(task), ...(did === 'unchanged' ? { changed: false } : {}) },
    view: () => ({ task: taskView(task) }),
  };
}

export function presentTaskPage(page: TaskPage): Answer<'list_tasks'> {
  const parts: TextPart[] = [line(`# Tasks (${page.tasks.length}${page.next_cursor ? ', more after' : ''})`)];
  if (!page.tasks.length) parts.push(line('No tasks match. create_task makes one in a thread you post in.'));
  for (const task of page.tasks) parts.push(...taskParts(task, false));
  if (page.next_cursor) parts.push(line(`More: list_tasks with cursor "${page.next_cursor}".`));
  return {
    parts,
    data: { tasks: page.tasks.map(taskData), ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) },
    view: () => ({ tasks: page.tasks.map(taskView), next_cursor: page.next_cursor ?? null }),
  };
}
