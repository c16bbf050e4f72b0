import { padAtVersion, padHistory } from '../../server/core/pads/padHistory.ts';
import { restoreVersion } from '../../server/core/pads/padEdits.ts';
import { editPad as mayEditPad, readPad } from '../../server/core/policies/policies.ts';
import { presentPadAtVersion, presentPadHistory, presentRestore } from '../present/pads.ts';
import { liveWriteTool, readTool } from './defineTool.ts';
import { padTooLarge } from './padTools.ts';
import { PadHistoryInput, PadVersionInput, RestoreVersionInput } from '../../schema/tools/pads.ts';

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

/** The pad as it was at one version, for the history panel to show before restoring it. */
export const padVersionTool = readTool({
  name: 'ui_pad_version',
  title: 'A pad version',
  kind: 'read',
  audience: 'app',
  description: 'A pad as it was at one version: its blocks in order.',
  input: PadVersionInput,
  policy: (input) => readPad(input.pad_id),
  run: ({ conn }, input, target) => padAtVersion(conn, target, input.version),
  present: presentPadAtVersion,
});

/**
 * "Restore this version": an earlier version's blocks as a new version on top, by the person
 * restoring. An edit like edit_pad's (same rights, same limits), undone with undo_edit.
 */
export const restoreVersionTool = liveWriteTool({
  name: 'ui_restore_pad_version',
  title: 'Restore a pad version',
  kind: 'destructive',
  audience: 'app',
  description: 'Bring back a pad as it was at an earlier version, as a new version on top (undo it with undo_edit). Blocks being typed in stay, listed in conflicts.',
  input: RestoreVersionInput,
  keyed: true,
  limits: ['write', 'padEdit', 'padText'],
  refuses: padTooLarge,
  savedChars: (out) => out.outcome.saved,
  policy: (input) => mayEditPad(input.pad_id),
  run: ({ core, actor, write }, input, target) => restoreVersion(core, actor, target, input.version, write),
  present: presentRestore,
});
