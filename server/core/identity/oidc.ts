import * as client from 'openid-client';
import type { Config } from '../../config.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, forbidden } from '../../../schema/errors.ts';
import { openSession } from './credentials.ts';

/**
 * Sign-in through an OpenID provider (SVC_OIDC_ISSUER): authorization code with PKCE (S256), a state
 * and a nonce, through openid-client. The provider proves the address; the service issues its own
 * session, as for a code sign-in: the person with that address (made when new), verified.
 */

const discovered = new WeakMap<Config, Promise<client.Configuration>>();

function providerOf(config: Config): Promise<client.Configuration> {
  const oidc = config.oidc;
  if (!oidc) throw new AppError('not_found', 'No sign-in provider is set up here; sign in with an emailed code at /signin.');
  let found = discovered.get(config);
  if (!found) {
    const issuer = new URL(oidc.issuer);
    // Plain http only for a provider on a development machine.
    const execute = issuer.protocol === 'http:' && !config.production ? [client.allowInsecureRequests] : [];
    found = client.discovery(issuer, oidc.clientId, oidc.clientSecret, oidc.clientSecret ? undefined : client.None(), { execute, timeout: 10 });
    found.catch(() => discovered.delete(config));
    discovered.set(config, found);
  }
  return found;
}

const unreachable = () => new AppError('busy', 'The sign-in provider did not answer. Try again in a minute.', { retry_after_seconds: 60, retryAfterSeconds: 60 });

/** What the browser keeps between leaving for the provider and coming back (an HttpOnly cookie). */
export type OidcPending = { state: string; verifier: string; nonce: string };

export const redirectUri = (config: Config) => `${config.baseUrl}/auth/callback`;

/** The provider's sign-in address for a new attempt, and what the callback must find again. */
export async function startOidc(core: Core): Promise<{ url: string; pending: OidcPending }> {
  const provider = await providerOf(core.config).catch((error) => {
    if (error instanceof AppError) throw error;
    throw unreachable();
  });
  const pending = { state: client.randomState(), verifier: client.randomPKCECodeVerifier(), nonce: client.randomNonce() };
  const url = client.buildAuthorizationUrl(provider, {
    redirect_uri: redirectUri(core.config),
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { url: url.href, pending };
}

/**
 * Finishes at /auth/callback: the code is exchanged with the verifier, state and nonce checked, and
 * the provider must say the address is verified. Any failure is `forbidden` with what to do next.
 */
export async function finishOidc(core: Core, callbackUrl: URL, pending: OidcPending | null) {
  if (!pending) throw forbidden('This sign-in was not started in this browser, or took over 10 minutes. Start again at /signin.');
  const provider = await providerOf(core.config).catch(() => {
    throw unreachable();
  });
  let claims: Record<string, unknown>;
  try {
    const tokens = await client.authorizationCodeGrant(provider, callbackUrl, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
    const idClaims: Record<string, unknown> & { sub: string } = { ...tokens.claims()! };
    // Providers may keep the email out of the ID token and give it at the userinfo endpoint.
    claims = typeof idClaims.email === 'string' ? idClaims : { ...idClaims, ...(await client.fetchUserInfo(provider, tokens.access_token, idClaims.sub)) };
  } catch (error) {
    core.log.warn('oidc sign-in refused', { reason: (error as { code?: string }).code ?? (error as Error).name });
    throw forbidden('The sign-in provider did not confirm this sign-in. Start again at /signin.');
  }
  if (typeof claims.email !== 'string' || claims.email_verified !== true) {
    throw forbidden('The sign-in provider did not give a verified email address, which this service needs. Sign in with an emailed code at /signin instead.');
  }
  const email = claims.email;
  const name = (typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim() : email.split('@')[0]!).slice(0, 80);
  return core.db.write((tx) => openSession(tx, { name, email, verified: true }));
}
