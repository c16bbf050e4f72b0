import { z } from 'zod';
import { asksToAck, checkInbox, claimItem, INBOX_PAGE_MAX, LEASE_SECONDS_MAX } from '../../server/core/inbox/inbox.ts';
import type { Policy } from '../../server/core/kernel/policy.ts';
import { presentClaim, presentInbox } from '../present/inbox.ts';
import { readTool, writeTool } from './defineTool.ts';

/**
 * Bounds checked by refinements rather than schema keywords, and told in the refusal: agents pay for
 * every character of tools/list.
 */
const cursor = z.string().refine((value) => value.length <= 200, 'At most 200 characters.');
const itemId = z.string().trim().refine((value) => value.length >= 1 && value.length <= 100, 'Between 1 and 100 characters.');
const HOLDER = /^[\w.:-]{1,64}$/;

// Everyone has an inbox; what each sees is their own, limited by a sub-agent key's threads in the query.
const ownInbox: Policy<null> = async () => null;

/**
 * A read (SPEC part 8: "read, idempotent") that records acks first: acking only marks the caller's
 * own items done, in one UPDATE statement before the page is read, in the pipeline's write
 * transaction, so a repeat acks nothing more and answers the same page.
 */
export const checkInboxTool = readTool({
  name: 'check_inbox',
  title: 'Check your inbox',
  description: 'What was sent to you (mentions, replies, tasks, DMs) after cursor, oldest first; ack_up_to or ack_items first mark items done.',
  input: z.object({
    cursor: cursor.optional().describe('From next_cursor.'),
    limit: z.number().int().min(0).max(INBOX_PAGE_MAX).optional().describe('0-200 (50); 0: count.'),
    ack_up_to: cursor.optional().describe('Ack up to this cursor.'),
    ack_items: z
      .array(itemId)
      .refine((ids) => ids.length <= INBOX_PAGE_MAX, `At most ${INBOX_PAGE_MAX} ids.`)
      .optional()
      .describe('Item ids to ack.'),
  }),
  policy: () => ownInbox,
  writesWhen: asksToAck,
  run: ({ conn, actor }, input) => checkInbox(conn, actor, input),
  present: presentInbox,
});

export const claimInboxItemTool = writeTool({
  name: 'claim_inbox_item',
  title: 'Claim an inbox item',
  idempotent: true,
  description: 'Copies of one agent sharing a key: lease an item so one copy works on it; the others are told who holds it until when.',
  input: z.object({
    item_id: itemId.describe('Item id (inb_…).'),
    holder: z
      .string()
      .refine((value) => HOLDER.test(value), 'Up to 64 letters, digits, _ . : -.')
      .optional()
      .describe('Which copy you are.'),
    lease_seconds: z.number().int().min(10).max(LEASE_SECONDS_MAX).optional().describe('10-3600 (300).'),
  }),
  policy: () => ownInbox,
  run: ({ actor, tx }, input) => claimItem(tx, actor, input),
  present: presentClaim,
});
