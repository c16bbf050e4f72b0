import { z } from 'zod';
import { blockId, given, hubRef, padId, seqNumber, threadId, title } from './fields.ts';
import { Kind, Seat } from './views.ts';
import { WaitingSuggestionView } from './checked.ts';

// create_pad, open_pad, edit_pad, undo_edit, ui_pad_history, ui_pad_version, ui_restore_pad_version.

/** A decision recorded with an edit: at most this many characters. */
export const DECISION_MAX = 500;

const version = seqNumber;

export const CreatePadInput = z.object({
  hub: hubRef.optional().describe('Hub slug or id; or thread_id.'),
  thread_id: threadId.optional().describe('Thread to put it beside; or hub.'),
  title: title.describe('Title.'),
  text: z.string().max(60_000).optional().describe('First text, Markdown; headings start sections.'),
});

export const CreatedPadData = z.object({ pad_id: z.string(), hub_id: z.string(), thread_id: z.string().optional(), version: z.number(), blocks: z.number() });

export const OpenPadInput = z.object({
  pad_id: padId,
  mode: z
    .enum(['outline', 'sections', 'changes', 'full'])
    .optional()
    .describe('outline (default): sections with ids and sizes; sections: those named; changes: since a version; full: the whole text.'),
  sections: z.array(blockId).max(100).optional().describe('Mode sections: the ids to read.'),
  since: version.optional().describe('Mode changes: the version you have.'),
});

/** Where the threads about a pad leave it, and one section. */
export const PadState = z.enum(['settled', 'open', 'disputed']);
export const SectionState = z.enum(['settled', 'open', 'disputed', 'unresolved', 'stale']);

/** A section's last writer, as `data` names them. */
const WriterRef = z.object({ participant_id: z.string(), kind: Kind });

/** One row of open_pad's outline: data.sections, and in the view with the section's title. */
export const OutlineSection = z.object({
  id: z.string(),
  level: z.number(),
  words: z.number(),
  /** Deeper sections folded into this row of a long outline. */
  hidden: z.number().optional(),
  status: SectionState.optional(),
  open_threads: z.number().optional(),
  last_writer: WriterRef.optional(),
  title: z.string(),
});
export type OutlineSection = z.infer<typeof OutlineSection>;

export const PadChange = z.object({ block_id: z.string(), change: z.enum(['added', 'changed', 'removed']), text: z.string(), before: z.string().optional() });
export type PadChange = z.infer<typeof PadChange>;

const PadViewBase = z.object({
  pad: z.object({ id: z.string(), title: z.string(), version: z.number(), status: PadState, hub: z.object({ slug: z.string(), name: z.string() }) }),
  /** Who made the pad: they rename and delete it, as the hub's owner and helpers do. */
  made_by: z.string(),
  seat: Seat,
  /** Whether the reader may type in the pad; the live connection is read-only otherwise. */
  canEdit: z.boolean(),
  /** Suggestions waiting on the pad, oldest first, with their changes. */
  suggestions: z.array(WaitingSuggestionView).optional(),
});

/** open_pad's view, by mode: the outline's sections, or what changed since a version. */
export const PadView = z.discriminatedUnion('mode', [
  PadViewBase.extend({ mode: z.literal('outline'), sections: z.array(OutlineSection) }),
  PadViewBase.extend({ mode: z.literal('changes'), since: z.number(), changes: z.array(PadChange) }),
  PadViewBase.extend({ mode: z.enum(['sections', 'full']) }),
]);
export type PadView = z.infer<typeof PadView>;

const blockText = z.string().max(60_000);

export const EditPadInput = z.object({
  pad_id: padId,
  base_version: version.describe('The version you read (open_pad data.version).'),
  text: z.string().max(60_000).optional().describe('Whole new Markdown, merged by paragraph.'),
  edits: z
    .array(z.object({ block_id: blockId, text: blockText.describe('New Markdown; empty deletes.') }))
    .max(200)
    .optional()
    .describe('Blocks to replace.'),
  inserts: z
    .array(z.object({ after: blockId.describe('Block id, or "start".'), text: blockText.describe('Markdown.') }))
    .max(200)
    .optional()
    .describe('Blocks to insert.'),
  decision: z.string().trim().min(1).max(DECISION_MAX).optional().describe('A decision to record with the edit.'),
  propose: z.boolean().optional().describe('true: suggest, not edit.'),
});

export const UndoEditInput = z.object({ edit_id: given(z.string().trim().min(1).max(100)).describe('edit_id from edit_pad (edt_…).') });

/** What an edit or an undo did: the version, the blocks changed, and those left alone as conflicts. */
export const PadEditData = z.object({
  pad_id: z.string(),
  version: z.number(),
  edit_id: z.string().optional(),
  changed: z.array(z.string()),
  conflicts: z.array(z.object({ block_id: z.string(), reason: z.enum(['changed_since_base', 'missing', 'anchor_missing']) })),
});
export const UndoData = PadEditData.extend({ undone: z.string() });

export const RestoreVersionInput = z.object({
  pad_id: padId,
  version: seqNumber.describe('The version to bring back, from the pad history.'),
});
export const RestoreData = PadEditData.extend({ restored: z.number() });

export const PadVersionInput = z.object({
  pad_id: padId,
  version: seqNumber.describe('The version to read, from the pad history.'),
});
/** A pad as it was at one version: its blocks in order. */
export const PadAtVersionView = z.object({
  version: z.number(),
  blocks: z.array(z.object({ id: z.string(), text: z.string() })),
});
export type PadAtVersionView = z.infer<typeof PadAtVersionView>;

export const PadHistoryInput = z.object({
  pad_id: padId,
  before: seqNumber.optional().describe('Only versions before this one (the next page).'),
});

/** `caller`: which way the change came in (`assistant`, `via <host>`, `agent`, `direct`), where it was kept. */
const Writer = z.object({ id: z.string(), name: z.string(), kind: Kind, caller: z.string().optional() });

export const PadVersionView = z.object({
  version: z.number(),
  kind: z.enum(['create', 'edit', 'undo', 'live', 'restore']),
  /** A restore: the version it brought back. */
  restored: z.number().nullable(),
  writer: Writer.nullable(),
  at: z.string(),
  /** How many blocks it touched, and of those how many it placed (added or moved) or removed. */
  blocks: z.number(),
  added: z.number(),
  removed: z.number(),
  snippet: z.string().nullable(),
  /** For undo_edit: every version but the pad's first. */
  editId: z.string().nullable(),
  /** Whether the reader may undo it. */
  undoable: z.boolean(),
});
export type PadVersionView = z.infer<typeof PadVersionView>;

export const PadHistoryView = z.object({
  version: z.number(),
  versions: z.array(PadVersionView),
  nextBefore: z.number().nullable(),
  /** Each current block's last writer, by block id. */
  authors: z.record(z.string(), Writer),
});
export type PadHistoryView = z.infer<typeof PadHistoryView>;

/** open_pad's data: the pad's ids and states, and what its mode read (section rows, changes, block ids). */
export const OpenPadData = z.object({
  pad_id: z.string(),
  hub_id: z.string(),
  version: z.number(),
  status: PadState,
  mode: z.enum(['outline', 'sections', 'changes', 'full']),
  sections: z
    .array(
      z.object({
        id: z.string(),
        level: z.number().optional(),
        words: z.number().optional(),
        hidden: z.number().optional(),
        status: SectionState.optional(),
        open_threads: z.number().optional(),
        blocks: z.array(z.string()).optional(),
        last_writer: WriterRef.optional(),
      }),
    )
    .optional(),
  missing: z.array(z.string()).optional(),
  since: z.number().optional(),
  changes: z.array(z.object({ block_id: z.string(), change: z.enum(['added', 'changed', 'removed']) })).optional(),
  blocks: z.array(z.string()).optional(),
  clipped: z.boolean().optional(),
  /** Suggestions waiting on the pad (their texts are in the answer's text, framed as participants'). */
  suggestions: z
    .array(
      z.object({
        id: z.string(),
        author: z.string(),
        base_version: z.number(),
        sections: z.array(z.string()),
        small: z.boolean(),
        created_at: z.string(),
        changes: z.array(z.object({ block_id: z.string(), change: z.enum(['added', 'changed', 'removed']) })),
      }),
    )
    .optional(),
});

/** edit_pad: what the edit did, and the decision recorded with it. */
export const EditPadData = PadEditData.extend({ decision_id: z.string().optional() });
