import { hubWith } from '../../server/core/policies/policies.ts';
import { standingRun, takeBackUndo, undoCounts, undoEverything, undoTarget } from '../../server/core/policies/undoEverything.ts';
import { takeOverHub } from '../../server/core/places/takeover.ts';
import { presentTakeover, presentUndo, presentUndoPreview } from '../present/moderation.ts';
import { coreWriteTool, readTool, writeTool } from './defineTool.ts';
import { TakeOverHubInput, UndoEverythingInput, UndoPreviewInput } from '../../schema/tools/moderation.ts';

export const undoEverythingTool = coreWriteTool({
  name: 'undo_everything',
  keyed: true,
  title: 'Undo all',
  kind: 'destructive',
  description: "Owner, helpers: undo an id's posts, edits, suggestions, task claims here; take_back restores.",
  input: UndoEverythingInput,
  policy: (input) => undoTarget(input),
  run: ({ core, actor, write }, input, target) =>
    input.take_back ? takeBackUndo(core, actor, target, write) : undoEverything(core, actor, target, input.include_linked ?? false, write),
  present: presentUndo,
});

export const takeOverHubTool = writeTool({
  name: 'take_over_hub',
  keyed: true,
  title: 'Take over',
  kind: 'destructive',
  description: 'Owner quiet 90 days: helper takes over; verified member asks if no helpers (30-day notice); owner objects.',
  input: TakeOverHubInput,
  refuses: { conflict: 'another member already asked' },
  approves: () => true,
  policy: (input) => hubWith(input.hub, 'write', 'Only members of this hub take it over; join_hub first.'),
  run: ({ core, actor, tx }, _input, target) => takeOverHub(core, tx, actor, target),
  present: presentTakeover,
});

/** The web app's count before "Undo everything by this person" asks to confirm. */
export const undoPreviewTool = readTool({
  name: 'ui_undo_preview',
  title: 'What undoing a person would undo',
  kind: 'read',
  audience: 'app',
  description: 'How many posts, pad edits, suggestions and task claims undo_everything would undo now, and the last undo to take back.',
  input: UndoPreviewInput,
  policy: (input) => undoTarget(input),
  run: async ({ conn }, input, target) => ({ target, counts: await undoCounts(conn, target, input.include_linked ?? false), last: await standingRun(conn, target.hub.id, target.person.id) }),
  present: presentUndoPreview,
});


