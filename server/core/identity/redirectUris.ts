import { OAuthError } from './oauthError.ts';

/** A client as the authorization server sees it: registered here, or described by its metadata document. */
export type OAuthClient = {
  id: string;
  /** As the client names itself: shown on consent, never trusted (oauthHosts.ts). */
  name: string | null;
  redirectUris: readonly string[];
  /** Set when the id is the https URL of a Client ID Metadata Document. */
  metadataUrl?: string | undefined;
};

export const MAX_REDIRECT_URIS = 10;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

const isLoopbackHttp = (url: URL) => url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
/** A private-use scheme in reverse-domain form (RFC 8252 section 7.1), such as `com.example.app:/cb`. */
const APP_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/i;

/** Why a redirect URI cannot be registered, or null: https, loopback http on any port, or a reverse-domain app scheme; never a fragment. */
export function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${JSON.stringify(uri.slice(0, 200))} is not an absolute URI.`;
  }
  if (url.hash || uri.includes('#')) return `${uri} has a fragment; a redirect URI may not.`;
  if (url.protocol === 'https:') return url.hostname ? null : `${uri} names no host.`;
  if (url.protocol === 'http:') return isLoopbackHttp(url) ? null : `${uri} is plain http off the loopback address; use https, or http://127.0.0.1 for a native app.`;
  if (APP_SCHEME.test(url.protocol)) return null;
  return `${uri} uses the scheme ${url.protocol}; use https, loopback http, or a reverse-domain app scheme such as com.example.app:/callback.`;
}

/**
 * Whether a redirect URI the client sent is one it registered: the exact string, except that a
 * loopback http URI may come back on any port (RFC 8252 section 7.3).
 */
export function redirectMatches(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return false;
  }
  if (!isLoopbackHttp(url)) return false;
  return registered.some((uri) => {
    const known = new URL(uri);
    if (!isLoopbackHttp(known) || known.hostname !== url.hostname) return false;
    known.port = url.port;
    return known.href === url.href;
  });
}

/** The redirect URIs of a registration or metadata document, checked; `field` names the OAuth error. */
export function checkRedirectUris(value: unknown, code: 'invalid_redirect_uri' | 'invalid_client_metadata'): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((uri) => typeof uri !== 'string')) {
    throw new OAuthError(code, 'redirect_uris must be a list of 1 to 10 URIs.');
  }
  if (value.length > MAX_REDIRECT_URIS) throw new OAuthError(code, `redirect_uris holds ${value.length} URIs; at most ${MAX_REDIRECT_URIS} are taken.`);
  for (const uri of value as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError(code, problem);
  }
  return value as string[];
}

