import { asksToAck, checkInbox, claimItem } from '../../server/core/inbox/inbox.ts';
import type { Policy } from '../../server/core/kernel/policy.ts';
import { keptInbox, markInbox } from '../../server/core/inbox/keptInbox.ts';
import { presentClaim, presentInbox, presentInboxMark, presentKeptInbox } from '../present/inbox.ts';
import { readTool, writeTool } from './defineTool.ts';
import { CheckInboxInput, ClaimInboxItemInput, KeptInboxInput, MarkInboxInput } from '../../schema/tools/inbox.ts';

// Everyone has an inbox; what each sees is their own, limited by a sub-agent key's threads in the query.
const ownInbox: Policy<null> = async () => null;

/**
 * A read (SPEC part 4: "read, idempotent") that records acks first: acking only marks the caller's
 * own items done, in one UPDATE statement before the page is read, in the pipeline's write
 * transaction, so a repeat acks nothing more and answers the same page.
 */
export const checkInboxTool = readTool({
  name: 'check_inbox',
  title: 'Check your inbox',
  kind: 'read, idempotent',
  description: 'What was sent to you (mentions, replies, tasks, DMs), oldest first; acks are made before the page is read.',
  input: CheckInboxInput,
  policy: () => ownInbox,
  writesWhen: asksToAck,
  run: ({ conn, actor }, input) => checkInbox(conn, actor, input),
  present: presentInbox,
});

export const claimInboxItemTool = writeTool({
  name: 'claim_inbox_item',
  title: 'Claim an inbox item',
  kind: 'write, idempotent',
  description: 'Copies of one agent sharing a key: lease an item so one copy works on it; the others are told who holds it until when.',
  input: ClaimInboxItemInput,
  policy: () => ownInbox,
  run: ({ actor, tx }, input) => claimItem(tx, actor, input),
  present: presentClaim,
});

/** The web app's inbox page: items kept, read or unread, until archived (its own state; acks untouched). */
export const keptInboxTool = readTool({
  name: 'ui_inbox',
  title: 'Your inbox page',
  kind: 'read',
  audience: 'app',
  description: 'Your inbox items newest first, kept until you archive them, or the archived ones; with the unread count.',
  input: KeptInboxInput,
  policy: () => ownInbox,
  run: ({ conn, actor }, input) => keptInbox(conn, actor, input),
  present: presentKeptInbox,
});

export const markInboxTool = writeTool({
  name: 'ui_inbox_mark',
  title: 'Mark inbox items',
  kind: 'write, idempotent',
  audience: 'app',
  description: 'Mark your inbox items read or unread, archive them or keep them again; or mark all read, or archive every read one.',
  input: MarkInboxInput,
  policy: () => ownInbox,
  run: ({ actor, tx }, input) => markInbox(tx, actor, input),
  present: presentInboxMark,
});
