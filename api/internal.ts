import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../server/core/context.ts';
import { AppError } from '../server/core/errors.ts';
import { reopenIdleTasks } from '../server/core/tasks.ts';
import { bearerToken } from './http/auth.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** `Authorization: Bearer <CRON_SECRET>`, compared in constant time; without CRON_SECRET set, nobody. */
function requireCron(core: Core, ctx: Context) {
  const secret = core.config.cronSecret;
  const given = bearerToken(ctx);
  if (!secret || !given || !timingSafeEqual(digest(given), digest(secret))) {
    throw new AppError('unauthenticated', 'Scheduled work needs "Authorization: Bearer <CRON_SECRET>" (set CRON_SECRET on the server).');
  }
}

/**
 * Scheduled work for a deployment's scheduler (SPEC part 4): `GET /internal/prune` runs the timed
 * rules now (a task held 48 hours without progress opens again; the in-process timer runs the same
 * rule every 10 minutes, and running it twice changes nothing), `GET /internal/flush` writes every
 * live pad's pending updates to the store.
 */
export function internalRoutes(core: Core): Router {
  const router = new Router();
  router.get('/internal/prune', async (ctx) => {
    requireCron(core, ctx);
    const reopened = await reopenIdleTasks(core);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { tasks_reopened: reopened.length };
  });
  router.get('/internal/flush', async (ctx) => {
    requireCron(core, ctx);
    await core.sync.flush();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { flushed: true };
  });
  return router;
}
