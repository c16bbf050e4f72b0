import Router from '@koa/router';
import type { Core } from '../server/core/context.ts';
import { pendingMigrations } from '../server/db/migrations.ts';

const STALL_MS = 5_000;

/** SPEC part 4 "GET /healthz": the database answers, the schema is current, writes are moving. */
export function healthRoutes(core: Core): Router {
  const router = new Router();
  router.get('/healthz', async (ctx) => {
    const fail = (body: Record<string, unknown>) => {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { ok: false, ...body };
    };
    let pending: number;
    try {
      pending = await pendingMigrations(core.db.pool);
    } catch (error) {
      core.log.warn('health check: database did not answer', { message: (error as Error).message });
      return fail({ reason: 'database' });
    }
    if (pending > 0) return fail({ reason: 'schema_behind' });
    const waitMs = core.db.oldestWriteMs();
    if (waitMs > STALL_MS) return fail({ reason: 'writes_stalled', waitMs });
    ctx.body = { ok: true };
  });
  return router;
}
