import { createHash, randomBytes } from 'node:crypto';
import { request, type Reachable } from './server.ts';

/** A known assistant host's own callback (it counts as one by SPEC part 5 "Host label"), and an app's that does not. */
export const KNOWN_HOST_CALLBACK = 'https://claude.ai/api/mcp/auth_callback';
export const UNKNOWN_APP_CALLBACK = 'http://127.0.0.1:9/callback';

/**
 * An OAuth access token for an assistant host, made the way a host gets one: dynamic registration,
 * the person's consent on `/oauth/authorize` (signed in with `cookie`), and the code exchanged with
 * PKCE at `/oauth/token`, for the `/mcp` resource its protected-resource metadata names.
 */
export async function assistantToken(server: Reachable, cookie: string, options: { redirectUri?: string; scope?: string; name?: string } = {}): Promise<string> {
  const redirectUri = options.redirectUri ?? KNOWN_HOST_CALLBACK;
  const registered = await request(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: options.name ?? 'Test Assistant', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${registered.text}`);
  const clientId: string = registered.body.client_id;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  // The resource as the server names it (its base URL, which may not be the address the test reached).
  const resource: string = (await request(`${server.url}/.well-known/oauth-protected-resource/mcp`)).body.resource;
  const asked = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st',
    resource,
    ...(options.scope ? { scope: options.scope } : {}),
  });
  const consent = await fetch(`${server.url}/oauth/authorize?${asked}`, { headers: { cookie }, redirect: 'manual' });
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`consent page: ${consent.status} ${html.slice(0, 300)}`);
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.append(name!, unescapeHtml(value!));
  form.set('decision', 'allow');
  const allowed = await fetch(`${server.url}/oauth/authorize`, {
    method: 'POST',
    headers: { cookie, origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  });
  const location = allowed.headers.get('location');
  const code = location ? new URL(location).searchParams.get('code') : null;
  if (!code) throw new Error(`consent refused: ${allowed.status} ${location ?? (await allowed.text()).slice(0, 300)}`);
  const exchanged = await request(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: redirectUri, resource }).toString(),
  });
  if (exchanged.status !== 200) throw new Error(`token exchange failed: ${exchanged.status} ${exchanged.text}`);
  return exchanged.body.access_token;
}

const unescapeHtml = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
