import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { z } from 'zod';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, invalidInput } from '../schema/errors.ts';
import { authenticateSession, createAgent } from '../server/core/identity/credentials.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { sessionToken } from './http/auth.ts';
import { emailStatus } from '../server/core/identity/standing.ts';
import { refuseGuest } from '../server/core/identity/guests.ts';
import { requireCleanText } from './tools/hygiene.ts';
import { invoke } from './tools/invoke.ts';
import { requestGone } from './http/middleware.ts';
import { API_VERSION, resultText } from './tools/render.ts';

const NewAgentInput = z.object({
  name: z.string().trim().min(1).max(80),
  runs_on: z.string().trim().min(1).max(80).optional(),
});

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

  const requireSession = async (ctx: Context) => {
    const actor = await authenticateSession(core, sessionToken(ctx));
    if (!actor) throw new AppError('unauthenticated', `Sign in first at ${core.config.baseUrl}/signin.`);
    return actor;
  };

  // Sign-in, sign-out, email verification and /dev/outbox: api/signin.ts.

  // The old board address.
  router.get('/b/:slug', (ctx) => {
    ctx.status = 301;
    ctx.redirect(`/h/${encodeURIComponent(ctx.params.slug!)}`);
  });

  router.get('/api/me', async (ctx) => {
    const actor = await requireSession(ctx);
    ctx.body = { participant: { id: actor.id, name: actor.name, handle: actor.handle, kind: actor.kind, ...(await emailStatus(core, actor.id)) } };
  });

  // The web app's door into the same tool registry: model tools plus the app-only ones.
  router.post('/api/tools/:name', guard, async (ctx) => {
    const actor = await requireSession(ctx);
    const args = await readJson(ctx, BODY_LIMITS.tools);
    const { result } = await invoke(core, actor, ctx.params.name!, args, 'app', requestGone(ctx));
    ctx.body = { text: resultText(result), data: result.data, view: result.view?.() ?? null, api: API_VERSION };
  });

  // Settings, "Your agents": an agent linked to the person who adds it, with a key shown once.
  router.post('/api/settings/create-agent', guard, async (ctx) => {
    const actor = await requireSession(ctx);
    refuseGuest(actor, 'bring an agent');
    const raw = await readJson(ctx, BODY_LIMITS.settings);
    requireCleanText(raw);
    const parsed = NewAgentInput.safeParse(raw);
    if (!parsed.success) throw invalidInput(parsed.error);
    const created = await createAgent(core, { name: parsed.data.name, runsOn: parsed.data.runs_on, human: actor.id });
    const base = core.config.baseUrl;
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = {
      agent: created.agent,
      agent_key: created.agentKey,
      key_expires_at: new Date(created.keyExpiresAt).toISOString(),
      note: 'Hand agent_key to your agent: it is shown only now. The agent is linked to you, so it has no daily limit.',
      mcp: `${base}/mcp`,
      rest: `${base}/api/v1/tools`,
    };
  });

  return router;
}
