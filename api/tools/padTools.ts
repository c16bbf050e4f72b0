import { z } from 'zod';
import { createPad } from '../../server/core/pads/pads.ts';
import { undoEdit } from '../../server/core/pads/padEdits.ts';
import { DECISION_MAX, editPadDeciding } from '../../server/core/threads/decisions.ts';
import { editPad as mayEditPad, placePad, readPad, undoPadEdit, watch } from '../../server/core/policies/policies.ts';
import { type Watched } from '../../server/core/kernel/policy.ts';
import { waitForChanges, WAIT_DEFAULT_S, WAIT_MAX_S } from '../../server/core/inbox/waits.ts';
import { openPad } from '../../server/core/pads/padHistory.ts';
import { presentCreatedPad, presentPad, presentUndo } from '../present/pads.ts';
import { presentDecidedEdit } from '../present/decisions.ts';
import { presentWait } from '../present/waits.ts';
import { liveWriteTool, readTool } from './defineTool.ts';
import { blockId, hubRef, padId, seqNumber, threadId, title } from './fields.ts';

const version = seqNumber;

export const createPadTool = liveWriteTool({
  name: 'create_pad',
  title: 'Create a pad',
  description:
    'Make a versioned pad (a shared document of sections) in a hub or beside a thread, optionally with its first Markdown (60,000 characters at most).',
  input: z.object({
    hub: hubRef.optional().describe('Hub slug or id; or thread_id.'),
    thread_id: threadId.optional().describe('Thread to put it beside; or hub.'),
    title: title.describe('Title.'),
    text: z.string().max(60_000).optional().describe('First text, Markdown; headings start sections.'),
  }),
  keyed: true,
  limits: ['write', 'padText'],
  policy: (input) => placePad(input),
  run: ({ core, actor, seal }, input, target) => createPad(core, actor, target, input, seal),
  present: presentCreatedPad,
});

export const openPadTool = readTool({
  name: 'open_pad',
  title: 'Open a pad',
  description:
    'Read a pad. mode outline (default): sections with ids and sizes; sections: the ones named; changes: since your version; full: the whole text. data.version is the base_version for edit_pad.',
  input: z.object({
    pad_id: padId,
    mode: z.enum(['outline', 'sections', 'changes', 'full']).optional().describe('outline (default), sections, changes or full.'),
    sections: z.array(blockId).max(100).optional().describe('Mode sections: the ids to read.'),
    since: version.optional().describe('Mode changes: the version you have.'),
  }),
  policy: (input) => readPad(input.pad_id),
  run: ({ core, conn }, input, target) => openPad(core, conn, target, input),
  present: presentPad,
});

const blockText = z.string().max(60_000);
/** What the edit engine refuses of an edit and an undo alike, as sizes. */
const padTooLarge = { too_large: 'The pad would pass 60,000 characters, or more than 200 blocks would change in one call' };

export const editPadTool = liveWriteTool({
  name: 'edit_pad',
  title: 'Edit a pad',
  destructive: true,
  description:
    'Change a pad, live at once: text (the whole new Markdown, merged by paragraph) or edits [{block_id, text}] and inserts [{after, text}], 200 each. Blocks others changed since base_version stay theirs and are listed in conflicts. Returns an edit_id for undo_edit. decision records what was decided with the edit.',
  input: z.object({
    pad_id: padId,
    base_version: version.describe('The version you read (open_pad data.version).'),
    text: z.string().max(60_000).optional().describe('Whole new Markdown, merged by paragraph.'),
    edits: z
      .array(z.object({ block_id: blockId, text: blockText.describe('New Markdown; empty deletes.') }))
      .max(200)
      .optional()
      .describe('Blocks to replace.'),
    inserts: z
      .array(z.object({ after: z.string().trim().min(1).max(20).describe('Block id, or "start".'), text: blockText.describe('Markdown.') }))
      .max(200)
      .optional()
      .describe('Blocks to insert.'),
    decision: z.string().trim().min(1).max(DECISION_MAX).optional().describe('Decision to record, max 500.'),
  }),
  keyed: true,
  limits: ['write', 'padEdit', 'padText'],
  refuses: padTooLarge,
  // Counted as saved: the new text of the paragraphs that changed, not the whole text sent.
  savedChars: (out) => out.outcome.saved,
  policy: (input) => mayEditPad(input.pad_id),
  run: ({ core, actor, seal }, input, target) => editPadDeciding(core, actor, target, input, seal),
  present: presentDecidedEdit,
});

export const undoEditTool = liveWriteTool({
  name: 'undo_edit',
  title: 'Undo a pad edit',
  destructive: true,
  description:
    'Undo one edit_pad edit as a new version; blocks changed since are left and listed as conflicts. Members undo their own edits, owners and helpers anyone’s.',
  input: z.object({ edit_id: z.string().trim().min(1).max(100).describe('edit_id from edit_pad (edt_…).') }),
  limits: ['write', 'padEdit'],
  refuses: padTooLarge,
  policy: (input) => undoPadEdit(input.edit_id),
  run: ({ core, actor, seal }, _input, target) => undoEdit(core, actor, target, seal),
  present: presentUndo,
});

export const waitForChangesTool = readTool({
  name: 'wait_for_changes',
  title: 'Wait for changes',
  description: 'Long-poll a pad or thread past your version, and/or your inbox; answers on a change or at the timeout. 4 open at most.',
  input: z.object({
    pad_id: z.string().optional().describe('Pad; or thread_id.'),
    thread_id: z.string().optional().describe('Thread; or pad_id.'),
    // Checked by waitForChanges: a whole number, or its digits (threads give their version as a string).
    version: z.union([z.number(), z.string()]).optional().describe('Version you have.'),
    inbox: z.boolean().optional().describe('Wake on new inbox items too.'),
    inbox_cursor: z.string().max(500).optional().describe('check_inbox cursor.'),
    timeout_seconds: z.int().min(1).max(WAIT_MAX_S).optional().describe(`Default ${WAIT_DEFAULT_S}.`),
  }),
  refuses: { rate_limited: 'More than 4 waits open at once' },
  // The inbox alone watches nothing to load.
  policy: (input) => (input.inbox && input.pad_id === undefined && input.thread_id === undefined ? async (): Promise<Watched | null> => null : watch(input)),
  run: ({ core, actor, signal }, input, target) => waitForChanges(core, actor, target, input, signal),
  present: presentWait,
});
