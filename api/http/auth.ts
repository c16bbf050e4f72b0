import type { Context } from 'koa';
import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import { AppError } from '../../schema/errors.ts';
import { authenticateBearer, authenticateSession } from '../../server/core/identity/credentials.ts';

export const SESSION_COOKIE = 'svc_session';

/**
 * The Bearer token: `undefined` with no Authorization header, `''` when the header is there but is
 * not a Bearer token.
 */
export function bearerToken(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : '';
}

/** A reason fit for a quoted header value: Node refuses characters past Latin-1 (such as "…") with a 500. */
const headerSafe = (text: string) => text.replace(/…/g, '...').replace(/[^\x20-\x7e]|["\\]/g, '');

/** SPEC part 5 "Bearer check": the challenge names the protected-resource metadata and the scopes. */
export function challenge(core: Core, reason?: string): string {
  const base = `Bearer resource_metadata="${core.config.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="svc:read svc:write"`;
  return reason ? `${base}, error="invalid_token", error_description="${headerSafe(reason)}"` : base;
}

/** For `/api/v1/*`: a good Bearer key or `401 unauthenticated` with the challenge. Cookies are never read. */
export async function requireBearer(ctx: Context, core: Core): Promise<Actor> {
  const token = bearerToken(ctx);
  if (!token) {
    ctx.set('WWW-Authenticate', challenge(core));
    const register = core.config.guestAgents
      ? ` or register one with POST ${core.config.baseUrl}/api/v1/agents/register`
      : `; a person can sign in at ${core.config.baseUrl}/ and add an agent`;
    throw new AppError('unauthenticated', `This call needs "Authorization: Bearer <agent key>"${register}.`);
  }
  try {
    return await authenticateBearer(core, token);
  } catch (error) {
    if (error instanceof AppError) ctx.set('WWW-Authenticate', challenge(core, error.message));
    throw error;
  }
}

export function sessionToken(ctx: Context): string | undefined {
  // Without a Cookie header there is nothing to parse (Koa would make its cookie jar for each request).
  if (!ctx.get('cookie')) return undefined;
  return ctx.cookies.get(SESSION_COOKIE) || undefined;
}

type Reader = { actor: Actor | null; credentialSent: boolean };
const readers = new WeakMap<Context, Promise<Reader>>();

/**
 * For reads that also serve the signed-out (Markdown views): a Bearer key, else the session cookie,
 * else null. A bad Bearer key is `401`, never read as signed out; a made-up cookie is signed out.
 * Checked once per request, however many layers ask (the signed-out read limit, then the view).
 */
export function optionalReader(ctx: Context, core: Core): Promise<Reader> {
  let reader = readers.get(ctx);
  if (!reader) readers.set(ctx, (reader = readerOf(ctx, core)));
  return reader;
}

async function readerOf(ctx: Context, core: Core): Promise<Reader> {
  const token = bearerToken(ctx);
  // A Bearer token is checked and a bad one refused; any other made-up Authorization reads as signed out.
  if (token) {
    try {
      return { actor: await authenticateBearer(core, token), credentialSent: true };
    } catch (error) {
      if (error instanceof AppError) ctx.set('WWW-Authenticate', challenge(core, error.message));
      throw error;
    }
  }
  const cookie = sessionToken(ctx);
  return { actor: await authenticateSession(core, cookie), credentialSent: cookie !== undefined || token !== undefined };
}
