import type { Scope } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import { findClient, type OAuthClient } from '../../server/core/identity/oauthClients.ts';
import { OAuthError } from '../../server/core/identity/oauthError.ts';
import { redirectMatches } from '../../server/core/identity/redirectUris.ts';
import { grantedScopes, mcpResource } from '../../server/core/identity/oauthTokens.ts';

/** A checked authorization request (SPEC part 5 "OAuth 2.1"), as the consent page shows it and its POST carries it. */
export type AuthorizeRequest = {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  scopes: Scope[];
  resource: string;
  state: string | undefined;
};

/**
 * What went wrong, and how it may be told. Until the client and its redirect URI are known good, an
 * error is shown as a page and never redirected (RFC 6749 section 4.1.2.1): the redirect could be an
 * attacker's. After that, it goes back to the client, with `state` and `iss`.
 */
export type AuthorizeProblem = { show: 'page'; message: string } | { show: 'redirect'; to: string };

/** The client's redirect URI with these parameters, `iss` (RFC 9207) always among them. */
export function backToClient(core: Core, redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  url.searchParams.set('iss', core.config.baseUrl);
  return url.href;
}

/** Checks an authorization request, in the order that decides whether its errors may be redirected. */
export async function checkAuthorizeRequest(core: Core, entries: Iterable<[string, string]>): Promise<AuthorizeRequest | AuthorizeProblem> {
  const all = [...entries];
  const first = (name: string) => all.find(([key]) => key === name)?.[1];
  const times = (name: string) => all.filter(([key]) => key === name).length;
  if (times('client_id') !== 1) return { show: 'page', message: times('client_id') ? 'The request repeats client_id.' : 'The request names no client_id.' };
  if (times('redirect_uri') !== 1) {
    return { show: 'page', message: times('redirect_uri') ? 'The request repeats redirect_uri.' : 'The request names no redirect_uri; it must be one the app registered.' };
  }
  const clientId = first('client_id')!;
  const redirectUri = first('redirect_uri')!;
  let client: OAuthClient | null;
  try {
    client = await findClient(core, clientId);
  } catch (error) {
    if (error instanceof OAuthError) return { show: 'page', message: error.message };
    throw error;
  }
  if (!client) return { show: 'page', message: `No app ${JSON.stringify(clientId.slice(0, 100))} is registered here.` };
  if (!redirectMatches(client.redirectUris, redirectUri)) {
    return { show: 'page', message: `The redirect URI ${JSON.stringify(redirectUri.slice(0, 300))} is not one this app registered, so this server will not send you there.` };
  }
  const state = times('state') === 1 ? first('state') : undefined;
  const refuse = (error: string, description: string): AuthorizeProblem => ({ show: 'redirect', to: backToClient(core, redirectUri, { error, error_description: description, state }) });
  const repeated = [...new Set(all.map(([key]) => key))].find((key) => times(key) > 1);
  if (repeated) return refuse('invalid_request', `The parameter ${repeated} is sent more than once.`);
  if (first('response_type') !== 'code') return refuse('unsupported_response_type', 'Only response_type=code is served.');
  const challenge = first('code_challenge');
  if (first('code_challenge_method') !== 'S256') return refuse('invalid_request', 'PKCE is required with code_challenge_method=S256; plain is refused.');
  if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) return refuse('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).');
  const resource = first('resource') ?? mcpResource(core);
  if (resource !== mcpResource(core)) return refuse('invalid_target', `Tokens here are for one resource, ${mcpResource(core)}.`);
  let scopes: Scope[];
  try {
    scopes = grantedScopes(first('scope'));
  } catch (error) {
    return refuse('invalid_scope', (error as Error).message);
  }
  return { client, redirectUri, codeChallenge: challenge, scopes, resource, state };
}

export const isProblem = (checked: AuthorizeRequest | AuthorizeProblem): checked is AuthorizeProblem => 'show' in checked;
