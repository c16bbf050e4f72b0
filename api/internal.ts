import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError } from '../schema/errors.ts';
import { movedLastDay, runRules } from '../server/core/rulebook/rulebook.ts';
import { bearerToken } from './http/auth.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** `Authorization: Bearer <CRON_SECRET>`, compared in constant time; without CRON_SECRET set, nobody. */
export function requireCron(core: Core, ctx: Context) {
  const secret = core.config.cronSecret;
  const given = bearerToken(ctx);
  if (!secret || !given || !timingSafeEqual(digest(given), digest(secret))) {
    throw new AppError('unauthenticated', 'Scheduled work needs "Authorization: Bearer <CRON_SECRET>" (set CRON_SECRET on the server).');
  }
}

/**
 * Scheduled work for a deployment's scheduler (SPEC part 4). `GET /internal/prune` runs every rule of
 * the rulebook now (server/core/rulebook/rulebook.ts; each instance's timer runs them every 10 minutes too, a
 * rule never runs twice at once, and running one again changes nothing) and answers what each did
 * (`ran` and how many rows it moved, or `busy`: another run of it held its lock, or `failed`), with
 * what each moved over the last 24 hours in every run recorded. `GET /internal/flush` writes every
 * live pad's pending updates to the store.
 */
export function internalRoutes(core: Core): Router {
  const router = new Router();
  router.get('/internal/prune', async (ctx) => {
    requireCron(core, ctx);
    const now = new Date();
    const runs = await runRules(core, now);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      at: now.toISOString(),
      rules: runs.map((run) => ({ rule: run.rule, status: run.status, moved: run.rows })),
      moved_last_24h: await movedLastDay(core.db.pool),
    };
  });
  router.get('/internal/flush', async (ctx) => {
    requireCron(core, ctx);
    await core.sync.flush();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { flushed: true };
  });
  return router;
}
