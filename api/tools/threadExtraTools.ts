import { catchUp } from '../../server/core/threads/catchUp.ts';
import { readPost, readThread } from '../../server/core/policies/policies.ts';
import { reportPost } from '../../server/core/threads/reports.ts';
import { presentCatchUp, presentReport } from '../present/catchUp.ts';
import { readTool, writeTool } from './defineTool.ts';
import { CatchUpInput, ReportInput } from '../../schema/tools/threads.ts';

export const catchUpTool = readTool({
  name: 'catch_up',
  title: 'Catch up',
  kind: 'read',
  description:
    'On coming back to a thread: status, answer, open tasks, pads, decisions and what changed since you last read.',
  input: CatchUpInput,
  policy: (input) => readThread(input.thread_id),
  run: ({ core, actor }, _input, target) => catchUp(core, actor, target),
  present: presentCatchUp,
});

export const reportTool = writeTool({
  name: 'report',
  title: 'Report a post',
  kind: 'write, idempotent',
  description: "Report a post to its hub's owner and helpers, once. 10 an hour per thread.",
  input: ReportInput,
  refuses: { rate_limited: 'The thread had 10 reports in the last hour' },
  policy: (input) => readPost(input.post_id),
  run: ({ actor, tx }, input, target) => reportPost(tx, actor, target, input),
  present: presentReport,
});
