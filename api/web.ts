import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError } from '../schema/errors.ts';
import { requireSession } from '../server/core/identity/credentials.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { sessionToken } from './http/auth.ts';
import { emailStatus } from '../server/core/identity/standing.ts';
import { invoke } from './tools/invoke.ts';
import { requestGone } from './http/middleware.ts';
import { API_VERSION, resultText } from './tools/render.ts';

/**
 * Cookie-authenticated POSTs must come from our own origin: they carry `x-svc: 1` (which a cross-site
 * form cannot send without a CORS preflight we never grant) and, when the browser sends one, our Origin.
 */
export function checkOrigin(ctx: Context, hosts: () => Set<string>) {
  const origin = ctx.get('origin');
  if (!origin) return;
  let host = '';
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {}
  if (!hosts().has(host)) throw new AppError('forbidden', 'Cross-site requests are refused.');
}

export function sameOrigin(hosts: () => Set<string>) {
  return async (ctx: Context, next: Next) => {
    checkOrigin(ctx, hosts);
    if (ctx.get('x-svc') !== '1') throw new AppError('forbidden', 'Web app calls carry the header "x-svc: 1".');
    await next();
  };
}

export function webRoutes(core: Core, hosts: () => Set<string>): Router {
  const router = new Router();
  const guard = sameOrigin(hosts);

  // Sign-in, sign-out, email verification and /dev/outbox: api/signin.ts; the settings operations: api/settings.ts.

  // The old board address.
  router.get('/b/:slug', (ctx) => {
    ctx.status = 301;
    ctx.redirect(`/h/${encodeURIComponent(ctx.params.slug!)}`);
  });

  router.get('/api/me', async (ctx) => {
    const actor = await requireSession(core, sessionToken(ctx));
    ctx.body = { participant: { id: actor.id, name: actor.name, handle: actor.handle, kind: actor.kind, ...(await emailStatus(core, actor.id)) } };
  });

  // The web app's door into the same tool registry: model tools plus the app-only ones.
  router.post('/api/tools/:name', guard, async (ctx) => {
    const actor = await requireSession(core, sessionToken(ctx));
    const args = await readJson(ctx, BODY_LIMITS.tools);
    const { result } = await invoke(core, actor, ctx.params.name!, args, 'app', requestGone(ctx));
    ctx.body = { text: resultText(result), data: result.data, view: result.view?.() ?? null, api: API_VERSION };
  });

  return router;
}
