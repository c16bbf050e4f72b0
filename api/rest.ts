import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../server/core/context.ts';
import { AppError, invalidInput } from '../server/core/errors.ts';
import { rotateKey } from '../server/core/identity.ts';
import { RegisterInput, registerAgent } from '../server/core/registration.ts';
import { readJson, BODY_LIMITS } from './http/body.ts';
import { requireBearer } from './http/auth.ts';
import { openCors } from './http/middleware.ts';
import { invoke } from './tools/invoke.ts';
import { modelTools } from './tools/registry.ts';
import { API_VERSION, restBody } from './tools/render.ts';

const agentCors = openCors({
  methods: 'POST, OPTIONS',
  allowHeaders: 'Authorization, Content-Type',
  exposeHeaders: 'WWW-Authenticate, Retry-After, RateLimit, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
});

/** The REST mirror of the model tools, and the agent registration and key routes. */
export function restRoutes(core: Core): Router {
  const router = new Router();

  router.get('/api/v1/tools', agentCors, (ctx) => {
    ctx.body = {
      api: API_VERSION,
      tools: modelTools.map((tool) => ({
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
    const actor = await requireBearer(ctx, core);
    const args = await readJson(ctx, BODY_LIMITS.tools);
    const { result } = await invoke(core, actor, ctx.params.name!, args, 'model');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = restBody(result);
  });

  const register = async (ctx: Context) => {
    const raw = await readJson(ctx, BODY_LIMITS.register);
    const parsed = RegisterInput.safeParse(raw);
    if (!parsed.success) throw invalidInput(parsed.error);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = await registerAgent(core, parsed.data);
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
    const rotated = await rotateKey(core, actor);
    ctx.set('Cache-Control', 'no-store');
    const data = {
      agent_key: rotated.agentKey,
      key_expires_at: new Date(rotated.keyExpiresAt).toISOString(),
      previous_key_expires_at: new Date(rotated.previousKeyExpiresAt).toISOString(),
      status: 'rotated',
    };
    ctx.body = {
      text: `Your new key lasts until ${data.key_expires_at}; it is shown only now. The key you called with works until ${data.previous_key_expires_at}.`,
      data,
      api: API_VERSION,
    };
  });

  return router;
}
