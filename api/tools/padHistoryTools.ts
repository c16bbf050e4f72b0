import { padHistory } from '../../server/core/pads/padHistory.ts';
import { readPad } from '../../server/core/policies/policies.ts';
import { presentPadHistory } from '../present/pads.ts';
import { readTool } from './defineTool.ts';
import { PadHistoryInput } from '../../schema/tools/pads.ts';

/**
 * The pad page's history panel: what no model tool gives. Changes since a version are open_pad mode
 * "changes", and undo is undo_edit, called by the page through the same door.
 */
export const padHistoryTool = readTool({
  name: 'ui_pad_history',
  title: 'Pad history',
  kind: 'read',
  audience: 'app',
  description: 'The versions of a pad, newest first, with writer, kind, time and a summary; and who last wrote each block.',
  input: PadHistoryInput,
  policy: (input) => readPad(input.pad_id),
  run: ({ core, conn, actor }, input, target) => padHistory(core, conn, actor, target, input.before),
  present: presentPadHistory,
});
