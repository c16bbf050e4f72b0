import { createHmac, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import { authenticateSession } from '../../server/core/identity/credentials.ts';
import { knownHost } from '../../server/core/identity/oauthClients.ts';
import { isMetadataUrl } from '../../server/core/identity/oauthHosts.ts';
import { issueCode } from '../../server/core/identity/oauthTokens.ts';
import { sessionToken } from '../http/auth.ts';
import { readText } from '../http/body.ts';
import { takeIpLimit, type IpLimits } from '../http/ipLimits.ts';
import { backToClient, checkAuthorizeRequest, isProblem, type AuthorizeRequest } from './authorizeRequest.ts';
import { authorizeErrorPage, CONSENT_CSS, consentPage } from './consentPage.ts';
import { OAUTH_BODY_LIMIT } from './oauthHttp.ts';

/** How long a consent page may wait before its Allow is refused as stale. */
const FORM_TTL_MS = 15 * 60_000;

/**
 * The consent form's token: an HMAC keyed with the browser's session secret over the request it
 * shows, and when it was shown. Another site cannot make one (it lacks the session cookie's value),
 * and it cannot be moved to another request or session.
 */
function formToken(session: string, request: AuthorizeRequest, issuedAt: number): string {
  const shown = ['consent', issuedAt, request.client.id, request.redirectUri, request.codeChallenge, request.scopes.join(' '), request.resource, request.state ?? ''].join('\n');
  return `${issuedAt}.${createHmac('sha256', session).update(shown).digest('base64url')}`;
}

function formTokenGood(session: string, request: AuthorizeRequest, token: string | undefined): boolean {
  const issuedAt = Number(token?.split('.')[0]);
  if (!token || !Number.isSafeInteger(issuedAt) || Date.now() - issuedAt > FORM_TTL_MS || issuedAt > Date.now() + 60_000) return false;
  const expected = Buffer.from(formToken(session, request, issuedAt));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Where the consent form's 303 may lead: the CSP's form-action governs redirects after a form's POST too. */
function redirectSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}

/**
 * `/oauth/authorize` (SPEC part 5 "OAuth 2.1"): the request checked, the person signed in first (the
 * sign-in page returns here), then a consent page whose POST (same origin, with a form token of the
 * session) answers `303` to the client with a code or an error, and `iss` either way. What cannot be
 * sent back safely (an unknown client, a redirect URI it did not register) is shown as a page.
 */
export function oauthAuthorizeRoutes(core: Core, hosts: () => Set<string>, limits: IpLimits, clientDist: string): Router {
  const router = new Router();

  const showError = (ctx: Context, status: number, message: string) => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = authorizeErrorPage(clientDist, message);
  };
  const signedIn = async (ctx: Context): Promise<{ person: Actor; session: string } | null> => {
    const session = sessionToken(ctx);
    const person = await authenticateSession(core, session);
    // A guest person has no account to connect an app to.
    return person && session && !person.guest ? { person, session } : null;
  };

  router.get('/oauth/consent.css', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'text/css';
    ctx.body = CONSENT_CSS;
  });

  router.get('/oauth/authorize', async (ctx) => {
    const query = [...new URLSearchParams(ctx.querystring)];
    const clientId = query.find(([key]) => key === 'client_id')?.[1];
    // Each such request may cost a fetch of the client's metadata document.
    if (clientId && isMetadataUrl(clientId)) await takeIpLimit(limits, 'oauthAuthorizeUrl', ctx);
    const checked = await checkAuthorizeRequest(core, query);
    if (isProblem(checked)) {
      if (checked.show === 'page') return showError(ctx, 400, checked.message);
      ctx.status = 303;
      return ctx.redirect(checked.to);
    }
    const browser = await signedIn(ctx);
    if (!browser) {
      ctx.status = 303;
      return ctx.redirect(`/signin?next=${encodeURIComponent(ctx.originalUrl)}`);
    }
    const csp = ctx.response.get('Content-Security-Policy');
    ctx.set('Content-Security-Policy', `${csp.replace(/form-action [^;]*/, `form-action 'self' ${redirectSource(checked.redirectUri)}`)}`.replace(/frame-ancestors [^;]*/, "frame-ancestors 'none'"));
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    ctx.body = consentPage(clientDist, { request: checked, person: browser.person, formToken: formToken(browser.session, checked, Date.now()), knownHost: knownHost(core, checked.client) });
  });

  router.post('/oauth/authorize', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (!sameOriginPost(ctx, hosts)) return showError(ctx, 403, 'This form was sent from another site, so it was refused.');
    if (!ctx.is('application/x-www-form-urlencoded')) return showError(ctx, 400, 'The consent form is sent as a form.');
    const form = [...new URLSearchParams(await readText(ctx, OAUTH_BODY_LIMIT))];
    const value = (name: string) => form.find(([key]) => key === name)?.[1];
    const browser = await signedIn(ctx);
    if (!browser) return showError(ctx, 403, 'You are not signed in here any more. Go back to the app and connect again.');
    const checked = await checkAuthorizeRequest(core, form.filter(([key]) => key !== 'form_token' && key !== 'decision'));
    if (isProblem(checked)) {
      if (checked.show === 'page') return showError(ctx, 400, checked.message);
      ctx.status = 303;
      return ctx.redirect(checked.to);
    }
    if (!formTokenGood(browser.session, checked, value('form_token'))) {
      return showError(ctx, 403, 'This consent page has expired or belongs to another sign-in. Go back to the app and connect again.');
    }
    ctx.status = 303;
    if (value('decision') !== 'allow') {
      return ctx.redirect(backToClient(core, checked.redirectUri, { error: 'access_denied', error_description: 'The person did not allow the connection.', state: checked.state }));
    }
    const code = await issueCode(core, { person: browser.person, client: checked.client, redirectUri: checked.redirectUri, codeChallenge: checked.codeChallenge, scopes: checked.scopes, resource: checked.resource });
    ctx.redirect(backToClient(core, checked.redirectUri, { code, state: checked.state }));
  });

  return router;
}

/**
 * A POST of our own consent form: the browser's Origin is ours, or with no Origin (or "null"), its Fetch
 * Metadata says same-origin. A request with neither is refused: every browser that can show the
 * form sends one of them.
 */
function sameOriginPost(ctx: Context, hosts: () => Set<string>): boolean {
  const origin = ctx.get('origin');
  // "null" is what a browser sends under some referrer policies; its Fetch Metadata then decides.
  if (origin && origin !== 'null') return URL.canParse(origin) && hosts().has(new URL(origin).host.toLowerCase());
  return ctx.get('sec-fetch-site') === 'same-origin';
}
