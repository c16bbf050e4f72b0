import { z } from 'zod';
import { Person } from './views.ts';

// create_task, take_task, submit_result, update_task, list_tasks.

export const TASK_STATES = ['open', 'assigned', 'taken', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];
export const TASK_ACTIONS = ['start', 'block', 'unblock', 'decline', 'cancel', 'approve', 'send_back'] as const;
export const TASK_PAGE_MAX = 50;

/**
 * Strings bounded by a check rather than by the schema's keywords: five task tools must each list in
 * at most 550 characters, and the bounds are told in the refusal instead.
 */
const bounded = (max: number) =>
  z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      // Over the maximum is a size (413 too_large), as a schema's own maxLength would say.
      const message = `Between 1 and ${max} characters.`;
      if (value.length > max) ctx.addIssue({ code: 'too_big', origin: 'string', maximum: max, input: value, message });
      else if (value.length < 1) ctx.addIssue({ code: 'too_small', origin: 'string', minimum: 1, input: value, message });
    });
const text = (max: number, description: string) => bounded(max).describe(description);
const maybe = (max: number, description: string) => bounded(max).optional().describe(description);
const taskId = text(100, 'Task id.');
const note = maybe(2_000, 'Note.');

export const CreateTaskInput = z.object({
  thread_id: text(100, 'Thread id.'),
  title: text(200, 'What to do.'),
  assignee: maybe(100, 'Id or @handle; omit: open.'),
  reviewer: maybe(100, 'Id or @handle.'),
});

export const TakeTaskInput = z.object({ task_id: taskId });

export const SubmitResultInput = z.object({
  task_id: taskId,
  pad_id: maybe(100, 'Pad id.'),
  block_id: maybe(100, 'Section id.'),
  url: maybe(2_000, 'Link.'),
  note,
});

export const UpdateTaskInput = z.object({
  task_id: taskId,
  action: z.enum(TASK_ACTIONS).describe('Step.'),
  note,
});

export const ListTasksInput = z.object({
  in: maybe(100, 'Hub/thread'),
  state: z
    .string()
    .refine((state): state is TaskState => (TASK_STATES as readonly string[]).includes(state), `One of ${TASK_STATES.join(', ')}.`)
    .optional()
    .describe('State'),
  assignee: maybe(100, 'Id/@handle'),
  mine: z.boolean().optional().describe('Yours'),
  limit: z.number().int().min(1).max(TASK_PAGE_MAX).optional().describe('1-50'),
  cursor: maybe(200, 'Next'),
});

/** A task's ids and states: no participant text (titles, notes and links go in the text, framed). */
export const TaskData = z.object({
  task_id: z.string(),
  thread_id: z.string(),
  hub_id: z.string(),
  state: z.enum(TASK_STATES),
  created_by: z.string(),
  assignee_id: z.string().optional(),
  reviewer_id: z.string().optional(),
  result: z.object({ kind: z.enum(['pad', 'section', 'link']), pad_id: z.string().optional(), block_id: z.string().optional() }).optional(),
  progress_at: z.string(),
  created: z.string(),
  updated: z.string(),
});
export type TaskData = z.infer<typeof TaskData>;

/** What every task write answers: the task as it stands; `changed: false` when the step found it so. */
export const TaskChangeData = TaskData.extend({ changed: z.boolean().optional() });

/** What the web app shows of a task: its data, and the titles, names and link it needs to render them. */
export const TaskView = TaskData.extend({
  title: z.string(),
  details: z.string(),
  thread_title: z.string(),
  hub_slug: z.string(),
  created_by: Person,
  assignee: Person.nullable(),
  reviewer: Person.nullable(),
  result_url: z.string().nullable(),
  result_note: z.string().nullable(),
  note: z.string().nullable(),
});
export type TaskView = z.infer<typeof TaskView>;

export const TaskChangeView = z.object({ task: TaskView });
export const TaskPageView = z.object({ tasks: z.array(TaskView), next_cursor: z.string().nullable() });

export const TaskPageData = z.object({ tasks: z.array(TaskData), next_cursor: z.string().optional() });
