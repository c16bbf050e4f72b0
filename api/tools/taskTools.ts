import { postInThread } from '../../server/core/policies/policies.ts';
import { createTask, listTasks, submitResult, takeTask, taskToWork, updateTask, type TaskState } from '../../server/core/tasks/tasks.ts';
import { presentTaskChange, presentTaskPage } from '../present/tasks.ts';
import { readTool, writeTool } from './defineTool.ts';
import { CreateTaskInput, ListTasksInput, SubmitResultInput, TakeTaskInput, UpdateTaskInput } from '../../schema/tools/tasks.ts';

/** Taking, handing in and updating a task each go from some states only. */
const stateRulesOut = { conflict: 'The task is in a state that rules it out (the refusal names its state)' };

export const createTaskTool = writeTool({
  name: 'create_task',
  card: true,
  keyed: true,
  title: 'Create a task',
  kind: 'write',
  description: 'Give work in a thread to one assignee, or to anyone; optional reviewer.',
  input: CreateTaskInput,
  texts: ['title'],
  limits: ['write'],
  policy: (input) => postInThread(input.thread_id),
  run: ({ actor, tx }, input, target) => createTask(tx, actor, target, input),
  present: presentTaskChange,
});

export const takeTaskTool = writeTool({
  name: 'take_task',
  card: true,
  keyed: true,
  title: 'Take a task',
  kind: 'write',
  description: "Optional: say you're on an open task, or one assigned to you.",
  input: TakeTaskInput,
  refuses: stateRulesOut,
  policy: (input) => taskToWork(input.task_id),
  run: ({ actor, tx }, _input, target) => takeTask(tx, actor, target),
  present: presentTaskChange,
});

export const submitResultTool = writeTool({
  name: 'submit_result',
  card: true,
  keyed: true,
  title: 'Hand in a result',
  kind: 'write',
  description: 'Finish a task with a pad, a section (pad_id + block_id) or an http(s) url.',
  input: SubmitResultInput,
  texts: ['note', 'url'],
  limits: ['write'],
  refuses: stateRulesOut,
  policy: (input) => taskToWork(input.task_id),
  run: ({ core, actor, tx }, input, target) => submitResult(core, tx, actor, target, input),
  present: presentTaskChange,
});

export const updateTaskTool = writeTool({
  name: 'update_task',
  card: true,
  keyed: true,
  title: 'Update a task',
  kind: 'destructive',
  description: 'Holder: start, block, unblock, decline. Creator, owner, helpers: cancel. Reviewer: approve, send_back.',
  input: UpdateTaskInput,
  texts: ['note'],
  refuses: stateRulesOut,
  policy: (input) => taskToWork(input.task_id),
  run: ({ actor, tx }, input, target) => updateTask(tx, actor, target, input.action, input.note),
  present: presentTaskChange,
});

export const listTasksTool = readTool({
  name: 'list_tasks',
  card: true,
  title: 'Tasks',
  kind: 'read',
  description: 'Tasks you may see, newest first; 20 a page.',
  input: ListTasksInput,
  // Everyone may list; what each sees is limited by seats and a sub-agent key's threads in the query.
  policy: () => async () => null,
  run: ({ core, conn, actor }, { in: where, ...input }) =>
    listTasks(core, conn, actor, { ...input, state: input.state as TaskState | undefined, ...(where === undefined ? {} : where.startsWith('thr_') ? { thread_id: where } : { hub: where }) }),
  present: presentTaskPage,
});
