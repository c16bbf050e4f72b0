import Router from '@koa/router';
import type { Core } from '../server/core/kernel/context.ts';
import { healthOf } from '../server/core/kernel/health.ts';

/** `GET /healthz`: 200 `{ok: true}`, or 503 with the reason and `Retry-After` (the checks are the core's). */
export function healthRoutes(core: Core): Router {
  const router = new Router();
  router.get('/healthz', async (ctx) => {
    const health = await healthOf(core);
    if (!health.ok) {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
    }
    ctx.body = health;
  });
  return router;
}
