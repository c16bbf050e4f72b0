import Router from '@koa/router';
import type { Core } from '../server/core/kernel/context.ts';
import { requireSession } from '../server/core/identity/credentials.ts';
import { SESSION_COOKIE, sessionToken } from './http/auth.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { invoke } from './tools/invoke.ts';
import { sameOrigin } from './web.ts';

/** Older names of the linking operations, answered alike (SPEC part 4 "Web app only"). */
const OLDER_NAMES: Record<string, string> = {
  'preview-claim': 'preview-link',
  'link-status': 'preview-link',
  'claim-status': 'preview-link',
  'claim-agent': 'link-agent',
};

/**
 * Settings operations (`POST /api/settings/:op`, the web app only: session cookie, `x-svc: 1`, our
 * own origin, 16 KB): the registry's tools of audience `settings`, through the same pipeline as
 * every other door. This door serves those alone, and no other door serves them. The answer's body
 * is the operation's data; a new agent is `201`, and a deleted account's browser is signed out.
 */
export function settingsRoutes(core: Core, hosts: () => Set<string>): Router {
  const router = new Router();
  router.post('/api/settings/:op', sameOrigin(hosts), async (ctx) => {
    const person = await requireSession(core, sessionToken(ctx));
    const raw = await readJson(ctx, BODY_LIMITS.settings);
    const op = ctx.params.op!;
    const { tool, result } = await invoke(core, person, OLDER_NAMES[op] ?? op, raw, 'settings');
    ctx.set('Cache-Control', 'no-store');
    if (tool.name === 'create-agent') ctx.status = 201;
    if (tool.name === 'delete-account') ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', maxAge: 0, path: '/' });
    ctx.body = result.data;
  });
  return router;
}
