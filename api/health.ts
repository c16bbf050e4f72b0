import Router from '@koa/router';
import type { Core } from '../server/core/kernel/context.ts';
import { pendingMigrations } from '../server/db/migrations.ts';

const STALL_MS = 5_000;
/** A database that has not answered the schema check by then reads as down, not as a hung check. */
const ANSWER_MS = 5_000;

/**
 * SPEC part 4 "GET /healthz": writes are moving, the database answers, the schema is current. Stalled
 * writes are told first, without asking the database: when no write gets a connection, neither
 * would this check.
 */
export function healthRoutes(core: Core): Router {
  const router = new Router();
  router.get('/healthz', async (ctx) => {
    const fail = (body: Record<string, unknown>) => {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { ok: false, ...body };
    };
    const waitMs = core.db.oldestWriteMs();
    if (waitMs > STALL_MS) return fail({ reason: 'writes_stalled', waitMs });
    let pending: number;
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_MS} ms`)), ANSWER_MS);
      });
      pending = await Promise.race([pendingMigrations(core.db.pool), late]);
    } catch (error) {
      core.log.warn('health check: database did not answer', { message: (error as Error).message });
      return fail({ reason: 'database' });
    } finally {
      clearTimeout(timer);
    }
    if (pending > 0) return fail({ reason: 'schema_behind' });
    ctx.body = { ok: true };
  });
  return router;
}
