import * as Y from 'yjs';
import { foldLog } from './fold.ts';
import { applyPadLog } from './padLog.ts';
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

/** Compact when the log past the snapshot holds this many updates or bytes. */
export const COMPACT_AFTER_UPDATES = 500;
export const COMPACT_AFTER_BYTES = 1 << 20;

/** Prepared once per connection: live typing appends many times a second on a busy instance. */
const appendStatement = sql.prepared('append_update', z.object({}));

/** Appends one update with the state vector it brings the document to. */
export async function appendUpdate(conn: CommonQueryMethods, padId: string, update: Uint8Array) {
  const stateVector = Y.encodeStateVectorFromUpdate(update);
  await conn.query(appendStatement`
    INSERT INTO pad_updates (pad_id, update, state_vector)
    VALUES (${padId}, ${sql.binary(Buffer.from(update))}, ${sql.binary(Buffer.from(stateVector))})`);
}

const LogRow = z.object({ state: bytes.nullable(), updates: z.array(bytes), last: z.number().nullable() });

/**
 * The snapshot and every update after it, with the id of the last one (null when the log past the
 * snapshot is empty), in one query and one row however long the log.
 */
export async function readPadLog(conn: CommonQueryMethods, padId: string): Promise<z.infer<typeof LogRow>> {
  return conn.one(sql.type(LogRow)`
    SELECT s.state, t.updates, t.last
    FROM (SELECT 1) AS one
    LEFT JOIN pad_snapshots s ON s.pad_id = ${padId}
    CROSS JOIN LATERAL (
      SELECT coalesce(array_agg(u.update ORDER BY u.id), '{}') AS updates, max(u.id) AS last
      FROM pad_updates u WHERE u.pad_id = ${padId} AND u.id > coalesce(s.upto, 0)) AS t`);
}

/** Loads a pad into `doc`: what a cold open does. Returns the tail's size. */
export async function loadInto(db: Db, padId: string, doc: Y.Doc): Promise<{ tail: number; tailBytes: number }> {
  const log = await readPadLog(db.pool, padId);
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
    const log = await readPadLog(tx, padId);
    if (log.last === null) return;
    const folded = await foldLog(log.state, log.updates);
    const state = Buffer.from(folded.state);
    const vector = Buffer.from(folded.vector);
    await tx.query(sql.unsafe`
      INSERT INTO pad_snapshots (pad_id, state, state_vector, upto, updated_at)
      VALUES (${padId}, ${sql.binary(state)}, ${sql.binary(vector)}, ${log.last}, now())
      ON CONFLICT (pad_id) DO UPDATE SET state = excluded.state, state_vector = excluded.state_vector, upto = excluded.upto, updated_at = now()
      WHERE pad_snapshots.upto < excluded.upto`);
    await tx.query(sql.unsafe`DELETE FROM pad_updates WHERE pad_id = ${padId} AND id <= ${log.last}`);
  });
}

/** How much log lies past the snapshot. */
export async function tailSize(conn: CommonQueryMethods, padId: string) {
  return conn.one(sql.type(NBytesRow)`
    SELECT count(*) AS n, coalesce(sum(length(update)), 0)::int8 AS bytes
    FROM pad_updates u
    WHERE pad_id = ${padId} AND id > coalesce((SELECT upto FROM pad_snapshots s WHERE s.pad_id = ${padId}), 0)`);
}
