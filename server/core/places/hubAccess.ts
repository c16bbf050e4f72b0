import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { HubRow, Role } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import { grantsHubs } from '../kernel/grants.ts';
import type { Core } from '../kernel/context.ts';
import { notFound } from '../../../schema/errors.ts';
import type { Seat } from '../kernel/rights.ts';

const RoleRow = z.object({ role: Role });

const hubColumns = sql.fragment`id, slug, name, readme, audience, mode, owner_id, accepts_guests, created_at, updated_at`;

/** A hub by id (`hub_…`) or slug. */
export async function findHub(conn: CommonQueryMethods, ref: string): Promise<HubRow | null> {
  const key = ref.trim().replace(/^\//, '').toLowerCase();
  return conn.maybeOne(sql.type(HubRow)`
    SELECT ${hubColumns} FROM hubs WHERE ${key.startsWith('hub_') ? sql.fragment`id = ${key}` : sql.fragment`slug = ${key}`} AND deleted_at IS NULL`);
}

export async function seatIn(conn: CommonQueryMethods, hubId: string, participantId: string | undefined): Promise<Seat> {
  if (!participantId) return null;
  return conn.maybeOneFirst(sql.type(RoleRow)`
    SELECT role FROM hub_members WHERE hub_id = ${hubId} AND participant_id = ${participantId}`);
}

/** Whether this hub reads as public on this server (SVC_PUBLIC_THREADS gates every public read). */
export const readsPublic = (core: Core, hub: Pick<HubRow, 'audience'>) => core.config.publicThreads && hub.audience === 'public';

/**
 * The hub as its readers see it: with public reading off on this server, nothing reads as public, so
 * a hub published earlier shows as private (what is stored is left as it is, for when it is back on).
 */
export const hubAsSeen = <H extends Pick<HubRow, 'audience'>>(core: Core, hub: H): H =>
  hub.audience === 'public' && !readsPublic(core, hub) ? { ...hub, audience: 'private' } : hub;

const HubSeatOfRow = HubRow.extend({ role: Role.nullable() });
const ReaderHubSeatOfRow = HubSeatOfRow.extend({ reader: z.string() });

const SeatedHubRow = HubRow.pick({ id: true, slug: true, name: true, mode: true }).extend({ role: Role });
export type SeatedHub = z.infer<typeof SeatedHubRow>;

/**
 * Every hub the participant has a seat in, with their role, the most recently changed first. Outside
 * a transaction the list may be one kept since the last change to hubs or seats (`core.reads`), so
 * show_dotpad's hub list and review queue read nothing while nobody joins, leaves or edits a hub.
 */
export async function seatedHubs(core: Core, conn: CommonQueryMethods, participantId: string): Promise<readonly SeatedHub[]> {
  const load = () =>
    conn.any(sql.prepared('seated_hubs', SeatedHubRow)`
    SELECT h.id, h.slug, h.name, h.mode, m.role FROM hub_members m JOIN hubs h ON h.id = m.hub_id
    WHERE m.participant_id = ${participantId} AND h.deleted_at IS NULL ORDER BY h.updated_at DESC, h.id`);
  return conn === core.db.pool ? core.reads.read(`seated_hubs ${participantId}`, load) : load();
}

/** The hub with the seat of each of these readers (`''` for one signed out), by reader. Prepared: a read of a hub not kept is this statement. */
async function readableHubRows(conn: CommonQueryMethods, key: string, readers: readonly string[]): Promise<Map<string, z.infer<typeof HubSeatOfRow>>> {
  const byId = key.startsWith('hub_');
  const rows = await conn.any(sql.prepared(byId ? 'readable_hub_readers_by_id' : 'readable_hub_readers_by_slug', ReaderHubSeatOfRow)`
    SELECT r.id AS reader, h.id, h.slug, h.name, h.readme, h.audience, h.mode, h.owner_id, h.accepts_guests, h.created_at, h.updated_at, m.role
    FROM hubs h CROSS JOIN unnest(${sql.array(readers, 'text')}::text[]) AS r(id)
    LEFT JOIN hub_members m ON m.hub_id = h.id AND m.participant_id = r.id
    WHERE ${byId ? sql.fragment`h.id = ${key}` : sql.fragment`h.slug = ${key}`} AND h.deleted_at IS NULL`);
  return new Map(rows.map(({ reader, ...row }) => [reader, row] as const));
}

/**
 * The hub and the reader's seat, in one round trip, or `not_found` when the reader may not see it: a
 * private hub and a missing one answer the same, so nobody learns which private hubs exist. Outside a
 * transaction the row may be one kept since the last change to hubs or seats (`core.reads`), as
 * `readableThread`'s is: a seat taken away anywhere drops it before the next read. A row read afresh
 * is read with those of the hub's other readers that will soon be due.
 */
export async function readableHub(core: Core, conn: CommonQueryMethods, ref: string, reader: Actor | null) {
  if (!grantsHubs(reader)) throw notFound('No such hub, or it is private.');
  const key = ref.trim().replace(/^\//, '').toLowerCase();
  // A reader signed out is read as one with no seat: no participant's id is empty.
  const readerId = reader?.id ?? '';
  const loadMany = (readers: readonly string[]) => readableHubRows(conn, key, readers);
  const row = await core.reads.readOf(`readable_hub ${key}`, readerId, loadMany, conn !== core.db.pool);
  if (!row || (row.role === null && !readsPublic(core, row))) throw notFound('No such hub, or it is private.');
  const { role, ...hub } = row;
  return { hub, seat: role as Seat };
}
