import Router from '@koa/router';
import { z } from 'zod';
import type { Core } from '../server/core/kernel/context.ts';
import { invalidInput } from '../schema/errors.ts';
import { SERVER_PAUSES, serverPauses, setServerPause } from '../server/core/limits/pauses.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { requireCron } from './internal.ts';

const PauseInput = z.object({ what: z.enum(SERVER_PAUSES), note: z.string().trim().max(500).optional() });

/**
 * The operator's pauses (SPEC part 8 "Pauses"; there is no admin role yet): behind
 * `Authorization: Bearer <CRON_SECRET>` as the scheduled routes are. `POST /internal/pause` and
 * `POST /internal/unpause` with `{what}` (posting, signups, guest_registration, guest_posting; a
 * `note` for the record) answer every pause now in force, as `GET /internal/pauses` does. They are
 * kept in the store, so every instance obeys at once.
 */
export function adminPauseRoutes(core: Core): Router {
  const router = new Router();
  router.get('/internal/pauses', async (ctx) => {
    requireCron(core, ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { paused: await serverPauses(core.db.pool) };
  });
  for (const [path, paused] of [['/internal/pause', true], ['/internal/unpause', false]] as const) {
    router.post(path, async (ctx) => {
      requireCron(core, ctx);
      const parsed = PauseInput.safeParse(await readJson(ctx, BODY_LIMITS.small));
      if (!parsed.success) throw invalidInput(parsed.error, `Send {"what": one of ${SERVER_PAUSES.join(', ')}}.`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { paused: await setServerPause(core, parsed.data.what, paused, parsed.data.note) };
    });
  }
  return router;
}
