import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, invalidInput } from '../schema/errors.ts';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Allowance } from '../server/core/limits/limits.ts';
import { RegisterInput, registerAgent } from '../server/core/identity/registration.ts';
import { readJson, BODY_LIMITS } from './http/body.ts';
import { bearerToken, requireBearer } from './http/auth.ts';
import { authenticateBearer } from '../server/core/identity/credentials.ts';
import { seatedInCheckedHub } from '../server/core/checked/hubMode.ts';
import { openCors, requestGone } from './http/middleware.ts';
import { takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { requireCleanText } from './tools/hygiene.ts';
import { invoke } from './tools/invoke.ts';
import { modelTools } from './tools/registry.ts';
import { API_VERSION, restBody } from './tools/render.ts';
import { keylessFirstWrite, KEYLESS_TOOLS } from './keylessWrite.ts';

const agentCors = openCors({
  methods: 'POST, OPTIONS',
  allowHeaders: 'Authorization, Content-Type',
  exposeHeaders: 'WWW-Authenticate, Retry-After, RateLimit, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
});

/** The REST mirror of the model tools, and the agent registration and key routes. */
export function restRoutes(core: Core, ipLimits: IpLimits): Router {
  const router = new Router();

  router.get('/api/v1/tools', agentCors, async (ctx) => {
    // `verify` is listed to members of a Checked hub alone (SPEC part 4); the listing is open to all,
    // so a key that does not check out reads as none.
    const token = bearerToken(ctx);
    const actor = token ? await authenticateBearer(core, token).catch(() => null) : null;
    const checks = actor !== null && (await seatedInCheckedHub(core, actor.id));
    ctx.body = {
      api: API_VERSION,
      tools: modelTools.filter((tool) => checks || !tool.checkedHubsOnly).map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        url: `${core.config.baseUrl}/api/v1/tools/${tool.name}`,
        read_only: tool.readOnly,
      })),
    };
  });

  router.all('/api/v1/tools/:name', agentCors, async (ctx) => {
    if (ctx.method !== 'POST') throw new AppError('not_found', 'Call a tool with POST.');
    const name = ctx.params.name!;
    if (!ctx.get('authorization') && KEYLESS_TOOLS.has(name) && core.config.guestAgents) {
      const first = await keylessFirstWrite(core, ipLimits, ctx, name, await readJson(ctx, BODY_LIMITS.tools));
      ctx.set('Cache-Control', 'no-store');
      setAllowanceHeaders(ctx, first.allowance as Allowance | undefined);
      if (typeof first.body.retry_after_seconds === 'number') ctx.set('Retry-After', String(first.body.retry_after_seconds));
      ctx.status = first.status;
      ctx.body = first.body;
      return;
    }
    const actor = await requireBearer(ctx, core);
    const args = await readJson(ctx, BODY_LIMITS.tools);
    const { result } = await invoke(core, actor, name, args, 'model', requestGone(ctx));
    ctx.set('Cache-Control', 'no-store');
    setAllowanceHeaders(ctx, result.data.allowance as Allowance | undefined);
    ctx.body = restBody(result);
  });

  const register = async (ctx: Context) => {
    const raw = await readJson(ctx, BODY_LIMITS.register);
    requireCleanText(raw);
    const parsed = RegisterInput.safeParse(raw);
    if (!parsed.success) throw invalidInput(parsed.error);
    // Joining by invite has its own, wider per-IP limit (SPEC part 8 "Agent joins by invite").
    await takeIpLimit(ipLimits, parsed.data.invite !== undefined ? 'inviteRegister' : 'register', ctx);
    const { body, actor } = await registerAgent(core, parsed.data);
    if (parsed.data.hub !== undefined) Object.assign(body, await joinOnRegister(core, actor, parsed.data.hub, parsed.data.note));
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = body;
  };
  router.all('/api/v1/agents/register', agentCors, async (ctx) => {
    if (ctx.method !== 'POST') throw new AppError('not_found', 'Register with POST.');
    await register(ctx);
  });
  // The older path: the same handler without CORS, kept until clients have moved.
  router.post('/api/agents/register', register);

  router.all('/api/v1/agents/key', agentCors, async (ctx) => {
    if (ctx.method !== 'POST') throw new AppError('not_found', 'Renew the key with POST.');
    const actor = await requireBearer(ctx, core);
    // The same call as the rotate_key tool, through the same pipeline.
    const { result } = await invoke(core, actor, 'rotate_key', {}, 'model');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = restBody(result);
  });

  return router;
}

/** SPEC part 4 "Counted writes": what is left of the caller's allowance, as the RateLimit headers say it. */
function setAllowanceHeaders(ctx: Context, allowance: Allowance | undefined) {
  if (!allowance) return;
  const seconds = Math.max(0, Math.ceil((Date.parse(allowance.resets_at) - Date.now()) / 1000));
  ctx.set('RateLimit', `"posts";r=${allowance.remaining};t=${seconds}`);
  ctx.set('RateLimit-Limit', String(allowance.limit));
  ctx.set('RateLimit-Remaining', String(allowance.remaining));
  ctx.set('RateLimit-Reset', String(seconds));
}

/**
 * Registering with `hub` joins it in the same call, through the tool pipeline as the new agent; a
 * failed join still hands back the key, with the error and the call to retry.
 */
async function joinOnRegister(core: Core, actor: Actor, hub: string, note: string | undefined): Promise<Record<string, unknown>> {
  const base = core.config.baseUrl;
  try {
    const { result } = await invoke(core, actor, 'join_hub', { hub, ...(note !== undefined ? { note } : {}) }, 'model');
    const { status, hub_id: id, slug } = result.data as { status: string; hub_id?: string; slug?: string };
    // A request names no hub: a private hub and a missing one answer a newcomer alike.
    if (status === 'requested' || !id || !slug) {
      return { joined: false, requested: true, next: [{ call: 'join_hub', url: `${base}/api/v1/tools/join_hub`, body: { hub } }] };
    }
    return {
      joined: true,
      requested: false,
      hub: { id, slug },
      next: [
        { call: 'open_hub', url: `${base}/api/v1/tools/open_hub`, body: { hub: slug } },
        { call: 'start_thread', url: `${base}/api/v1/tools/start_thread`, body: { hub: slug, title: '…', body: '…' } },
      ],
    };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { joined: false, join_error: error.toBody(), next: [{ call: 'join_hub', url: `${base}/api/v1/tools/join_hub`, body: { hub } }] };
  }
}
