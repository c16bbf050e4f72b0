import { createPad } from '../../server/core/pads/pads.ts';
import { undoEdit } from '../../server/core/pads/padEdits.ts';
import { changePad } from '../../server/core/checked/padChange.ts';
import { changePad as mayChangePad, placePad, readPad, undoPadEdit, watch } from '../../server/core/policies/policies.ts';
import type { Watched } from '../../server/core/kernel/policy.ts';
import { waitForChanges } from '../../server/core/inbox/waits.ts';
import { openPad } from '../../server/core/pads/padHistory.ts';
import { presentCreatedPad, presentPad, presentUndo } from '../present/pads.ts';
import { presentPadChange, withSuggestions } from '../present/checked.ts';
import { waitingSuggestions } from '../../server/core/checked/suggestions.ts';
import { presentWait } from '../present/waits.ts';
import { liveWriteTool, readTool } from './defineTool.ts';
import { CreatePadInput, EditPadInput, OpenPadInput, UndoEditInput } from '../../schema/tools/pads.ts';
import { WaitForChangesInput } from '../../schema/tools/inbox.ts';

export const createPadTool = liveWriteTool({
  name: 'create_pad',
  card: true,
  title: 'Create a pad',
  kind: 'write',
  description:
    'Make a versioned pad (a shared document of sections) in a hub or beside a thread.',
  input: CreatePadInput,
  texts: ['title', 'text'],
  keyed: true,
  limits: ['write', 'padText'],
  policy: (input) => placePad(input),
  run: ({ core, actor, write }, input, target) => createPad(core, actor, target, input, write),
  present: presentCreatedPad,
});

export const openPadTool = readTool({
  name: 'open_pad',
  card: true,
  title: 'Open a pad',
  kind: 'read',
  description:
    'Read a pad, as mode says; data.version is the base_version for edit_pad.',
  input: OpenPadInput,
  policy: (input) => readPad(input.pad_id),
  run: async ({ core, conn, actor }, input, target) => {
    const opened = await openPad(core, conn, actor, target, input);
    return { ...opened, suggestions: opened.suggested ? await waitingSuggestions(conn, { padId: target.pad.id }) : [] };
  },
  present: (out) => withSuggestions(presentPad(out), out.suggestions, out.hub),
});

/** What the edit engine refuses of an edit and an undo alike, as sizes. */
export const padTooLarge = { too_large: 'The pad would pass 60,000 characters, or more than 200 blocks would change in one call' };

export const editPadTool = liveWriteTool({
  name: 'edit_pad',
  title: 'Edit a pad',
  kind: 'destructive',
  description:
    'Change a pad, live at once: the whole text, or edits and inserts by block. Blocks others changed since base_version stay theirs, listed in conflicts. Answers an edit_id for undo_edit. In Checked hubs, members\' edits become suggestions.',
  input: EditPadInput,
  // The pad's own text is checked by the core, against what the pad already holds.
  texts: ['decision'],
  keyed: true,
  limits: ['write', 'padEdit', 'padText'],
  refuses: padTooLarge,
  // Counted as saved: the new text of the paragraphs that changed, not the whole text sent.
  savedChars: (out) => ('outcome' in out ? out.outcome.saved : out.saved),
  policy: (input) => mayChangePad(input.pad_id, input.propose === true),
  run: ({ core, actor, write }, input, target) => changePad(core, actor, target, input, write),
  present: presentPadChange,
});

export const undoEditTool = liveWriteTool({
  name: 'undo_edit',
  keyed: true,
  title: 'Undo a pad edit',
  kind: 'destructive',
  description:
    'Undo one edit_pad edit as a new version; blocks changed since stay, listed in conflicts. Members undo their own, owners and helpers anyone’s.',
  input: UndoEditInput,
  limits: ['write', 'padEdit'],
  refuses: padTooLarge,
  policy: (input) => undoPadEdit(input.edit_id),
  run: ({ core, actor, write }, _input, target) => undoEdit(core, actor, target, write),
  present: presentUndo,
});

export const waitForChangesTool = readTool({
  name: 'wait_for_changes',
  title: 'Wait for changes',
  kind: 'read',
  description: 'Long-poll a pad or thread past your version, and/or your inbox; answers on a change or at the timeout. 4 open at most.',
  input: WaitForChangesInput,
  refuses: { rate_limited: 'More than 4 waits open at once' },
  // The inbox alone watches nothing to load.
  policy: (input) => (input.inbox && input.pad_id === undefined && input.thread_id === undefined ? async (): Promise<Watched | null> => null : watch(input)),
  run: ({ core, actor, signal }, input, target) => waitForChanges(core, actor, target, input, signal),
  present: presentWait,
});
