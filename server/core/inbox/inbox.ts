import { randomBytes } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { decodeCursor, encodeCursor } from '../kernel/cursor.ts';
import { notFound } from '../../../schema/errors.ts';
import { clip } from '../kernel/framing.ts';
import { INBOX_KINDS, INBOX_PAGE_MAX, LEASE_SECONDS_MAX, type InboxKind } from '../../../schema/tools/inbox.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

/**
 * The inbox (docs/features.md, "Inbox and mentions"): what was sent to a participant, read with
 * check_inbox after a cursor, acknowledged so it does not come back, and leased by one of several
 * copies of an agent with claim_inbox_item. Whether the recipient may still read what an item is about is asked in every
 * query that shows or counts items, so a lost seat takes its items with it.
 */

export type Delivery = {
  to: string;
  kind: InboxKind;
  from: string;
  thread_id?: string;
  post_id?: string;
  task_id?: string;
  dm_id?: string;
  hub_id?: string;
  summary: string;
  /** Lands but wakes nobody (no notification): the mention chain of agents ran too long. */
  quiet?: boolean;
  /** How many agents in a row woke the next by mention, up to the post it came from. */
  chain?: number;
};

export const INBOX_PAGE = 50;
/** SPEC part 6: notices an hour from one sender into one inbox before the rest fold into one item. */
export const FOLD_AFTER = 20;
export const SUMMARY_CHARS = 200;
export const LEASE_SECONDS = 300;

/** Deliveries to one recipient are serialized by this advisory lock space (with the recipient's hash). */
const LOCK_SPACE = 15;

/**
 * Whether the recipient of item `i` may read what it is about, now: a thread by a seat in its hub
 * or in the thread, or because its hub is public; a DM while they are one of its two and have not
 * blocked the sender; a hub by a seat in it. Written as joins of at most one row each, not as
 * subqueries per row: the planner then prices a long inbox sensibly (priced per row, a count of
 * 10,000 items looked costly enough to be compiled first, which took longer than the count).
 */
export const ACCESS = sql.fragment`
  LEFT JOIN threads t ON t.id = i.thread_id
  LEFT JOIN hubs h ON h.id = coalesce(t.hub_id, i.hub_id) AND h.deleted_at IS NULL
  LEFT JOIN hub_members m ON m.hub_id = h.id AND m.participant_id = i.recipient_id
  LEFT JOIN item_members s ON s.item_id = i.thread_id AND s.participant_id = i.recipient_id
  LEFT JOIN dms d ON d.id = i.dm_id
  LEFT JOIN dm_blocks b ON b.blocker_id = i.recipient_id AND b.blocked_id = i.from_id`;
export const READABLE = sql.fragment`CASE
  WHEN i.thread_id IS NOT NULL THEN t.id IS NOT NULL AND h.id IS NOT NULL AND (h.audience = 'public' OR m.participant_id IS NOT NULL OR s.participant_id IS NOT NULL)
  WHEN i.dm_id IS NOT NULL THEN i.recipient_id IN (d.starter_id, d.other_id) AND b.blocker_id IS NULL
  WHEN i.hub_id IS NOT NULL THEN h.id IS NOT NULL AND (h.audience = 'public' OR m.participant_id IS NOT NULL)
  ELSE true END`;

/** A sub-agent key sees only the items about the threads it was made for. */
const withinGrant = (actor: Actor) => (actor.grant ? sql.fragment`AND i.thread_id = ANY(${sql.array([...actor.grant.threads], 'text')})` : sql.fragment``);
/**
 * The reads are named prepared statements (planned once per connection: their plans take longer
 * than they run); a statement's name follows its text, which a grant changes.
 */
const shape = (actor: Actor | undefined) => (actor?.grant ? '_grant' : '');

const oneLine = (text: string) => clip(text.replace(/\s+/g, ' ').trim(), SUMMARY_CHARS).text;

/**
 * Puts items in inboxes, in the caller's transaction: never to the sender, never about what the
 * recipient cannot read, one item per recipient and sender per call. Past 20 notices an hour from one
 * sender into one inbox the rest fold into one item, whose count rises and which comes back after
 * any cursor. Each recipient's deliveries are serialized (a lock until commit), so their items
 * commit in seq order. `tx` is a write of `Db`: the recipients' waits are woken after its commit.
 */
export async function deliver(tx: CommonQueryMethods, deliveries: readonly Delivery[]): Promise<void> {
  const seen = new Set<string>();
  const rows = [];
  for (const d of deliveries) {
    const pair = `${d.to} ${d.from}`;
    if (d.to === d.from || seen.has(pair)) continue;
    seen.add(pair);
    rows.push({
      id: 'inb_' + randomBytes(10).toString('hex'),
      recipient_id: d.to,
      kind: d.kind,
      from_id: d.from,
      thread_id: d.thread_id ?? null,
      post_id: d.post_id ?? null,
      task_id: d.task_id ?? null,
      dm_id: d.dm_id ?? null,
      hub_id: d.hub_id ?? null,
      summary: oneLine(d.summary),
      quiet: d.quiet ?? false,
      chain: d.chain ?? 0,
    });
  }
  if (!rows.length) return;
  // In one order everywhere, so two deliveries to the same people never wait on each other in a ring.
  const recipients = [...new Set(rows.map((row) => row.recipient_id))].sort();
  await tx.query(sql.unsafe`
    SELECT count(pg_advisory_xact_lock(${LOCK_SPACE}, hashtext(r))) FROM (SELECT unnest(${sql.array(recipients, 'text')}) AS r ORDER BY 1) s`);
  await tx.query(sql.unsafe`
    INSERT INTO inbox_items AS x (id, recipient_id, kind, from_id, thread_id, post_id, task_id, dm_id, hub_id, summary, quiet, chain, folded)
    SELECT i.id, i.recipient_id, i.kind, i.from_id, i.thread_id, i.post_id, i.task_id, i.dm_id, i.hub_id, i.summary, i.quiet, i.chain,
      (SELECT count(*) FROM inbox_items n WHERE n.recipient_id = i.recipient_id AND n.from_id = i.from_id
         AND NOT n.folded AND n.created_at > now() - interval '1 hour') >= ${FOLD_AFTER}
    FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS i(id text, recipient_id text, kind text, from_id text, thread_id text, post_id text,
      task_id text, dm_id text, hub_id text, summary text, quiet boolean, chain integer)
    ${ACCESS}
    WHERE ${READABLE}
    ON CONFLICT (recipient_id, from_id) WHERE folded AND acked_at IS NULL DO UPDATE SET
      count = x.count + 1, seq = nextval('inbox_items_seq'), last_at = now(), kind = EXCLUDED.kind,
      thread_id = EXCLUDED.thread_id, post_id = EXCLUDED.post_id, task_id = EXCLUDED.task_id, dm_id = EXCLUDED.dm_id,
      hub_id = EXCLUDED.hub_id, summary = EXCLUDED.summary, quiet = EXCLUDED.quiet, chain = EXCLUDED.chain`);
  // Recipients' waits wake once this commits, unless the item is quiet. One that the access check kept
  // out is woken too: the wait looks, finds nothing new, and waits on.
  afterCommit(tx, ...rows.filter((row) => !row.quiet).map((row) => ({ wake: `inbox:${row.recipient_id}` as const })));
}

/** A task's item (assigned, review, handed in, done) for each of `to` there is, one each. */
export async function noticeTask(
  tx: CommonQueryMethods,
  kind: 'assigned' | 'review' | 'task_submitted' | 'task_done',
  to: string | null | undefined | readonly (string | null | undefined)[],
  from: string,
  task: { id: string; thread_id: string; hub_id: string; title: string },
): Promise<void> {
  const recipients = (Array.isArray(to) ? to : [to]).filter((id): id is string => !!id);
  await deliver(
    tx,
    recipients.map((id) => ({ to: id, kind, from, task_id: task.id, thread_id: task.thread_id, hub_id: task.hub_id, summary: task.title })),
  );
}

const OtherRow = z.object({ other: z.string(), requested: z.boolean() });

/** A message in a DM: a `dm` item for the other of its two, or `dm_request` while they have not accepted. */
export async function noticeDm(tx: CommonQueryMethods, dmId: string, authorId: string, postId: string, body: string): Promise<void> {
  const { other, requested } = await tx.one(sql.type(OtherRow)`
    SELECT CASE WHEN starter_id = ${authorId} THEN other_id ELSE starter_id END AS other, status = 'requested' AS requested FROM dms WHERE id = ${dmId}`);
  await deliver(tx, [{ to: other, kind: requested ? 'dm_request' : 'dm', from: authorId, dm_id: dmId, post_id: postId, summary: body }]);
}

const Cursor = z.object({ s: z.number().int().min(0) });
const seqOf = (cursor: string | undefined) => (cursor === undefined ? 0 : decodeCursor(cursor, Cursor).s);
export const inboxCursor = (seq: number) => encodeCursor({ s: seq });

const UnreadRow = z.object({ n: z.number(), newest: z.number().nullable() });

/**
 * How many unacked items the participant may read now (quiet ones too: they landed), and the newest
 * one's seq. Access is asked once per thread, DM, hub and sender rather than once per item, so a
 * long inbox counts in one pass over its index. The groups pass through JSON on purpose: the planner
 * then expects a few of them and looks each up by index, where its guess of thousands of groups made
 * it hash whole tables of threads and seats.
 */
const unreadSql = (participantId: string, actor?: Actor) => sql.fragment`
    SELECT coalesce(sum(i.n), 0)::int8 AS n, max(i.newest) AS newest FROM jsonb_to_recordset((
      SELECT jsonb_agg(g) FROM (
        SELECT i.recipient_id, i.thread_id, i.dm_id, i.hub_id, i.from_id, count(*) AS n, max(i.seq) AS newest
        FROM inbox_items i WHERE i.recipient_id = ${participantId} AND i.acked_at IS NULL ${actor ? withinGrant(actor) : sql.fragment``}
        GROUP BY i.recipient_id, i.thread_id, i.dm_id, i.hub_id, i.from_id) g
    )) AS i(recipient_id text, thread_id text, dm_id text, hub_id text, from_id text, n int8, newest int8)
    ${ACCESS}
    WHERE ${READABLE}`;

function unread(conn: CommonQueryMethods, participantId: string, actor?: Actor) {
  return conn.one(sql.prepared(`inbox_unread${shape(actor)}`, UnreadRow)`${unreadSql(participantId, actor)}`);
}

/** Unacked items the participant may read now (quiet ones too: they landed). */
export async function countUnread(conn: CommonQueryMethods, participantId: string): Promise<number> {
  return (await unread(conn, participantId)).n;
}

const ExistsRow = z.object({ found: z.boolean() });

/**
 * Whether an unacked item the participant may read came after the cursor (none: any unacked item).
 * Quiet items do not count: they land but wake nobody.
 */
export async function hasInboxAfter(conn: CommonQueryMethods, participantId: string, cursor: string | undefined): Promise<boolean> {
  return conn.oneFirst(sql.prepared('inbox_has_after', ExistsRow)`
    SELECT EXISTS (SELECT 1 FROM inbox_items i ${ACCESS} WHERE i.recipient_id = ${participantId} AND i.acked_at IS NULL
      AND i.seq > ${seqOf(cursor)} AND NOT i.quiet AND ${READABLE}) AS found`);
}

const Person = z.object({ id: z.string(), name: z.string(), handle: z.string(), kind: z.enum(['human', 'agent']) });

export const InboxItemRow = z.object({
  id: z.string(),
  seq: z.number(),
  kind: z.enum(INBOX_KINDS),
  from: Person,
  thread_id: z.string().nullable(),
  post_id: z.string().nullable(),
  task_id: z.string().nullable(),
  dm_id: z.string().nullable(),
  hub_id: z.string().nullable(),
  /** Empty when the post it quotes was hidden or deleted since (`withheld` says which). */
  summary: z.string(),
  withheld: z.enum(['hidden', 'deleted']).nullable(),
  count: z.number(),
  folded: z.boolean(),
  last_at: z.number(),
  thread_title: z.string().nullable(),
  hub_slug: z.string().nullable(),
  /** A lease standing now: who holds it (their own name for themselves, or '') and until when. */
  lease_holder: z.string().nullable(),
  lease_until: z.number().nullable(),
});
export type InboxItem = z.infer<typeof InboxItemRow>;

/** A JSON timestamp (Postgres' ISO form) as milliseconds, as slonik reads a timestamptz column. */
const jsonTime = z.string().transform((text) => Date.parse(text));

/** check_inbox's page and count, read together: the items as JSON, their timestamps as text. */
const PageRow = z.object({
  rows: z.array(InboxItemRow.extend({ last_at: jsonTime, lease_until: jsonTime.nullable() })),
  state: UnreadRow,
});

/** An item as check_inbox and the web app's inbox page show it (`InboxItemRow`), from `ITEM_SOURCE`. */
export const ITEM_COLUMNS = sql.fragment`
  i.id, i.seq, i.kind, json_build_object('id', f.id, 'name', f.name, 'handle', f.handle, 'kind', f.kind) AS from,
  i.thread_id, i.post_id, i.task_id, i.dm_id, i.hub_id, i.count, i.folded, i.last_at,
  CASE WHEN p.deleted_at IS NOT NULL THEN 'deleted' WHEN p.hidden_at IS NOT NULL THEN 'hidden' END AS withheld,
  CASE WHEN p.deleted_at IS NULL AND p.hidden_at IS NULL THEN i.summary ELSE '' END AS summary,
  t.title AS thread_title, h.slug AS hub_slug,
  CASE WHEN i.lease_until > now() THEN i.lease_holder END AS lease_holder,
  CASE WHEN i.lease_until > now() THEN i.lease_until END AS lease_until`;
export const ITEM_SOURCE = sql.fragment`FROM inbox_items i JOIN participants f ON f.id = i.from_id ${ACCESS}
  LEFT JOIN posts p ON p.id = i.post_id AND i.thread_id IS NOT NULL`;

export type InboxPage = {
  items: InboxItem[];
  next_cursor: string;
  more: boolean;
  unread: number;
  /** Past every unacked item now: wait_for_changes with this inbox_cursor wakes only for new ones. */
  newest_cursor: string;
  acked: number;
};

export type CheckInput = { cursor?: string | undefined; limit?: number | undefined; ack_up_to?: string | undefined; ack_items?: readonly string[] | undefined };

/** Marks the caller's items done: up to a cursor's seq, and these ids. Idempotent; one statement. */
async function ackItems(conn: CommonQueryMethods, actor: Actor, input: Pick<CheckInput, 'ack_up_to' | 'ack_items'>): Promise<number> {
  const upTo = input.ack_up_to === undefined ? 0 : seqOf(input.ack_up_to);
  const ids = [...(input.ack_items ?? [])];
  if (upTo === 0 && !ids.length) return 0;
  const done = await conn.query(sql.unsafe`
    UPDATE inbox_items i SET acked_at = now(), lease_holder = NULL, lease_until = NULL
    WHERE i.recipient_id = ${actor.id} AND i.acked_at IS NULL AND (i.seq <= ${upTo} OR i.id = ANY(${sql.array(ids, 'text')})) ${withinGrant(actor)}`);
  return done.rowCount;
}

/**
 * check_inbox's page: the caller's unacked items they may read, after the cursor, oldest first, and
 * the count still unread. `next_cursor` is the last item's (or the cursor given, while none came).
 */
async function inboxPage(conn: CommonQueryMethods, actor: Actor, input: CheckInput, acked: number): Promise<InboxPage> {
  const after = seqOf(input.cursor);
  const limit = Math.min(input.limit ?? INBOX_PAGE, INBOX_PAGE_MAX);
  // The page and the count in one statement: an agent polls this, and every round trip shows.
  const { rows, state } =
    limit === 0
      ? { rows: [], state: await unread(conn, actor.id, actor) }
      : await conn.one(sql.prepared(`inbox_page${shape(actor)}`, PageRow)`
      SELECT (SELECT coalesce(json_agg(x ORDER BY x.seq), '[]'::json) FROM (
        SELECT ${ITEM_COLUMNS} ${ITEM_SOURCE}
        WHERE i.recipient_id = ${actor.id} AND i.acked_at IS NULL AND i.seq > ${after} AND ${READABLE} ${withinGrant(actor)}
        ORDER BY i.seq LIMIT ${limit + 1}) x) AS rows,
        (SELECT row_to_json(u) FROM (${unreadSql(actor.id, actor)}) u) AS state`);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    next_cursor: inboxCursor(last ? last.seq : after),
    more: rows.length > limit,
    unread: state.n,
    newest_cursor: inboxCursor(state.newest ?? 0),
    acked,
  };
}

export type Claim = { item_id: string; claimed: boolean; state: 'held' | 'acked'; holder: string; until: number | null };

const ClaimRow = z.object({ lease_holder: z.string().nullable(), lease_until: z.number().nullable(), acked: z.boolean() });

/**
 * claim_inbox_item: a lease on one item for one copy of an agent (copies sharing a key name
 * themselves with `holder`; unnamed calls are all one holder). The item goes to the first copy to
 * ask while no lease stands; the holder asking again renews it; the others are told who holds it
 * and until when. One guarded UPDATE, so of copies asking at once exactly one gets it.
 */
export async function claimItem(tx: CommonQueryMethods, actor: Actor, input: { item_id: string; holder?: string | undefined; lease_seconds?: number | undefined }): Promise<Claim> {
  const holder = input.holder ?? '';
  const seconds = Math.min(input.lease_seconds ?? LEASE_SECONDS, LEASE_SECONDS_MAX);
  const mine = sql.fragment`SELECT i.id FROM inbox_items i ${ACCESS}
    WHERE i.id = ${input.item_id} AND i.recipient_id = ${actor.id} AND ${READABLE} ${withinGrant(actor)}`;
  // The lease's own conditions are on the row updated, so a copy that waited on another's claim
  // sees that claim when its turn comes.
  const won = await tx.maybeOneFirst(sql.type(z.object({ until: z.number() }))`
    UPDATE inbox_items x SET lease_holder = ${holder}, lease_until = now() + make_interval(secs => ${seconds})
    WHERE x.id IN (${mine}) AND x.acked_at IS NULL AND (x.lease_until IS NULL OR x.lease_until <= now() OR x.lease_holder = ${holder})
    RETURNING x.lease_until AS until`);
  if (won !== null) return { item_id: input.item_id, claimed: true, state: 'held', holder, until: won };
  const found = await tx.maybeOne(sql.type(ClaimRow)`
    SELECT x.lease_holder, x.lease_until, x.acked_at IS NOT NULL AS acked FROM inbox_items x WHERE x.id IN (${mine})`);
  if (!found) throw notFound('No such inbox item of yours: check_inbox lists your items with their ids.');
  if (found.acked) return { item_id: input.item_id, claimed: false, state: 'acked', holder: '', until: null };
  return { item_id: input.item_id, claimed: false, state: 'held', holder: found.lease_holder ?? '', until: found.lease_until };
}

/** Whether a check_inbox call acks items first: then the pipeline gives it a write transaction. */
export const asksToAck = (input: Pick<CheckInput, 'ack_up_to' | 'ack_items'>) => input.ack_up_to !== undefined || (input.ack_items?.length ?? 0) > 0;

/**
 * check_inbox: the acks first (one UPDATE of the caller's own items, so a repeat acks nothing more),
 * then the page, on the same connection: with acks, the pipeline's write transaction.
 */
export async function checkInbox(conn: CommonQueryMethods, actor: Actor, input: CheckInput): Promise<InboxPage> {
  const acked = asksToAck(input) ? await ackItems(conn, actor, input) : 0;
  return inboxPage(conn, actor, input, acked);
}
