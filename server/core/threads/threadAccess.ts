import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { HubRow, Role, ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import { grantsThread } from '../kernel/grants.ts';
import type { Core } from '../kernel/context.ts';
import { notFound } from '../../../schema/errors.ts';
import { readsPublic } from '../places/hubAccess.ts';
import type { Seat } from '../kernel/rights.ts';
import type { ThreadTarget } from '../kernel/policy.ts';

/** The thread's row, its hub's columns beside it (named `hub_…`, the hub's id being the thread's `hub_id`), and the reader's seat. */
const ThreadTargetRow = ThreadRow.extend({
  hub_slug: HubRow.shape.slug,
  hub_name: HubRow.shape.name,
  hub_readme: HubRow.shape.readme,
  hub_audience: HubRow.shape.audience,
  hub_mode: HubRow.shape.mode,
  hub_owner_id: HubRow.shape.owner_id,
  hub_accepts_guests: HubRow.shape.accepts_guests,
  hub_created_at: HubRow.shape.created_at,
  hub_updated_at: HubRow.shape.updated_at,
  role: Role.nullable(),
});
const ReaderThreadTargetRow = ThreadTargetRow.extend({ reader: z.string() });

/** The thread's target row for each of these readers (`''` for one signed out), by reader. Prepared: a read of a thread not kept is this statement. */
async function readableThreadRows(conn: CommonQueryMethods, threadId: string, readers: readonly string[]): Promise<Map<string, z.infer<typeof ThreadTargetRow>>> {
  const rows = await conn.any(sql.prepared('readable_thread_readers', ReaderThreadTargetRow)`
    SELECT r.id AS reader, t.id, t.hub_id, t.title, t.status, t.answer_post_id, t.started_by, t.accepts_guests, t.version, t.post_count,
           t.created_at, t.updated_at, t.about_pad_id, t.about_block, t.flag, t.locked_by, h.slug AS hub_slug, h.name AS hub_name, h.readme AS hub_readme,
           h.audience AS hub_audience, h.mode AS hub_mode, h.owner_id AS hub_owner_id, h.accepts_guests AS hub_accepts_guests,
           h.created_at AS hub_created_at, h.updated_at AS hub_updated_at, coalesce(m.role, i.role) AS role
    FROM threads t JOIN hubs h ON h.id = t.hub_id
    CROSS JOIN unnest(${sql.array(readers, 'text')}::text[]) AS r(id)
    LEFT JOIN hub_members m ON m.hub_id = t.hub_id AND m.participant_id = r.id
    LEFT JOIN item_members i ON i.item_id = t.id AND i.participant_id = r.id
    WHERE t.id = ${threadId} AND h.deleted_at IS NULL`);
  return new Map(rows.map(({ reader, ...row }) => [reader, row] as const));
}

/**
 * The thread, its hub and the reader's seat, in one round trip; private and missing answer the same
 * `not_found`. Every read of a thread starts here, and a 304 ends here: the statement is prepared,
 * and the hub comes as plain columns, which Postgres sends for less than a JSON object of them.
 * Outside a transaction the row may be one kept since the last change (`core.reads`), read afresh
 * with those of the thread's other readers that will soon be due.
 */
export async function readableThread(core: Core, conn: CommonQueryMethods, threadId: string, reader: Actor | null): Promise<ThreadTarget> {
  if (!grantsThread(reader, threadId)) throw notFound('No such thread, or it is private.');
  // A reader signed out is read as one with no seat: no participant's id is empty.
  const readerId = reader?.id ?? '';
  const loadMany = (readers: readonly string[]) => readableThreadRows(conn, threadId, readers);
  const row = await core.reads.readOf(`readable_thread ${threadId}`, readerId, loadMany, conn !== core.db.pool);
  if (!row) throw notFound('No such thread, or it is private.');
  const { hub_slug, hub_name, hub_readme, hub_audience, hub_mode, hub_owner_id, hub_accepts_guests, hub_created_at, hub_updated_at, role, ...thread } = row;
  const hub: HubRow = {
    id: thread.hub_id,
    slug: hub_slug,
    name: hub_name,
    readme: hub_readme,
    audience: hub_audience,
    mode: hub_mode,
    owner_id: hub_owner_id,
    accepts_guests: hub_accepts_guests,
    created_at: hub_created_at,
    updated_at: hub_updated_at,
  };
  if (role === null && !readsPublic(core, hub)) throw notFound('No such thread, or it is private.');
  return { thread, hub, seat: role as Seat };
}
