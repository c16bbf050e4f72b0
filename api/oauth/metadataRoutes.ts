import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../../server/core/kernel/context.ts';
import { ALL_SCOPES, mcpResource } from '../../server/core/identity/oauthTokens.ts';
import { openCors } from '../http/middleware.ts';

const discoveryCors = openCors({ methods: 'GET, OPTIONS', allowHeaders: 'Content-Type, MCP-Protocol-Version', exposeHeaders: '' });

/** RFC 9728: what protects `/mcp`, and where its authorization server is. */
export const protectedResourceMetadata = (core: Core) => ({
  resource: mcpResource(core),
  authorization_servers: [core.config.baseUrl],
  scopes_supported: [...ALL_SCOPES],
  bearer_methods_supported: ['header'],
  resource_name: 'Dotpad',
  resource_documentation: `${core.config.baseUrl}/llms.txt`,
});

/** RFC 8414, exactly the fields of SPEC part 5 "OAuth 2.1" (no OpenID discovery). */
export const authorizationServerMetadata = (core: Core) => {
  const base = core.config.baseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...ALL_SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
};

/** The discovery documents of OAuth: any origin may read them; they change only with the base URL. */
export function oauthMetadataRoutes(core: Core): Router {
  const router = new Router();
  const serve = (body: () => object) => (ctx: Context) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body();
  };
  const documents: [string, () => object][] = [
    ['/.well-known/oauth-protected-resource', () => protectedResourceMetadata(core)],
    ['/.well-known/oauth-protected-resource/mcp', () => protectedResourceMetadata(core)],
    ['/.well-known/oauth-authorization-server', () => authorizationServerMetadata(core)],
  ];
  for (const [path, body] of documents) {
    router.get(path, discoveryCors, serve(body));
    router.options(path, discoveryCors);
  }
  return router;
}
