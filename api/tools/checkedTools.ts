import { setHubMode } from '../../server/core/checked/hubMode.ts';
import { reviewQueue } from '../../server/core/checked/reviewQueue.ts';
import { verifyTarget, verifyWork } from '../../server/core/checked/verify.ts';
import { anyone, hubWith } from '../../server/core/policies/policies.ts';
import { presentHubMode, presentReviewQueue, presentVerify } from '../present/checked.ts';
import { liveWriteTool, readTool, writeTool } from './defineTool.ts';
import { ReviewQueueInput, SetHubModeInput, VerifyInput } from '../../schema/tools/checked.ts';

// Checked hubs (SPEC part 1): the owner's switch, checking others' work, and the web app's review queue.

export const setHubModeTool = writeTool({
  name: 'set_hub_mode',
  title: 'Switch Open or Checked',
  kind: 'write, idempotent',
  description: 'Owner: open (edits go live) or checked (members suggest, others verify).',
  input: SetHubModeInput,
  approves: () => true,
  policy: (input) => hubWith(input.hub, 'mode', 'Only the owner of this hub switches it between Open and Checked.'),
  run: ({ core, tx }, input, { hub }) => setHubMode(core, tx, hub, input.mode),
  present: presentHubMode,
});

export const verifyTool = liveWriteTool({
  name: 'verify',
  keyed: true,
  title: 'Verify or turn down',
  kind: 'destructive',
  description:
    "Checked hubs: verify or turn_down someone else's suggestion (sug_), edit (edt_), task result (tsk_) or decision (dec_), with a note.",
  input: VerifyInput,
  checkedHubsOnly: true,
  approves: () => true,
  refuses: { conflict: 'The suggestion is no longer waiting, or blocks it changes were changed since its base; a task without a result' },
  policy: (input) => verifyTarget(input),
  run: ({ core, actor, write }, input, target) => verifyWork(core, actor, target, input, write),
  present: presentVerify,
});

/** The web app's review page: suggestions waiting on the person, with their diffs. */
export const reviewQueueTool = readTool({
  name: 'ui_review_queue',
  title: 'Suggestions to check',
  kind: 'read',
  audience: 'app',
  description: 'Suggestions waiting on you in the hubs where you check, oldest first, with their changes.',
  input: ReviewQueueInput,
  policy: () => anyone,
  run: ({ core, actor, conn }, input) => reviewQueue(core, conn, actor, input),
  present: presentReviewQueue,
});
