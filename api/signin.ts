import { escapeHtml } from './http/escapeHtml.ts';
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, invalidInput } from '../schema/errors.ts';
import { authenticateSession, developmentOpen, signInDev, signOut, SESSION_TTL } from '../server/core/identity/credentials.ts';
import { newestOutbox, type OutboxMessage } from '../server/core/identity/mail.ts';
import { finishOidc, startOidc, type OidcPending } from '../server/core/identity/oidc.ts';
import { checkSignInCode, CODE_TTL, foldBrowserGuest, sendSignInCode } from '../server/core/identity/signin.ts';
import { confirmEmail } from '../server/core/identity/verification.ts';
import { SESSION_COOKIE, sessionToken } from './http/auth.ts';
import { BODY_LIMITS, readJson } from './http/body.ts';
import { ipLimited, takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { checkOrigin, sameOrigin } from './web.ts';

const email = z.email().max(254);
const DevSignIn = z.object({ name: z.string().trim().min(1).max(80), email, tester_code: z.string().max(200).optional() });
const CodeRequest = z.object({ email });
const CodeCheck = z.object({ email, code: z.string().trim().max(20) });
const Token = z.object({ token: z.string().min(1).max(200) });
/** Between /signin/start and /auth/callback, in an HttpOnly cookie of that path only: 10 minutes. */
const OIDC_COOKIE = 'svc_oidc';
const Pending = z.object({ state: z.string(), verifier: z.string(), nonce: z.string(), next: z.string().optional() });

/** A page of ours to go to after sign-in: a path, never another site. */
const ourPage = (next: unknown) => (typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : undefined);

function pendingOf(raw: string | undefined): (OidcPending & { next?: string | undefined }) | null {
  if (!raw) return null;
  try {
    const parsed = Pending.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Web sign-in (SPEC part 5): a 6-digit code by mail (`/signin`, `/signin/code`), the development
 * form, sign-out, email verification links (`/verify#svcv_…`) and, in development, `/dev/outbox`.
 */
export function signinRoutes(core: Core, hosts: () => Set<string>, limits: IpLimits): Router {
  const router = new Router();
  const guard = sameOrigin(hosts);

  async function parse<T>(ctx: Context, schema: z.ZodType<T>, limit: number, message: string): Promise<T> {
    const parsed = schema.safeParse(await readJson(ctx, limit));
    if (!parsed.success) throw invalidInput(parsed.error, message);
    return parsed.data;
  }

  /**
   * Sessions rotate at sign-in: the new one in the cookie, the browser's earlier one revoked. A guest
   * this browser was is folded into the account it signed into.
   */
  async function startSession(ctx: Context, signedIn: { session: string; participant: { id: string } }) {
    const previous = sessionToken(ctx);
    const browser = previous ? await authenticateSession(core, previous) : null;
    await foldBrowserGuest(core, browser?.id, signedIn.participant.id);
    setSessionCookie(ctx, signedIn.session);
    if (previous) await signOut(core, previous);
  }

  function setSessionCookie(ctx: Context, session: string) {
    ctx.cookies.set(SESSION_COOKIE, session, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, maxAge: SESSION_TTL, path: '/' });
  }

  // What the sign-in page offers here.
  router.get('/api/signin-options', (ctx) => {
    const delivery = core.config.smtpUrl ? 'smtp' : 'outbox';
    ctx.body = {
      code: true,
      oidc: core.config.oidc !== undefined,
      development_form: !core.config.production,
      delivery,
      ...(delivery === 'outbox' && developmentOpen(core.config, undefined) ? { outbox_url: '/dev/outbox' } : {}),
    };
  });

  router.post('/signin/code', ipLimited(limits, 'signinCode'), guard, async (ctx) => {
    const input = await parse(ctx, CodeRequest, BODY_LIMITS.small, 'Give an email address.');
    const sent = await sendSignInCode(core, input.email);
    ctx.body = {
      sent: true,
      expires_in_seconds: CODE_TTL / 1000,
      delivery: sent.delivery,
      message: `If the address can take mail, a 6-digit code is on its way; enter it at ${core.config.baseUrl}/signin/code within an hour. ${sent.note}`,
      next: '/signin/code',
    };
  });

  router.post('/signin/code/verify', ipLimited(limits, 'signinVerify'), guard, async (ctx) => {
    const input = await parse(ctx, CodeCheck, BODY_LIMITS.small, 'Give the email address and the 6-digit code mailed to it.');
    const signedIn = await checkSignInCode(core, input.email, input.code);
    await startSession(ctx, signedIn);
    ctx.body = { participant: signedIn.participant };
  });

  // The development form: name and email, no password; refused in production.
  router.post('/signin', ipLimited(limits, 'signinForm'), async (ctx) => {
    const form = ctx.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
    // A plain HTML form cannot send x-svc, but its Origin must still be ours (no sign-in CSRF).
    if (form) checkOrigin(ctx, hosts);
    else await guard(ctx, async () => {});
    const parsed = DevSignIn.safeParse(await readJson(ctx, BODY_LIMITS.small, { forms: true }));
    if (!parsed.success) throw invalidInput(parsed.error, 'Give a name (up to 80 characters) and an email address.');
    const signedIn = await signInDev(core, parsed.data);
    await startSession(ctx, signedIn);
    if (form) {
      ctx.redirect('/');
      return;
    }
    ctx.body = { participant: signedIn.participant };
  });

  // With SVC_OIDC_ISSUER: off to the provider with PKCE, back at /auth/callback.
  router.get('/signin/start', async (ctx) => {
    await takeIpLimit(limits, 'oidc', ctx);
    const started = await startOidc(core);
    const value = Buffer.from(JSON.stringify({ ...started.pending, next: ourPage(ctx.query.next) })).toString('base64url');
    ctx.cookies.set(OIDC_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, maxAge: 600_000, path: '/auth/callback' });
    ctx.redirect(started.url);
  });

  router.get('/auth/callback', async (ctx) => {
    await takeIpLimit(limits, 'oidc', ctx);
    const pending = pendingOf(ctx.cookies.get(OIDC_COOKIE));
    ctx.cookies.set(OIDC_COOKIE, '', { httpOnly: true, sameSite: 'lax', maxAge: 0, path: '/auth/callback' });
    try {
      const signedIn = await finishOidc(core, new URL(ctx.originalUrl, core.config.baseUrl), pending);
      await startSession(ctx, signedIn);
      ctx.redirect(pending?.next ?? '/');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Back to the sign-in page, which shows why and does not send the browser off again.
      ctx.redirect(`/signin?problem=${encodeURIComponent(error.message)}`);
    }
  });

  router.post('/signout', guard, async (ctx) => {
    const token = sessionToken(ctx);
    if (token) await signOut(core, token);
    ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', maxAge: 0, path: '/' });
    ctx.status = 204;
  });

  router.post('/api/verify-email', ipLimited(limits, 'verifyEmail'), guard, async (ctx) => {
    const input = await parse(ctx, Token, BODY_LIMITS.small, 'Send {token} from the verification link.');
    const previous = sessionToken(ctx);
    const browser = await authenticateSession(core, previous);
    const { session, ...confirmed } = await confirmEmail(core, input.token, browser);
    if (session) {
      setSessionCookie(ctx, session);
      if (previous) await signOut(core, previous);
    }
    ctx.body = confirmed;
  });

  // Mail kept instead of sent, for signing in on a development machine with no mail server.
  router.get('/dev/outbox', async (ctx) => {
    if (!developmentOpen(core.config, typeof ctx.query.tester_code === 'string' ? ctx.query.tester_code : undefined)) {
      throw new AppError('not_found', 'No such route.');
    }
    const messages = await newestOutbox(core);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = outboxPage(messages, core.config.smtpUrl !== undefined);
  });

  return router;
}

function outboxPage(messages: readonly OutboxMessage[], smtpSet: boolean): string {
  const items = messages.map(
    (m) => `<article>
<h2>${escapeHtml(m.subject)}</h2>
<p>To <strong>${escapeHtml(m.to_address)}</strong>, <time datetime="${new Date(m.created_at).toISOString()}">${new Date(m.created_at).toISOString()}</time></p>
<pre>${escapeHtml(m.body)}</pre>
</article>`,
  );
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Outbox · Dotpad (development)</title></head>
<body>
<h1>Outbox</h1>
<p>Mail this server kept instead of sending, because no <code>SMTP_URL</code> is set. Newest first; kept a day. Development only.${smtpSet ? ' SMTP_URL is set now: new mail goes out instead.' : ''}</p>
${items.length ? items.join('\n') : '<p>No mail yet.</p>'}
</body>
</html>
`;
}
