import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../../server/core/kernel/context.ts';
import { findClient, registerClient } from '../../server/core/identity/oauthClients.ts';
import { OAuthError } from '../../server/core/identity/oauthError.ts';
import { isMetadataUrl } from '../../server/core/identity/oauthHosts.ts';
import { exchangeCode, mcpResource, refreshTokens, revokeToken } from '../../server/core/identity/oauthTokens.ts';
import { readText } from '../http/body.ts';
import { networksOf, takeIpLimit, type IpLimits } from '../http/ipLimits.ts';
import { openCors } from '../http/middleware.ts';
import { OAUTH_BODY_LIMIT, oauthAnswers, readParams, type Params } from './oauthHttp.ts';

/** Hosts and native apps call these from anywhere, browsers included. */
const oauthCors = openCors({ methods: 'POST, OPTIONS', allowHeaders: 'Content-Type, Authorization, MCP-Protocol-Version', exposeHeaders: 'Retry-After, RateLimit' });

function required(params: Params, ...names: string[]): void {
  const missing = names.filter((name) => !params[name]);
  if (missing.length) throw new OAuthError('invalid_request', `Missing ${missing.join(', ')}.`);
}

/** The client registration, token and revocation endpoints of the authorization server (SPEC part 5 "OAuth 2.1"). */
export function oauthTokenRoutes(core: Core, limits: IpLimits): Router {
  const router = new Router();
  const paths = ['/oauth/register', '/oauth/token', '/oauth/revoke'];
  router.use(paths, oauthCors, oauthAnswers);
  // A preflight matches no POST route, so it is answered by a route of its own.
  for (const path of paths) router.options(path, oauthCors);

  router.post('/oauth/register', async (ctx) => {
    await takeIpLimit(limits, 'oauthRegister', ctx);
    let body: unknown;
    try {
      body = JSON.parse(await readText(ctx, OAUTH_BODY_LIMIT));
    } catch (error) {
      if (error instanceof SyntaxError) throw new OAuthError('invalid_client_metadata', 'The registration is a JSON object of client metadata (RFC 7591).');
      throw error;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'The registration is a JSON object of client metadata.');
    const metadata = body as Record<string, unknown>;
    // "Per client key": one app (its name and redirect hosts) from one network.
    await takeIpLimit(limits, 'oauthRegisterClient', ctx, registrationKey(ctx, metadata));
    ctx.status = 201;
    ctx.body = await registerClient(core, metadata);
  });

  router.post('/oauth/token', async (ctx) => {
    await takeIpLimit(limits, 'oauthToken', ctx);
    const params = await readParams(ctx, { json: true });
    if (params.client_id) await takeIpLimit(limits, 'oauthTokenClient', ctx, params.client_id);
    required(params, 'grant_type');
    if (params.resource !== undefined && params.resource !== mcpResource(core)) {
      throw new OAuthError('invalid_target', `Tokens here are for one resource, ${mcpResource(core)}.`);
    }
    if (params.grant_type === 'authorization_code') {
      required(params, 'code', 'code_verifier', 'client_id', 'redirect_uri');
      await requireKnownClient(core, params.client_id!);
      ctx.body = await exchangeCode(core, { code: params.code!, verifier: params.code_verifier!, clientId: params.client_id!, redirectUri: params.redirect_uri!, resource: params.resource });
      return;
    }
    if (params.grant_type === 'refresh_token') {
      required(params, 'refresh_token', 'client_id');
      await requireKnownClient(core, params.client_id!);
      ctx.body = await refreshTokens(core, { refreshToken: params.refresh_token!, clientId: params.client_id!, scope: params.scope, resource: params.resource });
      return;
    }
    throw new OAuthError('unsupported_grant_type', `grant_type ${params.grant_type} is not served; use authorization_code or refresh_token.`);
  });

  // RFC 7009: always 200, whether the token was known or not; a known one ends its whole grant.
  router.post('/oauth/revoke', async (ctx) => {
    const params = await readParams(ctx, { json: false });
    if (params.token) await revokeToken(core, params.token);
    ctx.status = 200;
    ctx.body = {};
  });

  return router;
}

/** A registered client must exist; a metadata-document client is checked against its code or grant instead of fetched again. */
async function requireKnownClient(core: Core, clientId: string) {
  if (isMetadataUrl(clientId)) return;
  if (!(await findClient(core, clientId))) throw new OAuthError('invalid_client', `No client ${clientId.slice(0, 100)} is registered here.`);
}

function registrationKey(ctx: Context, metadata: Record<string, unknown>): string {
  const name = typeof metadata.client_name === 'string' ? metadata.client_name.trim().toLowerCase().slice(0, 200) : '';
  const hosts = Array.isArray(metadata.redirect_uris)
    ? [...new Set(metadata.redirect_uris.map((uri) => (typeof uri === 'string' && URL.canParse(uri) ? new URL(uri).hostname : '')))].sort().join(',')
    : '';
  return `${networksOf(ctx.ip).network}|${name}|${hosts}`;
}
