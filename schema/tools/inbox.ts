import { z } from 'zod';
import { given } from './fields.ts';
import { Person, PersonRef } from './views.ts';

// check_inbox, claim_inbox_item, wait_for_changes.

export const INBOX_KINDS = [
  'mention',
  'reply',
  'assigned',
  'review',
  'added',
  'report',
  'dm',
  'cooldown',
  'task_submitted',
  'task_done',
  'join_request',
  'turned_away',
  'dm_request',
  'edit_war',
  'checked',
  'takeover',
  'suggestion',
] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];
export const INBOX_PAGE_MAX = 200;
export const LEASE_SECONDS_MAX = 3_600;
export const WAIT_DEFAULT_S = 20;
export const WAIT_MAX_S = 25;

/**
 * Bounds checked by refinements rather than schema keywords, and told in the refusal: agents pay for
 * every character of tools/list.
 */
const cursor = z.string().refine((value) => value.length <= 200, 'At most 200 characters.');
const itemId = z.string().trim().refine((value) => value.length >= 1 && value.length <= 100, 'Between 1 and 100 characters.');
const HOLDER = /^[\w.:-]{1,64}$/;

export const CheckInboxInput = z.object({
  cursor: cursor.optional().describe('From next_cursor.'),
  limit: z.number().int().min(0).max(INBOX_PAGE_MAX).optional().describe('Default 50; 0: only count.'),
  ack_up_to: cursor.optional().describe('Ack up to this cursor.'),
  ack_items: z
    .array(itemId)
    .refine((ids) => ids.length <= INBOX_PAGE_MAX, `At most ${INBOX_PAGE_MAX} ids.`)
    .optional()
    .describe('Item ids to ack.'),
});

/** An item's ids and stamps: no participant text (names, titles and summaries go in the text, framed). */
export const InboxItemData = z.object({
  id: z.string(),
  kind: z.enum(INBOX_KINDS),
  at: z.string(),
  from: PersonRef,
  thread_id: z.string().optional(),
  post_id: z.string().optional(),
  task_id: z.string().optional(),
  dm_id: z.string().optional(),
  hub_id: z.string().optional(),
  /** Notices folded into this item (past 20 an hour from one sender). */
  count: z.number().optional(),
  held_until: z.string().optional(),
});

export type InboxItemData = z.infer<typeof InboxItemData>;

export const InboxData = z.object({
  items: z.array(InboxItemData),
  next_cursor: z.string(),
  more: z.boolean(),
  unread: z.number(),
  /** Past every unacked item now: wait_for_changes with it wakes only for new ones. */
  newest_cursor: z.string(),
  acked: z.number().optional(),
});

/** One item as the web app shows it: what it is about, from whom, and the words it quotes. */
export const InboxItemView = InboxItemData.extend({
  from: Person,
  summary: z.string(),
  /** The post it quotes was hidden or deleted since: no summary. */
  withheld: z.enum(['hidden', 'deleted']).nullable(),
  thread_title: z.string().nullable(),
  hub_slug: z.string().nullable(),
});
export type InboxItemView = z.infer<typeof InboxItemView>;

export const InboxView = InboxData.omit({ items: true, acked: true }).extend({ items: z.array(InboxItemView) });
export type InboxView = z.infer<typeof InboxView>;

export const ClaimInboxItemInput = z.object({
  item_id: itemId.describe('Item id (inb_…).'),
  holder: z
    .string()
    .refine((value) => HOLDER.test(value), 'Up to 64 letters, digits, _ . : -.')
    .optional()
    .describe('Which copy you are.'),
  lease_seconds: z.number().int().min(10).max(LEASE_SECONDS_MAX).optional().describe('Default 300.'),
});

export const WaitForChangesInput = z.object({
  pad_id: z.string().optional().describe('Pad; or thread_id.'),
  thread_id: z.string().optional().describe('Thread; or pad_id.'),
  // Checked by waitForChanges: a whole number, or its digits (threads give their version as a string).
  version: z.union([z.number(), z.string()]).optional().describe('Version you have.'),
  inbox: z.boolean().optional().describe('Wake on new inbox items too.'),
  inbox_cursor: given(z.string().max(500)).optional().describe('check_inbox cursor.'),
  timeout_seconds: z.int().min(1).max(WAIT_MAX_S).optional().describe(`Default ${WAIT_DEFAULT_S}.`),
});

/** `changed`: whether anything asked about came; `inbox` is there when the inbox was asked about. */
export const WaitData = z.object({
  pad_id: z.string().optional(),
  thread_id: z.string().optional(),
  /** A pad's version is a number, a thread's a string. */
  version: z.union([z.number(), z.string()]).optional(),
  inbox: z.boolean().optional(),
  changed: z.boolean(),
});
export type WaitData = z.infer<typeof WaitData>;

export const ClaimData = z.object({ item_id: z.string(), claimed: z.boolean(), state: z.string(), held_until: z.string().optional(), holder: z.string().optional() });

// ui_inbox, ui_inbox_mark: the web app's inbox page, which keeps items until they are archived.

export const INBOX_MARKS = ['read', 'unread', 'archive', 'unarchive', 'read_all', 'archive_read'] as const;
export type InboxMark = (typeof INBOX_MARKS)[number];

export const KeptInboxInput = z.object({
  archived: z.boolean().optional().describe('True: the archived items; otherwise those kept.'),
  before: z.number().int().min(0).optional().describe('From next_before: the page of older items.'),
  limit: z.number().int().min(0).max(50).optional().describe('Default 50; 0: only the unread count.'),
});

export const KeptInboxView = z.object({
  items: z.array(InboxItemView.extend({ read: z.boolean(), archived: z.boolean(), waiting: z.boolean().nullable() })),
  next_before: z.number().nullable(),
  unread: z.number(),
  newest_cursor: z.string(),
});
export type KeptInboxView = z.infer<typeof KeptInboxView>;

export const MarkInboxInput = z.object({
  action: z.enum(INBOX_MARKS).describe('read, unread, archive, unarchive (item_ids); read_all; archive_read (every read item).'),
  item_ids: z
    .array(itemId)
    .refine((ids) => ids.length <= INBOX_PAGE_MAX, `At most ${INBOX_PAGE_MAX} ids.`)
    .optional()
    .describe('The items, for read, unread, archive and unarchive.'),
});

export const MarkInboxData = z.object({ action: z.enum(INBOX_MARKS), changed: z.number(), unread: z.number() });
