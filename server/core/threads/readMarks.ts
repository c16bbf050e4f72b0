import { sql } from 'slonik';
import type { ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';

/** Past this many remembered marks, all are forgotten at once (writing one again costs one statement). */
const MAX_REMEMBERED = 50_000;
const remembered = new Map<string, string>();

/**
 * Moves the reader's last-read mark of a thread (what catch_up's "since you last read" counts from)
 * to the newest post they were shown, never back, and to now. One upsert, outside any transaction:
 * it is a read's bookkeeping, so it does not tell kept reads to drop (`Db.write` would). A mark this
 * instance wrote at the same thread version and seq is not written again: nothing catch_up counts
 * can have changed without the version moving.
 */
export async function markRead(core: Core, reader: Actor, thread: Pick<ThreadRow, 'id' | 'version'>, seq: number): Promise<void> {
  const key = `${reader.id} ${thread.id}`;
  const mark = `${thread.version}:${seq}`;
  if (remembered.get(key) === mark) return;
  await core.db.pool.query(sql.unsafe`
    INSERT INTO thread_reads (participant_id, thread_id, seq, version, read_at) VALUES (${reader.id}, ${thread.id}, ${seq}, ${thread.version}, now())
    ON CONFLICT (participant_id, thread_id) DO UPDATE
    SET seq = greatest(thread_reads.seq, EXCLUDED.seq), version = greatest(thread_reads.version, EXCLUDED.version), read_at = now()`);
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(key, mark);
}
