import { z } from 'zod';
import { postInThread } from '../../server/core/policies/policies.ts';
import { createTask, listTasks, submitResult, takeTask, TASK_ACTIONS, TASK_PAGE_MAX, TASK_STATES, taskToWork, updateTask, type TaskState } from '../../server/core/tasks/tasks.ts';
import { presentTaskChange, presentTaskPage } from '../present/tasks.ts';
import { readTool, writeTool } from './defineTool.ts';

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
/** Taking, handing in and updating a task each go from some states only. */
const stateRulesOut = { conflict: 'The task is in a state that rules it out (the refusal names its state)' };

export const createTaskTool = writeTool({
  name: 'create_task',
  title: 'Create a task',
  description: 'Give work in a thread to one assignee, or to anyone; optional reviewer.',
  input: z.object({
    thread_id: text(100, 'Thread id.'),
    title: text(200, 'What to do.'),
    assignee: maybe(100, 'Id or @handle; omit: open.'),
    reviewer: maybe(100, 'Id or @handle.'),
  }),
  limits: ['write'],
  policy: (input) => postInThread(input.thread_id),
  run: ({ actor, tx }, input, target) => createTask(tx, actor, target, input),
  present: presentTaskChange,
});

export const takeTaskTool = writeTool({
  name: 'take_task',
  title: 'Take a task',
  idempotent: true,
  description: "Optional: say you're on an open task, or one assigned to you.",
  input: z.object({ task_id: taskId }),
  refuses: stateRulesOut,
  policy: (input) => taskToWork(input.task_id),
  run: ({ actor, tx }, _input, target) => takeTask(tx, actor, target),
  present: presentTaskChange,
});

export const submitResultTool = writeTool({
  name: 'submit_result',
  title: 'Hand in a result',
  description: 'Finish a task with a pad, a section (pad_id + block_id) or an http(s) url.',
  input: z.object({
    task_id: taskId,
    pad_id: maybe(100, 'Pad id.'),
    block_id: maybe(100, 'Section id.'),
    url: maybe(2_000, 'Link.'),
    note,
  }),
  limits: ['write'],
  refuses: stateRulesOut,
  policy: (input) => taskToWork(input.task_id),
  run: ({ core, actor, tx }, input, target) => submitResult(core, tx, actor, target, input),
  present: presentTaskChange,
});

export const updateTaskTool = writeTool({
  name: 'update_task',
  title: 'Update a task',
  destructive: true,
  description: 'Holder: start, block, unblock, decline. Creator, owner, helpers: cancel. Reviewer: approve, send_back.',
  input: z.object({
    task_id: taskId,
    action: z.enum(TASK_ACTIONS).describe('Step.'),
    note,
  }),
  refuses: stateRulesOut,
  policy: (input) => taskToWork(input.task_id),
  run: ({ actor, tx }, input, target) => updateTask(tx, actor, target, input.action, input.note),
  present: presentTaskChange,
});

export const listTasksTool = readTool({
  name: 'list_tasks',
  title: 'Tasks',
  description: 'Tasks you may see, newest first; 20 a page.',
  input: z.object({
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
  }),
  // Everyone may list; what each sees is limited by seats and a sub-agent key's threads in the query.
  policy: () => async () => null,
  run: ({ core, conn, actor }, { in: where, ...input }) =>
    listTasks(core, conn, actor, { ...input, state: input.state as TaskState | undefined, ...(where === undefined ? {} : where.startsWith('thr_') ? { thread_id: where } : { hub: where }) }),
  present: presentTaskPage,
});
