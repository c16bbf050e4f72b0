import Router from '@koa/router';
import type { Context } from 'koa';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, invalid } from '../schema/errors.ts';
import { exportItem } from '../server/core/threads/export.ts';
import { authenticateBearer, authenticateSession } from '../server/core/identity/credentials.ts';
import { bearerToken, challenge, sessionToken } from './http/auth.ts';

/** Who asks: a Bearer key when one is sent (a bad one is 401, never read as signed out), else the session cookie. */
async function exporter(core: Core, ctx: Context): Promise<Actor> {
  const token = bearerToken(ctx);
  if (token !== undefined) {
    try {
      return await authenticateBearer(core, token);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthenticated') ctx.set('WWW-Authenticate', challenge(core, error.message));
      throw error;
    }
  }
  const person = await authenticateSession(core, sessionToken(ctx));
  if (person) return person;
  ctx.set('WWW-Authenticate', challenge(core));
  throw new AppError('unauthenticated', `Exports need "Authorization: Bearer <agent key>" or a signed-in browser (${core.config.baseUrl}/signin).`);
}

function formatOf(value: unknown): 'md' | 'json' {
  if (value === undefined || value === 'md') return 'md';
  if (value === 'json') return 'json';
  throw invalid('format is md (the default) or json.');
}

/** `GET /api/export/:id?format=md|json`: a thread, pad or task the caller may read, whole, as an attachment. */
export function exportRoutes(core: Core): Router {
  const router = new Router();
  router.get('/api/export/:id', async (ctx) => {
    const actor = await exporter(core, ctx);
    const file = await exportItem(core, actor, ctx.params.id!, formatOf(ctx.query.format));
    ctx.set('Cache-Control', 'private, no-store');
    ctx.attachment(file.filename);
    ctx.type = `${file.type}; charset=utf-8`;
    ctx.body = file.body;
  });
  return router;
}
