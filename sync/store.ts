import * as Y from 'yjs';
import { foldLog } from './fold.ts';
import { applyPadLog } from './padLog.ts';
import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { Db } from '../server/db/database.ts';

const NBytesRow = z.object({ n: z.number(), bytes: z.number() });
const GenerationRow = z.object({ generation: z.number() });

/**
 * Pad persistence: an append-only log of Yjs updates with the state vector beside each, folded into
 * a snapshot off the request path. Nothing is ever overwritten whole, so several instances writing
 * one pad never lose each other's updates.
 */
const bytes = z.instanceof(Uint8Array);

/** Compact when the log outside the snapshot holds this many updates or bytes. */
export const COMPACT_AFTER_UPDATES = 500;
export const COMPACT_AFTER_BYTES = 1 << 20;

/** Prepared once per connection: live typing appends many times a second on a busy instance. */
const appendStatement = sql.prepared('append_update', z.object({}));
const appendManyStatement = sql.prepared('append_updates', z.object({}));

/** Appends one update with the state vector it brings the document to. */
export async function appendUpdate(conn: CommonQueryMethods, padId: string, update: Uint8Array) {
  const stateVector = Y.encodeStateVectorFromUpdate(update);
  await conn.query(appendStatement`
    INSERT INTO pad_updates (pad_id, update, state_vector)
    VALUES (${padId}, ${sql.binary(Buffer.from(update))}, ${sql.binary(Buffer.from(stateVector))})`);
}

/**
 * Appends an update to each of several pads' logs, each with its state vector, in one statement:
 * all of them or none (a pad that does not exist fails the whole statement).
 */
export async function appendUpdates(conn: CommonQueryMethods, appends: readonly { padId: string; update: Uint8Array }[]) {
  if (appends.length === 1) return appendUpdate(conn, appends[0]!.padId, appends[0]!.update);
  const padIds = appends.map((append) => append.padId);
  const updates = appends.map((append) => Buffer.from(append.update));
  const vectors = appends.map((append) => Buffer.from(Y.encodeStateVectorFromUpdate(append.update)));
  await conn.query(appendManyStatement`
    INSERT INTO pad_updates (pad_id, update, state_vector)
    SELECT * FROM unnest(${sql.array(padIds, 'text')}, ${sql.array(updates, 'bytea')}, ${sql.array(vectors, 'bytea')})`);
}

/** A pad's log as one row: its snapshot (and the snapshot's generation), and every update after it with their ids. */
export const PadLogRow = z.object({
  state: bytes.nullable(),
  generation: z.number().nullable(),
  updates: z.array(bytes),
  ids: z.array(z.number()),
});

export type PadLog = z.infer<typeof PadLogRow>;

/** The columns of `padLogJoin`, as `PadLogRow` reads them. */
export const padLogColumns = sql.fragment`s.state, s.generation, t.updates, t.ids`;

/**
 * The snapshot (and its generation) and every update still in the log, with their ids, joined as one
 * row however long the log to a query whose `p.id` is the pad, where `when` holds: what a load reads,
 * alone (`readPadLog`) or in the statement that reads a live connection's access (`readablePadWithLog`). The log holds
 * only updates not in the snapshot: compaction deletes exactly the rows it folded, so a row committed
 * after a lower id was read (ids are taken when a row is written, not when it commits) stays, and is
 * loaded.
 */
export const padLogJoin = (when: FragmentSqlToken = sql.fragment`true`, rowsWhen: FragmentSqlToken = when) => sql.fragment`
    LEFT JOIN pad_snapshots s ON s.pad_id = p.id AND ${when}
    CROSS JOIN LATERAL (
      SELECT coalesce(array_agg(u.update ORDER BY u.id), '{}') AS updates,
             coalesce(array_agg(u.id ORDER BY u.id), '{}') AS ids
      FROM pad_updates u WHERE u.pad_id = p.id AND ${rowsWhen}) AS t`;

const logJoin = padLogJoin();

/** The pad's log (`padLogJoin`), in one query. */
export async function readPadLog(conn: CommonQueryMethods, padId: string): Promise<PadLog> {
  return conn.one(sql.type(PadLogRow)`SELECT ${padLogColumns} FROM (SELECT ${padId}::text AS id) AS p ${logJoin}`);
}

/** What of its pad's stored log each live document has taken in: the snapshot (by generation), and the rows by id. */
const taken = new WeakMap<Y.Doc, { generation: number | null; ids: Set<number> }>();

function tookIn(doc: Y.Doc, log: PadLog) {
  const known = taken.get(doc);
  if (known && known.generation === log.generation) for (const id of log.ids) known.ids.add(id);
  else taken.set(doc, { generation: log.generation, ids: new Set(log.ids) });
}

/**
 * Brings a live document up to what the database holds, reading only what it has not taken in: the
 * rows of the log it has not applied, and the snapshot only if a compaction made a new one (which
 * also dropped the rows it folded). Rows the document got otherwise (its own, or through Redis) are
 * read once more and change nothing. Returns how many rows it read, and whether it read the snapshot.
 */
export async function catchUpLog(conn: CommonQueryMethods, padId: string, doc: Y.Doc): Promise<{ rows: number; snapshot: boolean }> {
  const known = taken.get(doc);
  // A snapshot other than the one taken in comes with every row; else only the rows not taken in.
  const newSnapshot = known && sql.fragment`coalesce(s.generation, -1) <> ${known.generation ?? -1}`;
  const log = newSnapshot
    ? await conn.one(sql.type(PadLogRow)`
        SELECT CASE WHEN ${newSnapshot} THEN s.state END AS state, s.generation, t.updates, t.ids
        FROM (SELECT ${padId}::text AS id) AS p
        ${padLogJoin(sql.fragment`true`, sql.fragment`(${newSnapshot} OR u.id <> ALL(${sql.array([...known.ids], 'int8')}))`)}`)
    : await readPadLog(conn, padId);
  applyPadLog(doc, log);
  tookIn(doc, log);
  return { rows: log.ids.length, snapshot: log.state !== null };
}

/** Whether a log this long outside its snapshot is due to be folded. */
export const compactionDue = (tail: { n: number; bytes: number }) => tail.n > COMPACT_AFTER_UPDATES || tail.bytes > COMPACT_AFTER_BYTES;

/**
 * Loads a pad into `doc`: what a cold open does, from its log as `read` already (with the access of
 * the connection that opens it) or read now. Returns the tail's size, and the log (for `compact`).
 */
export async function loadInto(db: Db, padId: string, doc: Y.Doc, read?: PadLog): Promise<{ tail: number; tailBytes: number; log: PadLog }> {
  const log = read ?? (await readPadLog(db.pool, padId));
  applyPadLog(doc, log);
  tookIn(doc, log);
  return { tail: log.updates.length, tailBytes: log.updates.reduce((sum, update) => sum + update.length, 0), log };
}

/**
 * Folds the snapshot and the log into a new snapshot, from what the database holds (not from any
 * instance's memory, which may lack another instance's updates), and drops the rows it folded. The
 * fold runs outside any transaction, so no connection waits on it (PGlite has only one). The short
 * transaction after it replaces the snapshot only if it is still the one the fold started from, and
 * then deletes exactly the rows folded: a compaction that lost a race to another writes nothing, and
 * the next one folds again. Given the log as `readPadLog` read it (a cold open has just read it
 * whole), it folds that one: the same guard makes it exactly as safe as one read now.
 */
export async function compact(db: Db, padId: string, read?: PadLog): Promise<void> {
  const log = read ?? (await readPadLog(db.pool, padId));
  const upto = log.ids.at(-1);
  if (upto === undefined) return;
  const folded = await foldLog(log.state, log.updates);
  const state = Buffer.from(folded.state);
  const vector = Buffer.from(folded.vector);
  await db.write(async (tx) => {
    const written = await tx.maybeOneFirst(sql.type(GenerationRow)`
      INSERT INTO pad_snapshots (pad_id, state, state_vector, upto, updated_at, generation)
      VALUES (${padId}, ${sql.binary(state)}, ${sql.binary(vector)}, ${upto}, now(), 1)
      ON CONFLICT (pad_id) DO UPDATE SET state = excluded.state, state_vector = excluded.state_vector, upto = excluded.upto,
        updated_at = now(), generation = pad_snapshots.generation + 1
      WHERE pad_snapshots.generation = ${log.generation ?? 0}
      RETURNING generation`);
    if (written === null) return;
    await tx.query(sql.unsafe`DELETE FROM pad_updates WHERE pad_id = ${padId} AND id = ANY(${sql.array(log.ids, 'int8')})`);
  });
}

/** How much log is not in the snapshot. */
export async function tailSize(conn: CommonQueryMethods, padId: string) {
  return conn.one(sql.type(NBytesRow)`
    SELECT count(*) AS n, coalesce(sum(length(update)), 0)::int8 AS bytes
    FROM pad_updates u
    WHERE pad_id = ${padId}`);
}
