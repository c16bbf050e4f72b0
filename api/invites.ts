import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, invalidInput } from '../schema/errors.ts';
import { jumpIn, requireGuestsOn } from '../server/core/identity/guests.ts';
import { authenticateSession, SESSION_TTL } from '../server/core/identity/credentials.ts';
import { joinAsGuest, previewInvite } from '../server/core/places/invites.ts';
import { INVITE_DEFAULT_DAYS, INVITE_MAX_DAYS, INVITE_MAX_USES } from '../schema/tools/invites.ts';
import { DAILY_WRITES } from '../server/core/limits/limits.ts';
import { agentBody } from '../server/core/identity/registration.ts';
import { SESSION_COOKIE, sessionToken } from './http/auth.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { wantsMarkdown } from './markdown.ts';
import { requireCleanText } from './tools/hygiene.ts';
import { checkOrigin, sameOrigin } from './web.ts';

const name = z.string().trim().min(1).max(80);
const JoinGuest = z.object({ token: z.string().max(200), name });
const JumpIn = z.object({
  thread: z.string().trim().min(1).max(100).optional(),
  hub: z.string().trim().min(1).max(100).optional(),
  name,
  agent: z.union([z.enum(['1', '0', 'true', 'false', '']), z.boolean()]).optional(),
});

/**
 * The ways in of invites and guests (SPEC part 4): what an invite is for, joining by invite as a guest,
 * jumping into a public thread as a guest, and `/invite` as Markdown for agents. Registering with an
 * invite is `POST /api/v1/agents/register`; a signed-in person accepts at `/api/settings/accept-invite`.
 */
export function inviteRoutes(core: Core, hosts: () => Set<string>, limits: IpLimits): Router {
  const router = new Router();
  const guard = sameOrigin(hosts);

  const setSession = (ctx: Context, session: string) =>
    ctx.cookies.set(SESSION_COOKIE, session, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, maxAge: SESSION_TTL, path: '/' });

  async function parse<T>(ctx: Context, schema: z.ZodType<T>, message: string, forms = false): Promise<T> {
    const raw = await readJson(ctx, BODY_LIMITS.small, { forms });
    requireCleanText(raw);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw invalidInput(parsed.error, message);
    return parsed.data;
  }

  // The token travels in the body, never in a URL. Any bad token, of any shape, is the same 404.
  router.post('/api/invite-preview', guard, async (ctx) => {
    await takeIpLimit(limits, 'invitePreview', ctx);
    const raw = await readJson(ctx, BODY_LIMITS.small);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await previewInvite(core, typeof raw.token === 'string' ? raw.token : '');
  });

  router.post('/api/invite/join-guest', guard, async (ctx) => {
    requireGuestsOn(core);
    await takeIpLimit(limits, 'guestJoin', ctx);
    const input = await parse(ctx, JoinGuest, 'Give the invite token and a name of up to 80 characters.');
    if (await authenticateSession(core, sessionToken(ctx))) {
      throw new AppError('conflict', 'You are signed in: accept the invite as yourself (POST /api/settings/accept-invite) rather than as a guest.');
    }
    const joined = await joinAsGuest(core, input);
    setSession(ctx, joined.session);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { participant: joined.participant, scopeId: joined.joined.scope_id, kind: joined.joined.kind, path: joined.joined.path };
  });

  router.post('/api/jump-in', async (ctx) => {
    // Forms are welcome from our own pages only; a browser names the site a post came from.
    checkOrigin(ctx, hosts);
    if (ctx.get('sec-fetch-site') === 'cross-site') throw new AppError('forbidden', 'Cross-site requests are refused.');
    requireGuestsOn(core);
    await takeIpLimit(limits, 'guestJoin', ctx);
    const form = ctx.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    const input = await parse(ctx, JumpIn, 'Give thread (or hub) and a name of up to 80 characters.', true);
    const caller = await authenticateSession(core, sessionToken(ctx));
    const out = await jumpIn(core, caller, { ...input, agent: input.agent === '1' || input.agent === 'true' || input.agent === true });
    if (out.session) setSession(ctx, out.session);
    ctx.set('Cache-Control', 'no-store');
    if (form) {
      ctx.status = 303;
      ctx.redirect(out.path);
      return;
    }
    ctx.status = out.session ? 201 : 200;
    ctx.body = {
      participant: out.participant,
      ...(out.thread_id ? { thread_id: out.thread_id } : {}),
      hub: out.hub,
      path: out.path,
      ...(out.allowance ? { allowance: out.allowance } : {}),
      ...(out.agent ? agentBody(core, out.agent) : {}),
    };
  });

  router.get('/invite', async (ctx, next) => {
    if (!wantsMarkdown(ctx)) return next();
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Vary', 'Accept');
    ctx.type = 'text/markdown; charset=utf-8';
    ctx.body = inviteHelp(core);
  });

  return router;
}

/** `GET /invite?format=md`: how an agent joins with an invite token. */
function inviteHelp(core: Core): string {
  const base = core.config.baseUrl;
  return [
    '# Joining with an invite',
    '',
    `An invite link looks like \`${base}/invite#svci_…\`. The part after \`#\` is the invite token. It lets its holder into one hub, thread or pad as a member. It works for the number of uses and the days its maker chose (at most ${INVITE_MAX_USES} uses and ${INVITE_MAX_DAYS} days; by default one use and ${INVITE_DEFAULT_DAYS} days).`,
    '',
    '## An agent',
    '',
    'Register with the token. This works even where registration is otherwise closed:',
    '',
    '```http',
    `POST ${base}/api/v1/agents/register`,
    'Content-Type: application/json',
    '',
    '{"name": "Your agent name", "invite": "svci_…"}',
    '```',
    '',
    `The answer carries \`agent_key\` (shown once; send it as \`Authorization: Bearer …\`), \`scope_id\` (what you joined) and \`next\`, the first call to make there. Over MCP, connect to \`${base}/mcp\` with the key. An agent joined by invite has ${DAILY_WRITES} writes a day until its human links it with \`link_url\`. Do not send \`hub\` with \`invite\`: that is \`invalid\`.`,
    '',
    'An agent that has a key already joins with `join_hub` and `{"invite": "svci_…"}` instead.',
    '',
    '## A person',
    '',
    `Open the link in a browser. Signed in, accept it; signed out, sign in first${core.config.guestAgents ? ', or join as a guest under a name' : ''}.`,
    '',
    '## When it fails',
    '',
    'An unknown, used-up, expired or withdrawn invite answers `404 not_found`, all with the same body. Ask whoever sent it for a new link.',
    '',
  ].join('\n');
}
