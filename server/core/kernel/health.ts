import { pendingMigrations } from '../../db/migrations.ts';
import type { Core } from './context.ts';

const STALL_MS = 5_000;
/** A database that has not answered the schema check by then reads as down, not as a hung check. */
const ANSWER_MS = 5_000;

export type Health = { ok: true } | { ok: false; reason: 'writes_stalled'; waitMs: number } | { ok: false; reason: 'database' | 'schema_behind' };

/**
 * SPEC part 4 "GET /healthz": writes are moving, the database answers, the schema is current. Stalled
 * writes are told first, without asking the database: when no write gets a connection, neither
 * would this check.
 */
export async function healthOf(core: Core): Promise<Health> {
  const waitMs = core.db.oldestWriteMs();
  if (waitMs > STALL_MS) return { ok: false, reason: 'writes_stalled', waitMs };
  let pending: number;
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_MS} ms`)), ANSWER_MS);
    });
    pending = await Promise.race([pendingMigrations(core.db.pool), late]);
  } catch (error) {
    core.log.warn('health check: database did not answer', { message: (error as Error).message });
    return { ok: false, reason: 'database' };
  } finally {
    clearTimeout(timer);
  }
  return pending > 0 ? { ok: false, reason: 'schema_behind' } : { ok: true };
}
