import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { notFound } from '../../../schema/errors.ts';
import { ACCESS, inboxCursor, InboxItemRow, ITEM_COLUMNS, ITEM_SOURCE, READABLE } from './inbox.ts';
import type { InboxMark } from '../../../schema/tools/inbox.ts';

/**
 * The web app's inbox page (docs/choices.md, "The inbox page"): a person's items stay listed, read or unread, until
 * they archive them. Its state is `read_at` and `archived_at` alone; check_inbox's `acked_at`, its
 * cursor and its leases are neither read nor written here, so an agent's inbox works as before, and
 * acking an item (by the person's assistant) takes nothing off this page.
 */

export const KEPT_PAGE = 50;

const KeptRow = InboxItemRow.extend({
  read: z.boolean(),
  archived: z.boolean(),
  /** A request to join: whether it still waits on an owner or helper (null for other kinds). */
  waiting: z.boolean().nullable(),
});
export type KeptItem = z.infer<typeof KeptRow>;

export type KeptPage = {
  items: KeptItem[];
  /** Items on the page before this one: pass as `before` for the next page (older items). */
  next_before: number | null;
  /** Unread, not archived, readable: the header's count. */
  unread: number;
  /** Past every item now: wait_for_changes with this inbox_cursor wakes for new ones. */
  newest_cursor: string;
};

const CountRow = z.object({ unread: z.number(), newest: z.number().nullable() });

/** The page's unread count (not read, not archived, readable now) and the newest item's seq. */
const keptCounts = (conn: CommonQueryMethods, participantId: string) =>
  conn.one(sql.type(CountRow)`
    SELECT count(*) FILTER (WHERE i.read_at IS NULL AND i.archived_at IS NULL AND ${READABLE}) AS unread, max(i.seq) AS newest
    FROM inbox_items i ${ACCESS} WHERE i.recipient_id = ${participantId}`);

/** Newest first: the kept items (`archived` false) or the archived ones, a page before a seq. */
export async function keptInbox(
  conn: CommonQueryMethods,
  actor: Actor,
  input: { archived?: boolean | undefined; before?: number | undefined; limit?: number | undefined },
): Promise<KeptPage> {
  const limit = Math.min(input.limit ?? KEPT_PAGE, KEPT_PAGE);
  const archived = input.archived ?? false;
  const [rows, counts] = await Promise.all([
    limit === 0
      ? []
      : conn.any(sql.type(KeptRow)`
          SELECT ${ITEM_COLUMNS}, i.read_at IS NOT NULL AS read, i.archived_at IS NOT NULL AS archived,
            CASE WHEN i.kind = 'join_request' THEN EXISTS (
              SELECT 1 FROM join_requests r WHERE r.hub_id = i.hub_id AND r.participant_id = i.from_id) END AS waiting
          ${ITEM_SOURCE}
          WHERE i.recipient_id = ${actor.id} AND (i.archived_at IS NOT NULL) = ${archived}
            ${input.before !== undefined ? sql.fragment`AND i.seq < ${input.before}` : sql.fragment``} AND ${READABLE}
          ORDER BY i.seq DESC LIMIT ${limit + 1}`),
    keptCounts(conn, actor.id),
  ]);
  const items = rows.slice(0, limit);
  return {
    items,
    next_before: rows.length > limit ? items.at(-1)!.seq : null,
    unread: counts.unread,
    newest_cursor: inboxCursor(counts.newest ?? 0),
  };
}

/**
 * Marks the person's own items: read or unread, archived or kept again, by id; or all unread ones
 * read (`read_all`), or all read ones archived (`archive_read`). One statement; a repeat changes
 * nothing more. Naming an item that is not theirs is refused and changes nothing.
 */
export async function markInbox(tx: CommonQueryMethods, actor: Actor, input: { action: InboxMark; item_ids?: readonly string[] | undefined }) {
  const ids = [...(input.item_ids ?? [])];
  const bulk = input.action === 'read_all' || input.action === 'archive_read';
  if (!bulk) {
    const mine = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM inbox_items WHERE recipient_id = ${actor.id} AND id = ANY(${sql.array(ids, 'text')})`);
    if (mine.length !== new Set(ids).size) throw notFound('No such inbox item of yours: the inbox page lists your items with their ids.');
  }
  const set = {
    read: sql.fragment`read_at = coalesce(read_at, now())`,
    unread: sql.fragment`read_at = NULL`,
    archive: sql.fragment`archived_at = coalesce(archived_at, now()), read_at = coalesce(read_at, now())`,
    unarchive: sql.fragment`archived_at = NULL`,
    read_all: sql.fragment`read_at = now()`,
    archive_read: sql.fragment`archived_at = now()`,
  }[input.action];
  const which = {
    read_all: sql.fragment`read_at IS NULL AND archived_at IS NULL`,
    archive_read: sql.fragment`read_at IS NOT NULL AND archived_at IS NULL`,
  };
  const done = await tx.query(sql.unsafe`
    UPDATE inbox_items SET ${set}
    WHERE recipient_id = ${actor.id} AND ${bulk ? which[input.action as keyof typeof which] : sql.fragment`id = ANY(${sql.array(ids, 'text')})`}`);
  return { action: input.action, changed: done.rowCount, unread: (await keptCounts(tx, actor.id)).unread };
}
