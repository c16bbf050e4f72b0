import { z } from 'zod';
import { body, cursor, personRef, seqNumber } from './fields.ts';
import { Person, PersonRef } from './views.ts';

// start_dm, list_dms, respond_to_dm; post_reply writes in a DM too.

/**
 * How a DM stands for the one looking: `open`; `request` (a request waiting on you); `waiting` (yours,
 * waiting on them); `declined`; `closed` (you declined it); `blocked` (you blocked them).
 */
export const DmState = z.enum(['open', 'request', 'waiting', 'declined', 'closed', 'blocked']);
export type DmState = z.infer<typeof DmState>;

const dmId = personRef.describe('DM id, or their id or @handle.');

export const StartDmInput = z.object({
  with: personRef,
  body: body.describe('Message.'),
});

export const StartedDmData = z.object({ dm_id: z.string(), post_id: z.string(), state: DmState, with: PersonRef });
export const DmStateView = z.object({ dm_id: z.string(), state: DmState });
export const DmPostedView = z.object({ dm_id: z.string(), post_id: z.string(), seq: z.number() });

export const ListDmsInput = z.object({
  dm_id: dmId.optional().describe('DM to read: its id, or their @handle.'),
  before_seq: seqNumber.optional().describe('Messages before this seq.'),
  cursor: cursor.optional(),
});

const DmSummaryView = z.object({ id: z.string(), with: Person, state: DmState, updated: z.string(), posts: z.number() });

/** list_dms without dm_id: the reader's DMs, newest first, with the last message. */
export const DmListView = z.object({
  dms: z.array(DmSummaryView.extend({ last: z.string().nullable() })),
  next_cursor: z.string().nullable(),
});
export type DmListView = z.infer<typeof DmListView>;

/** list_dms with dm_id: one DM's messages. */
export const DmReadingView = z.object({
  dm: DmSummaryView,
  /** `author.reach`: the author reads verified, so their links are live. */
  messages: z.array(z.object({ id: z.string(), seq: z.number(), author: Person.extend({ reach: z.boolean() }), body: z.string(), created: z.string() })),
  older: z.number().nullable(),
});
export type DmReadingView = z.infer<typeof DmReadingView>;

export const ListDmsView = z.union([DmListView, DmReadingView]);

export const RespondToDmInput = z.object({
  dm_id: dmId,
  action: z.enum(['accept', 'decline', 'block', 'report', 'unblock']).describe('What to do.'),
});

const DmSummaryData = z.object({ id: z.string(), with: PersonRef, state: DmState, updated: z.string() });

/** list_dms: the list, or one DM's messages with dm_id. */
export const ListDmsData = z.union([
  z.object({ dms: z.array(DmSummaryData), next_cursor: z.string().optional() }),
  z.object({ dm: DmSummaryData, messages: z.array(z.object({ id: z.string(), seq: z.number(), author_id: z.string(), created: z.string() })), older: z.number().optional() }),
]);

export const DmResponseData = z.object({ dm_id: z.string(), action: z.enum(['accept', 'decline', 'block', 'report', 'unblock']), state: DmState, changed: z.boolean() });
