import * as Y from 'yjs';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Db } from '../server/db/database.ts';

const NBytesRow = z.object({ n: z.number(), bytes: z.number() });

/**
 * Pad persistence: an append-only log of Yjs updates with the state vector beside each, folded into
 * a snapshot off the request path. Nothing is ever overwritten whole, so several instances writing
 * one pad never lose each other's updates.
 */
const bytes = z.instanceof(Uint8Array);
const SnapshotRow = z.object({ state: bytes, upto: z.number() });
const UpdateRow = z.object({ id: z.number(), update: bytes });

/** Compact when the log past the snapshot holds this many updates or bytes. */
export const COMPACT_AFTER_UPDATES = 500;
export const COMPACT_AFTER_BYTES = 1 << 20;

/** Appends one update with the state vector it brings the document to. */
export async function appendUpdate(conn: CommonQueryMethods, padId: string, update: Uint8Array) {
  const stateVector = Y.encodeStateVectorFromUpdate(update);
  await conn.query(sql.unsafe`
    INSERT INTO pad_updates (pad_id, update, state_vector)
    VALUES (${padId}, ${sql.binary(Buffer.from(update))}, ${sql.binary(Buffer.from(stateVector))})`);
}

/** Applies the snapshot and every update after it to `doc`. Returns how long the tail was. */
const LoadRow = z.object({ state: bytes.nullable(), updates: z.array(bytes) });

/** The snapshot and every update after it, in one query. */
export async function readPadLog(db: Db, padId: string): Promise<{ state: Uint8Array | null; updates: readonly Uint8Array[] }> {
  return db.pool.one(sql.type(LoadRow)`
    SELECT s.state,
           (SELECT coalesce(array_agg(u.update ORDER BY u.id), '{}') FROM pad_updates u
            WHERE u.pad_id = ${padId} AND u.id > coalesce(s.upto, 0)) AS updates
    FROM (SELECT 1) AS one LEFT JOIN pad_snapshots s ON s.pad_id = ${padId}`);
}

/** Applies a pad's log to `doc` in one transaction that no store hook sees. */
export function applyPadLog(doc: Y.Doc, log: { state: Uint8Array | null; updates: readonly Uint8Array[] }) {
  // Applying the log to a Y.Doc is several times faster here than Y.mergeUpdates.
  Y.transact(doc, () => {
    if (log.state) Y.applyUpdate(doc, log.state);
    for (const update of log.updates) Y.applyUpdate(doc, update);
  }, { source: 'local', skipStoreHooks: true });
}

/** Loads a pad into `doc`: what a cold open does. Returns the tail's size. */
export async function loadInto(db: Db, padId: string, doc: Y.Doc): Promise<{ tail: number; tailBytes: number }> {
  const log = await readPadLog(db, padId);
  applyPadLog(doc, log);
  return { tail: log.updates.length, tailBytes: log.updates.reduce((sum, update) => sum + update.length, 0) };
}

/**
 * Folds the snapshot and the log up to now into a new snapshot, from what the database holds (not
 * from any instance's memory, which may lack another instance's updates), then drops the folded rows.
 */
export async function compact(db: Db, padId: string): Promise<void> {
  await db.write(async (tx) => {
    // One compaction of a pad at a time across instances (a row lock cannot cover the first one,
    // when there is no snapshot row yet).
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'pad-compaction:' + padId}))`);
    const snapshot = await tx.maybeOne(sql.type(SnapshotRow)`
      SELECT state, upto FROM pad_snapshots WHERE pad_id = ${padId}`);
    const updates = await tx.any(sql.type(UpdateRow)`
      SELECT id, update FROM pad_updates WHERE pad_id = ${padId} AND id > ${snapshot?.upto ?? 0} ORDER BY id`);
    const last = updates.at(-1);
    if (!last) return;
    const doc = new Y.Doc();
    if (snapshot) Y.applyUpdate(doc, snapshot.state);
    for (const row of updates) Y.applyUpdate(doc, row.update);
    const state = Buffer.from(Y.encodeStateAsUpdate(doc));
    const vector = Buffer.from(Y.encodeStateVector(doc));
    doc.destroy();
    await tx.query(sql.unsafe`
      INSERT INTO pad_snapshots (pad_id, state, state_vector, upto, updated_at)
      VALUES (${padId}, ${sql.binary(state)}, ${sql.binary(vector)}, ${last.id}, now())
      ON CONFLICT (pad_id) DO UPDATE SET state = excluded.state, state_vector = excluded.state_vector, upto = excluded.upto, updated_at = now()
      WHERE pad_snapshots.upto < excluded.upto`);
    await tx.query(sql.unsafe`DELETE FROM pad_updates WHERE pad_id = ${padId} AND id <= ${last.id}`);
  });
}

/** How much log lies past the snapshot. */
export async function tailSize(conn: CommonQueryMethods, padId: string) {
  return conn.one(sql.type(NBytesRow)`
    SELECT count(*) AS n, coalesce(sum(length(update)), 0)::int8 AS bytes
    FROM pad_updates u
    WHERE pad_id = ${padId} AND id > coalesce((SELECT upto FROM pad_snapshots s WHERE s.pad_id = ${padId}), 0)`);
}
