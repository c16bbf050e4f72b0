import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import * as oauth from 'oauth4webapi';
import { sql } from 'slonik';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTool, mcpClient, poke, request, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * SPEC part 5 "OAuth 2.1": the whole flow driven by oauth4webapi as a strict client (discovery,
 * registration, PKCE, sign-in, consent, code, refresh rotation, revocation) and the token used on
 * /mcp with the MCP SDK's client; then raw requests for every refusal, and client metadata documents
 * behind the SSRF guard.
 */

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT = 'http://127.0.0.1:7777/callback';

/** The hidden fields of the consent page's form. */
function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1]!] = match[2]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  return fields;
}

const noRedirect = { redirect: 'manual' } as const;

describe.each(stores())('OAuth 2.1 on %s', (store) => {
  let server: TestServer;
  let base: string;
  let person: { cookie: string; id: string };

  beforeAll(async () => {
    server = await startTestServer(store);
    base = server.core.config.baseUrl;
    person = await signIn(server, 'Olive', `olive-${randomUUID()}@example.com`);
  });
  afterAll(async () => {
    await server?.close();
  });

  const register = (body: unknown) =>
    request(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const token = (params: Record<string, string>, type: 'form' | 'json' = 'form') =>
    request(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': type === 'form' ? 'application/x-www-form-urlencoded' : 'application/json' },
      body: type === 'form' ? new URLSearchParams(params).toString() : JSON.stringify(params),
    });

  /** Opens the consent page signed in, and answers it; the 303's Location. */
  async function consent(authorizeUrl: string, decision: 'allow' | 'deny' = 'allow', cookie = person.cookie): Promise<URL> {
    const page = await request(authorizeUrl, { headers: { cookie }, ...noRedirect });
    expect(page.status, page.text).toBe(200);
    const answered = await request(`${base}/oauth/authorize`, {
      method: 'POST',
      headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formFields(page.text), decision }).toString(),
      ...noRedirect,
    });
    expect(answered.status, answered.text).toBe(303);
    return new URL(answered.headers.get('location')!);
  }

  /** A registered client and a code for it, through raw requests. */
  async function codeFor(options: { scope?: string; redirect?: string } = {}) {
    const client = (await register({ client_name: 'Raw client', redirect_uris: [REDIRECT] })).body;
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(`${base}/oauth/authorize`);
    const params = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: options.redirect ?? REDIRECT,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'st',
      ...(options.scope ? { scope: options.scope } : {}),
    };
    url.search = new URLSearchParams(params).toString();
    const back = await consent(url.href);
    return { client, verifier, code: back.searchParams.get('code')!, redirect: params.redirect_uri };
  }
  const exchange = (got: { client: { client_id: string }; verifier: string; code: string; redirect: string }, more: Record<string, string> = {}) =>
    token({ grant_type: 'authorization_code', code: got.code, code_verifier: got.verifier, client_id: got.client.client_id, redirect_uri: got.redirect, ...more });

  it('goes the whole way with a strict client: discovery, registration, PKCE, consent, code, /mcp, refresh, revoke', async () => {
    // The 401 of /mcp names the resource metadata, which names the authorization server.
    const unauthenticated = await request(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthenticated.status).toBe(401);
    const challenge = unauthenticated.headers.get('www-authenticate')!;
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const resource = new URL(`${base}/mcp`);
    const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
    expect(rs.authorization_servers).toEqual([base]);
    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    expect(as.code_challenge_methods_supported).toEqual(['S256']);

    const client = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Strict Host', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure),
    );
    expect(client.client_id).toMatch(/^client_/);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint!);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      scope: 'svc:read svc:write',
      resource: resource.href,
      state,
    }).toString();

    // Signed out, the person is sent to sign in, and back here after.
    const signedOut = await request(authorize.href, noRedirect);
    expect(signedOut.status).toBe(303);
    const signin = new URL(signedOut.headers.get('location')!, base);
    expect(signin.pathname).toBe('/signin');
    expect(signin.searchParams.get('next')).toBe(authorize.pathname + authorize.search);

    const back = await consent(authorize.href);
    const params = oauth.validateAuthResponse(as, client, back, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { ...insecure, additionalParameters: { resource: resource.href } });
    expect(response.headers.get('cache-control')).toContain('no-store');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(tokens.access_token).toMatch(/^svco_/);
    expect(tokens.refresh_token).toMatch(/^svcr_/);
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('svc:read svc:write');

    // Only hashes are stored.
    const stored = await server.core.db.pool.anyFirst(sql.unsafe`SELECT token_hash FROM oauth_tokens`);
    expect(stored).toContain(createHash('sha256').update(tokens.access_token).digest('hex'));
    expect(stored).not.toContain(tokens.access_token);

    // The token on /mcp, with the MCP SDK's client: the person acts as themselves.
    const mcp = await mcpClient(server, tokens.access_token);
    const created = await mcp.callTool({ name: 'create_hub', arguments: { name: 'Olive via host' } });
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    await mcp.close();
    // And on REST and the export door.
    const inbox = await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(inbox.status, inbox.text).toBe(200);

    // Refresh rotation: a new pair; the older access token stops.
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` }, body: '{}' })).status).toBe(401);
    expect((await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${refreshed.access_token}` }, body: '{}' })).status).toBe(200);

    // Settings lists the app; revoking the refresh token ends the whole grant at once.
    const overview = await request(`${server.url}/api/settings/credentials`, { method: 'POST', headers: { cookie: person.cookie, 'x-svc': '1', origin: server.url, 'content-type': 'application/json' }, body: '{}' });
    expect(overview.body.apps).toEqual([expect.objectContaining({ client_name: 'Strict Host', host: '127.0.0.1:7777', verified: false })]);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure));
    const after = await request(`${base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${refreshed.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('lets the MCP SDK client connect with its own OAuth support', async () => {
    let client: OAuthClientInformationMixed | undefined;
    let saved: OAuthTokens | undefined;
    let verifier = '';
    let sentTo: URL | undefined;
    const provider: OAuthClientProvider = {
      redirectUrl: REDIRECT,
      clientMetadata: { client_name: 'SDK Host', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
      clientInformation: () => client,
      saveClientInformation: (info) => void (client = info),
      tokens: () => saved,
      saveTokens: (tokens) => void (saved = tokens),
      redirectToAuthorization: (url) => void (sentTo = url),
      saveCodeVerifier: (value) => void (verifier = value),
      codeVerifier: () => verifier,
    };
    const mcpUrl = new URL(`${base}/mcp`);
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe('REDIRECT');
    expect(sentTo!.searchParams.get('resource')).toBe(mcpUrl.href);
    const back = await consent(sentTo!.href);
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: back.searchParams.get('code')! })).toBe('AUTHORIZED');
    const sdk = new Client({ name: 'sdk-oauth', version: '1.0.0' });
    await sdk.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const listed = await sdk.callTool({ name: 'check_inbox', arguments: {} });
    expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
    await sdk.close();
  });

  it('publishes exactly the metadata of the spec', async () => {
    const as = (await request(`${base}/.well-known/oauth-authorization-server`)).body;
    expect(Object.keys(as).sort()).toEqual(
      [
        'issuer', 'authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint', 'response_types_supported', 'grant_types_supported',
        'code_challenge_methods_supported', 'token_endpoint_auth_methods_supported', 'scopes_supported', 'client_id_metadata_document_supported',
        'authorization_response_iss_parameter_supported',
      ].sort(),
    );
    expect(as.token_endpoint_auth_methods_supported).toEqual(['none']);
    const prm = (await request(`${base}/.well-known/oauth-protected-resource`)).body;
    expect(prm.resource).toBe(`${base}/mcp`);
    expect((await request(`${base}/.well-known/oauth-protected-resource/mcp`)).body).toEqual(prm);
    expect((await request(`${base}/.well-known/openid-configuration`)).status).toBe(404);
    // Browser-based hosts may call the endpoints from any origin.
    const preflight = await request(`${base}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://host.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect((await request(`${base}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://host.example' } })).headers.get('access-control-allow-origin')).toBe('*');
  });

  it('registers public clients only, with redirect URIs of the three kinds', async () => {
    for (const uri of ['https://app.example.com/cb', 'http://127.0.0.1/cb', 'http://localhost:3000/cb', 'com.example.app:/cb']) {
      expect((await register({ redirect_uris: [uri] })).status, uri).toBe(201);
    }
    for (const uri of ['http://app.example.com/cb', 'https://app.example.com/cb#x', 'javascript:alert(1)', 'myapp:/cb', 'not a uri']) {
      const refused = await register({ redirect_uris: [uri] });
      expect(refused.status, uri).toBe(400);
      expect(refused.body.error).toBe('invalid_redirect_uri');
    }
    expect((await register({ redirect_uris: [] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' })).body.error).toBe('invalid_client_metadata');
    expect((await register({ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] })).body.error).toBe('invalid_client_metadata');
    const tooBig = await register({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(21 * 1024) });
    expect(tooBig.status).toBe(413);
  });

  it('refuses PKCE missing, plain or wrong; redirect near misses as pages; wrong resource and response types', async () => {
    const client = (await register({ client_name: 'Picky', redirect_uris: [REDIRECT, 'https://app.example.com/cb'] })).body;
    const verifier = oauth.generateRandomCodeVerifier();
    const good = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'https://app.example.com/cb',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'abc',
    };
    const authorize = (params: Record<string, string>, extra = '') =>
      request(`${base}/oauth/authorize?${new URLSearchParams(params).toString()}${extra}`, { headers: { cookie: person.cookie }, ...noRedirect });
    const redirectedError = async (params: Record<string, string>, extra = '') => {
      const reply = await authorize(params, extra);
      expect(reply.status, reply.text).toBe(303);
      const to = new URL(reply.headers.get('location')!);
      expect(to.origin + to.pathname).toBe('https://app.example.com/cb');
      expect(to.searchParams.get('iss')).toBe(base);
      expect(to.searchParams.get('state')).toBe('abc');
      return to.searchParams.get('error');
    };
    expect((await authorize(good)).status).toBe(200);
    const { code_challenge: _c, ...noChallenge } = good;
    expect(await redirectedError(noChallenge)).toBe('invalid_request');
    expect(await redirectedError({ ...good, code_challenge_method: 'plain' })).toBe('invalid_request');
    const { code_challenge_method: _m, ...noMethod } = good;
    expect(await redirectedError(noMethod)).toBe('invalid_request');
    expect(await redirectedError({ ...good, response_type: 'token' })).toBe('unsupported_response_type');
    expect(await redirectedError({ ...good, resource: `${base}/api` })).toBe('invalid_target');
    expect(await redirectedError({ ...good, scope: 'svc:admin' })).toBe('invalid_scope');
    expect(await redirectedError(good, '&scope=svc:read&scope=svc:write')).toBe('invalid_request');

    // Near misses of the redirect URI are shown as a page and never followed.
    for (const near of ['https://app.example.com/cb/', 'https://app.example.com/cb?x=1', 'https://app.example.com:444/cb', 'https://APP.example.com.evil.test/cb', 'http://app.example.com/cb', 'http://127.0.0.1:7777/callbackx', 'http://localhost:7777/callback']) {
      const reply = await authorize({ ...good, redirect_uri: near });
      expect(reply.status, near).toBe(400);
      expect(reply.headers.get('location'), near).toBeNull();
      expect(reply.text).toContain('not one this app registered');
    }
    // A loopback redirect may come back on another port (RFC 8252).
    expect((await authorize({ ...good, redirect_uri: 'http://127.0.0.1:9/callback' })).status).toBe(200);
    // Unknown client, or client_id repeated: a page too.
    expect((await authorize({ ...good, client_id: 'client_nobody' })).status).toBe(400);
    expect((await authorize(good, `&client_id=${client.client_id}`)).status).toBe(400);

    // The consent page cannot be framed, and its form posts only here and to the client.
    const page = await authorize(good);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://app.example.com");

    // Denied: access_denied with state and iss.
    const denied = await consent(`${base}/oauth/authorize?${new URLSearchParams(good)}`, 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('iss')).toBe(base);
  });

  it('refuses a consent POST from another site, without the form token, or of another session', async () => {
    const client = (await register({ client_name: 'Forged', redirect_uris: [REDIRECT] })).body;
    const query = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' });
    const page = await request(`${base}/oauth/authorize?${query}`, { headers: { cookie: person.cookie } });
    const fields = formFields(page.text);
    const post = (headers: Record<string, string>, body: Record<string, string>) =>
      request(`${base}/oauth/authorize`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body).toString(), ...noRedirect });
    expect((await post({ cookie: person.cookie, origin: 'https://evil.example' }, { ...fields, decision: 'allow' })).status).toBe(403);
    expect((await post({ cookie: person.cookie }, { ...fields, decision: 'allow' })).status).toBe(403);
    const { form_token: _t, ...noToken } = fields;
    expect((await post({ cookie: person.cookie, origin: base }, { ...noToken, decision: 'allow' })).status).toBe(403);
    const other = await signIn(server, 'Mallory', `mallory-${randomUUID()}@example.com`);
    expect((await post({ cookie: other.cookie, origin: base }, { ...fields, decision: 'allow' })).status).toBe(403);
    // The form token is bound to the request it showed: a changed scope is refused.
    expect((await post({ cookie: person.cookie, origin: base }, { ...fields, scope: 'svc:read', decision: 'allow' })).status).toBe(403);
    expect((await post({ cookie: person.cookie, 'sec-fetch-site': 'same-origin' }, { ...fields, decision: 'allow' })).status).toBe(303);
  });

  it('exchanges a code once, in 120 s, with the right verifier and redirect; a reuse revokes what it gave', async () => {
    const got = await codeFor();
    expect((await exchange(got, { code_verifier: oauth.generateRandomCodeVerifier() })).body.error).toBe('invalid_grant');
    expect((await exchange(got, { redirect_uri: 'http://127.0.0.1:7778/callback' })).body.error).toBe('invalid_grant');
    expect((await exchange(got, { resource: `${base}/other` })).body.error).toBe('invalid_target');
    const first = await exchange(got);
    expect(first.status, first.text).toBe(200);
    const again = await exchange(got);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${first.body.access_token}` }, body: '{}' })).status).toBe(401);
    expect((await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: got.client.client_id })).body.error).toBe('invalid_grant');

    const late = await codeFor();
    const now = Date.now();
    server.core.pace.now = () => now + 121_000;
    try {
      expect((await exchange(late)).body.error).toBe('invalid_grant');
    } finally {
      server.core.pace.now = () => Date.now();
    }
  });

  it('rotates refresh tokens: a reuse within 3 s is a race, later it revokes the grant', async () => {
    const got = await codeFor();
    const first = (await exchange(got, {}, )).body;
    let now = Date.now();
    server.core.pace.now = () => now;
    try {
      const refresh = (refreshToken: string) => token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: got.client.client_id }, 'json');
      const second = await refresh(first.refresh_token);
      expect(second.status, second.text).toBe(200);
      now += 2_000;
      const race = await refresh(first.refresh_token);
      expect(race.body.error).toBe('invalid_grant');
      // The race changed nothing: the new pair still works.
      expect((await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${second.body.access_token}` }, body: '{}' })).status).toBe(200);
      now += 2_000;
      const theft = await refresh(first.refresh_token);
      expect(theft.body.error).toBe('invalid_grant');
      const revoked = await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${second.body.access_token}` }, body: '{}' });
      expect(revoked.status).toBe(401);
      expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant');
    } finally {
      server.core.pace.now = () => Date.now();
    }
  });

  it('answers unsupported grants, duplicate parameters and unknown clients in OAuth’s shape', async () => {
    const unsupported = await token({ grant_type: 'client_credentials', client_id: 'client_x' });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    const duplicated = await request(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=client_x' });
    expect(duplicated.body.error).toBe('invalid_request');
    const unknown = await token({ grant_type: 'refresh_token', refresh_token: 'svcr_nothing', client_id: 'client_nobody' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_client');
    expect((await token({ grant_type: 'refresh_token', refresh_token: 'svcr_x', client_id: 'client_x', resource: 'https://elsewhere.example/mcp' })).body.error).toBe('invalid_target');
    const revoke = await request(`${base}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=svcr_unknown' });
    expect(revoke.status).toBe(200);
  });

  it('holds a token to its scopes, its resource, and the person’s standing', async () => {
    const got = await codeFor({ scope: 'svc:read' });
    const tokens = (await exchange(got)).body;
    expect(tokens.scope).toBe('svc:read');
    const bearer = { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' };
    expect((await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: bearer, body: '{}' })).status).toBe(200);
    const write = await request(`${base}/api/v1/tools/create_hub`, { method: 'POST', headers: bearer, body: JSON.stringify({ name: 'Not allowed' }) });
    expect(write.status).toBe(403);
    expect(write.body.error).toBe('forbidden');
    expect(write.body.message).toContain('svc:write');

    // Markdown views and exports take it as they take an agent key: the person's private hub reads.
    const hub = await appTool(server, person.cookie, 'create_hub', { name: `Private ${randomUUID().slice(0, 8)}` });
    expect(hub.status, hub.text).toBe(200);
    const view = await request(`${base}/h/${hub.body.data.slug}?format=md`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(view.status, view.text).toBe(200);
    expect((await request(`${base}/h/${hub.body.data.slug}?format=md`)).status).toBe(404);

    // Issued for another resource: refused, saying so.
    await poke(server, sql.unsafe`UPDATE oauth_grants SET resource = 'https://elsewhere.example/mcp' WHERE id = (SELECT grant_id FROM oauth_tokens WHERE token_hash = ${createHash('sha256').update(tokens.access_token).digest('hex')})`);
    const other = await request(`${base}/mcp`, { method: 'POST', headers: { ...bearer, accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(other.status).toBe(401);
    expect(other.body.error_description).toContain('https://elsewhere.example/mcp');
    expect(other.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('refuses the token and its refresh while the person is suspended', async () => {
    const someone = await signIn(server, 'Sus', `sus-${randomUUID()}@example.com`);
    const client = (await register({ client_name: 'Sus host', redirect_uris: [REDIRECT] })).body;
    const verifier = oauth.generateRandomCodeVerifier();
    const url = `${base}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })}`;
    const code = (await consent(url, 'allow', someone.cookie)).searchParams.get('code')!;
    const tokens = (await token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: client.client_id, redirect_uri: REDIRECT })).body;
    await poke(server, sql.unsafe`INSERT INTO suspensions (participant_id, suspended_by) VALUES (${someone.id}, ${person.id})`);
    const refused = await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toContain('suspended');
    expect((await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id })).body.error).toBe('invalid_grant');
  });
});

/** A loopback server standing in for a client's own site: its metadata document and its tricks. */
async function metadataFixture() {
  const routes = new Map<string, (res: http.ServerResponse) => void>();
  const server = http.createServer((req, res) => {
    const route = routes.get(req.url ?? '');
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const json = (body: unknown, headers: Record<string, string> = {}) => (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
  return { server, origin, routes, json, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('client metadata documents behind the SSRF guard', () => {
  let fixture: Awaited<ReturnType<typeof metadataFixture>>;
  let server: TestServer;
  let base: string;
  let person: { cookie: string; id: string };

  beforeAll(async () => {
    fixture = await metadataFixture();
    // TESTS ONLY: the fixture's loopback origin may serve documents over http.
    server = await startTestServer('pglite', { SVC_TEST_CLIENT_METADATA_ORIGINS: fixture.origin });
    base = server.core.config.baseUrl;
    person = await signIn(server, 'Meta', `meta-${randomUUID()}@example.com`);
  });
  afterAll(async () => {
    await server?.close();
    await fixture?.close();
  });

  const authorize = (clientId: string, redirect = 'https://meta.example/cb') =>
    request(
      `${base}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirect, code_challenge: 'b'.repeat(43), code_challenge_method: 'S256' })}`,
      { headers: { cookie: person.cookie }, redirect: 'manual' },
    );

  it('uses a document whose client_id is its own URL, and shows the app as unverified', async () => {
    const id = `${fixture.origin}/good.json`;
    fixture.routes.set('/good.json', fixture.json({ client_id: id, client_name: 'Meta App', redirect_uris: ['https://meta.example/cb'] }));
    const page = await authorize(id);
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain('Meta App');
    expect(page.text).toContain('Unverified app');
    // A gzip-encoded document is read after decoding.
    const zipped = `${fixture.origin}/zipped.json`;
    fixture.routes.set('/zipped.json', fixture.json(gzipSync(JSON.stringify({ client_id: zipped, client_name: 'Zipped', redirect_uris: ['https://meta.example/cb'] })), { 'content-encoding': 'gzip' }));
    expect((await authorize(zipped)).status).toBe(200);
  });

  it('refuses loopback and private addresses, on every hop, and documents that do not fit', async () => {
    const port = new URL(fixture.origin).port;
    const refusedWith = async (clientId: string, words: string) => {
      const reply = await authorize(clientId);
      expect(reply.status, clientId).toBe(400);
      expect(reply.headers.get('location')).toBeNull();
      expect(reply.text, clientId).toContain(words);
    };
    await refusedWith(`https://127.0.0.1:${port}/good.json`, 'not a public address');
    await refusedWith(`https://[::1]:${port}/good.json`, 'not a public address');
    await refusedWith(`https://localhost:${port}/good.json`, 'not a public address');
    await refusedWith('https://169.254.169.254/latest/meta-data.json', 'not a public address');
    await refusedWith('https://10.1.2.3/client.json', 'not a public address');
    // An allowed first hop may not lead anywhere else on loopback.
    fixture.routes.set('/hop.json', (res) => res.writeHead(302, { location: `https://127.0.0.1:${port}/good.json` }).end());
    await refusedWith(`${fixture.origin}/hop.json`, 'not a public address');
    fixture.routes.set('/hop-http.json', (res) => res.writeHead(302, { location: 'http://example.com/client.json' }).end());
    await refusedWith(`${fixture.origin}/hop-http.json`, 'rather than https');
    const other = `${fixture.origin}/other.json`;
    fixture.routes.set('/other.json', fixture.json({ client_id: 'https://someone.else/client.json', redirect_uris: ['https://meta.example/cb'] }));
    await refusedWith(other, 'client_id is not its own URL');
    const big = `${fixture.origin}/big.json`;
    fixture.routes.set('/big.json', fixture.json({ client_id: big, redirect_uris: ['https://meta.example/cb'], pad: 'x'.repeat(25 * 1024) }));
    await refusedWith(big, 'over 20 KB');
    const bomb = `${fixture.origin}/bomb.json`;
    fixture.routes.set('/bomb.json', fixture.json(gzipSync(' '.repeat(2_000_000)), { 'content-encoding': 'gzip' }));
    await refusedWith(bomb, 'over 20 KB');
    const many = `${fixture.origin}/many.json`;
    fixture.routes.set('/many.json', fixture.json({ client_id: many, redirect_uris: Array.from({ length: 11 }, (_, i) => `https://meta.example/${i}`) }));
    await refusedWith(many, 'at most 10');
    await refusedWith('http://example.com/client.json', 'https');
  });
});

describe('per-IP limits of the OAuth routes', () => {
  let server: TestServer;
  let base: string;
  beforeAll(async () => {
    server = await startTestServer('pglite');
    base = server.core.config.baseUrl;
  });
  afterAll(async () => {
    await server?.close();
  });

  const expectLimited = (reply: { status: number; headers: Headers; text: string }) => {
    expect(reply.status, reply.text).toBe(429);
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(reply.headers.get('ratelimit')).toMatch(/^"ip";r=0;t=\d+$/);
  };

  it('registers 30 an hour per client key, then 429', async () => {
    const register = () => request(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Flood', redirect_uris: ['https://flood.example/cb'] }) });
    for (let i = 0; i < 30; i++) expect((await register()).status).toBe(201);
    expectLimited(await register());
    // Another app from the same network is counted apart.
    expect((await request(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Calm', redirect_uris: ['https://calm.example/cb'] }) })).status).toBe(201);
  });

  it('takes 300 token requests a minute per client, then 429', async () => {
    const tokenCall = () => request(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=svcr_x&client_id=client_busy' });
    for (let i = 0; i < 300; i++) expect((await tokenCall()).status).toBe(401);
    expectLimited(await tokenCall());
  });

  it('takes 60 authorizations with a URL client_id per 10 minutes, then 429', async () => {
    const call = () => request(`${base}/oauth/authorize?client_id=${encodeURIComponent('https://127.0.0.1/c.json')}&redirect_uri=https://x.example/cb`, { redirect: 'manual' });
    for (let i = 0; i < 60; i++) expect((await call()).status).toBe(400);
    expectLimited(await call());
  });
});
