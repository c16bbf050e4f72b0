import { z } from 'zod';
import { createPad, padReading } from '../../server/core/pads.ts';
import { editPad, undoEdit } from '../../server/core/padEdits.ts';
import { editPad as mayEditPad, placePad, readPad, undoPadEdit, watch } from '../../server/core/policies.ts';
import { waitForChanges, WAIT_DEFAULT_S, WAIT_MAX_S } from '../../server/core/waits.ts';
import { presentCreatedPad, presentEdit, presentPad, presentUndo, presentWait } from '../present/pads.ts';
import { liveWriteTool, readTool } from './defineTool.ts';
import { hubRef, seqNumber, threadId, title } from './fields.ts';

const padId = z.string().trim().min(1).max(100).describe('The pad id (pad_…), as returned by create_pad or open_hub.');
const blockId = z.string().trim().min(1).max(20).describe('A block id, as listed by open_pad.');
const version = seqNumber;

export const createPadTool = liveWriteTool({
  name: 'create_pad',
  title: 'Create a pad',
  description:
    'Make a new versioned pad (a shared document of sections) in a hub, or beside a thread, optionally with its first text in Markdown (at most 60,000 characters). Returns the pad id and version 1.',
  input: z.object({
    hub: hubRef.optional().describe('The hub to make it in (slug or id); or give thread_id instead.'),
    thread_id: threadId.optional().describe('The thread it belongs beside (thr_…); or give hub instead.'),
    title: title.describe("The pad's title, at most 200 characters."),
    text: z.string().max(60_000).optional().describe('Optional first text, in Markdown; headings start sections. At most 60,000 characters.'),
  }),
  keyed: true,
  limit: 'write',
  policy: (input) => placePad(input),
  run: ({ core, actor, seal }, input, target) => createPad(core, actor, target, input, seal),
  present: presentCreatedPad,
});

export const openPadTool = readTool({
  name: 'open_pad',
  title: 'Open a pad',
  description:
    'Read a pad. mode "outline" (default) lists sections with their ids and sizes; "sections" returns the sections you name; "changes" what changed since a version you have; "full" the whole text (clipped at 40,000 characters). structuredContent.version is the version to pass to edit_pad.',
  input: z.object({
    pad_id: padId,
    mode: z.enum(['outline', 'sections', 'changes', 'full']).optional().describe('outline (default), sections, changes or full.'),
    sections: z.array(blockId).max(100).optional().describe('With mode "sections": the section ids (from the outline) to read.'),
    since: version.optional().describe('With mode "changes": the version you have.'),
  }),
  policy: (input) => readPad(input.pad_id),
  run: ({ core, conn }, input, target) => padReading(core, conn, target, input),
  present: presentPad,
});

const blockText = z.string().max(60_000);

export const editPadTool = liveWriteTool({
  name: 'edit_pad',
  title: 'Edit a pad',
  destructive: true,
  description:
    'Change a pad, live at once. Either send text (the whole new Markdown: only paragraphs that differ from base_version are touched) or edits [{block_id, text}] (empty text deletes) and inserts [{after: block_id or "start", text}], at most 200 each. A block someone else changed since base_version is left as they wrote it and listed in conflicts. Returns the new version and an edit_id for undo_edit.',
  input: z.object({
    pad_id: padId,
    base_version: version.describe('The version you read (open_pad structuredContent.version); changes since it by others are kept.'),
    text: z.string().max(60_000).optional().describe('The whole new text, in Markdown; merged paragraph by paragraph against base_version.'),
    edits: z
      .array(z.object({ block_id: blockId, text: blockText.describe('The new Markdown of the block; empty deletes it.') }))
      .max(200)
      .optional()
      .describe('Blocks to replace, at most 200.'),
    inserts: z
      .array(z.object({ after: z.string().trim().min(1).max(20).describe('The block id to insert after, or "start".'), text: blockText.describe('The Markdown to insert.') }))
      .max(200)
      .optional()
      .describe('New blocks to insert, at most 200.'),
  }),
  keyed: true,
  limit: 'write',
  policy: (input) => mayEditPad(input.pad_id),
  run: ({ core, actor, seal }, input, target) => editPad(core, actor, target, input, seal),
  present: presentEdit,
});

export const undoEditTool = liveWriteTool({
  name: 'undo_edit',
  title: 'Undo a pad edit',
  destructive: true,
  description:
    'Undo one edit_pad edit as a new version. Blocks nobody changed since get their earlier text back; the others are reported as conflicts. Members undo their own edits; owners and helpers anyone’s.',
  input: z.object({ edit_id: z.string().trim().min(1).max(100).describe('The edit_id that edit_pad returned (edt_…).') }),
  limit: 'write',
  policy: (input) => undoPadEdit(input.edit_id),
  run: ({ core, actor, seal }, _input, target) => undoEdit(core, actor, target, seal),
  present: presentUndo,
});

export const waitForChangesTool = readTool({
  name: 'wait_for_changes',
  title: 'Wait for changes',
  description: `Long-poll a pad or a thread: answers as soon as it is newer than the version you have, or after timeout_seconds (default ${WAIT_DEFAULT_S}, at most ${WAIT_MAX_S}). Use it instead of reading again and again; at most 4 waits at once.`,
  input: z.object({
    pad_id: padId.optional().describe('The pad to watch; or give thread_id.'),
    thread_id: threadId.optional().describe('The thread to watch; or give pad_id.'),
    version: z.union([version, z.string().regex(/^\d+$/)]).describe('The version you have (a pad version number, or a thread version).'),
    timeout_seconds: z.number().int().min(1).max(WAIT_MAX_S).optional().describe(`How long to wait at most, in seconds (default ${WAIT_DEFAULT_S}, max ${WAIT_MAX_S}).`),
  }),
  policy: (input) => watch(input),
  run: ({ core, actor }, input, target) => waitForChanges(core, actor, target, input),
  present: presentWait,
});
