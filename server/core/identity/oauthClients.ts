import { sql } from 'slonik';
import { z } from 'zod';
import type { Core } from '../kernel/context.ts';
import { newId } from '../kernel/secrets.ts';
import { fetchClientMetadata } from './clientMetadata.ts';
import { checkRedirectUris, type OAuthClient } from './redirectUris.ts';
import { OAuthError } from './oauthError.ts';
import { isMetadataUrl, knownHostOf } from './oauthHosts.ts';

/** The host shown for a client: its metadata URL's host, else its redirect URIs' (an app scheme for a native app). */
export function clientHost(client: Pick<OAuthClient, 'redirectUris' | 'metadataUrl'>): string {
  if (client.metadataUrl) return new URL(client.metadataUrl).host;
  const hosts = [...new Set(client.redirectUris.map((uri) => ((url) => url.host || url.protocol.replace(/:$/, ''))(new URL(uri))))];
  return hosts.join(', ');
}

/** The name shown for a client: its own, marked as such by the consent page, or its host. */
export const clientName = (client: OAuthClient) => client.name?.trim() || clientHost(client);

export const knownHost = (core: Core, client: OAuthClient) => knownHostOf(core.config, { clientId: client.id, redirectUris: client.redirectUris });

const Registration = z.looseObject({
  client_name: z.string().trim().max(200).optional(),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  scope: z.string().max(500).optional(),
});

/**
 * Dynamic client registration (RFC 7591): public clients only, so no secret is issued and
 * `token_endpoint_auth_method` is `none`; only the authorization code and refresh grants.
 */
export async function registerClient(core: Core, body: Record<string, unknown>) {
  const redirectUris = checkRedirectUris(body.redirect_uris, 'invalid_redirect_uri');
  const parsed = Registration.safeParse(body);
  if (!parsed.success) throw new OAuthError('invalid_client_metadata', parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
  const metadata = parsed.data;
  if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== 'none') {
    throw new OAuthError('invalid_client_metadata', 'Only public clients register here: token_endpoint_auth_method must be "none" (PKCE stands in for a secret).');
  }
  const grants = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
  if (grants.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold only authorization_code and refresh_token.');
  }
  if ((metadata.response_types ?? ['code']).some((type) => type !== 'code')) throw new OAuthError('invalid_client_metadata', 'response_types may hold only code.');
  const id = newId('client_');
  const name = metadata.client_name || null;
  const issuedAt = await core.db.write((tx) =>
    tx.oneFirst(sql.type(z.object({ created_at: z.number() }))`
      INSERT INTO oauth_clients (id, client_name, redirect_uris) VALUES (${id}, ${name}, ${sql.array(redirectUris, 'text')}) RETURNING created_at`),
  );
  return {
    client_id: id,
    client_id_issued_at: Math.floor(issuedAt / 1000),
    ...(name ? { client_name: name } : {}),
    redirect_uris: redirectUris,
    token_endpoint_auth_method: 'none',
    grant_types: grants,
    response_types: ['code'],
    ...(metadata.scope !== undefined ? { scope: metadata.scope } : {}),
  };
}

const ClientRow = z.object({ id: z.string(), client_name: z.string().nullable(), redirect_uris: z.array(z.string()) });


/** The client behind an id: registered here, or its metadata document fetched (and cached); null when there is none. */
export async function findClient(core: Core, clientId: string): Promise<OAuthClient | null> {
  if (isMetadataUrl(clientId)) return fetchClientMetadata(core, clientId);
  if (!clientId.startsWith('client_') || clientId.length > 100) return null;
  const row = await core.db.pool.maybeOne(sql.type(ClientRow)`SELECT id, client_name, redirect_uris FROM oauth_clients WHERE id = ${clientId}`);
  return row ? { id: row.id, name: row.client_name, redirectUris: row.redirect_uris } : null;
}
export type { OAuthClient } from './redirectUris.ts';
