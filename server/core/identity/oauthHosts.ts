import type { Config } from '../../config.ts';

/**
 * Assistant hosts this service knows by their own callbacks and origins (SPEC part 5 "Host label").
 * A client counts as one only if every redirect URI is exactly one of that host's callbacks, or its
 * metadata document is served from that host's own origin; a name a client gives itself never counts.
 */
type KnownHost = { label: string; callbacks: readonly (string | RegExp)[]; origins: readonly string[] };

const KNOWN_HOSTS: readonly KnownHost[] = [
  {
    label: 'Claude',
    callbacks: ['https://claude.ai/api/mcp/auth_callback', 'https://claude.com/api/mcp/auth_callback'],
    origins: ['https://claude.ai', 'https://claude.com'],
  },
  {
    label: 'ChatGPT',
    callbacks: ['https://chatgpt.com/connector_platform_oauth_redirect', /^https:\/\/chatgpt\.com\/connector\/oauth\/[\w-]+$/],
    origins: ['https://chatgpt.com'],
  },
];

const isCallbackOf = (host: KnownHost, uri: string) => host.callbacks.some((callback) => (typeof callback === 'string' ? callback === uri : callback.test(uri)));

/** Whether a client id is the URL of a Client ID Metadata Document rather than an id this server issued. */
export const isMetadataUrl = (clientId: string) => clientId.startsWith('https://') || clientId.startsWith('http://');

/** What a client is, as far as the label goes: its id (a metadata document's URL, or `client_…`) and its redirect URIs. */
export type ClientIdentity = { clientId: string; redirectUris: readonly string[] };

/**
 * The known assistant host behind a client, by its label, or null for an unverified app. Worked out
 * again on every call and refresh, so a change of SVC_VERIFIED_CLIENTS takes effect at once.
 */
export function knownHostOf(config: Pick<Config, 'verifiedClients'>, client: ClientIdentity): string | null {
  if (config.verifiedClients.includes(client.clientId)) return 'verified by this server';
  const metadataOrigin = isMetadataUrl(client.clientId) ? new URL(client.clientId).origin : null;
  for (const host of KNOWN_HOSTS) {
    if (metadataOrigin && host.origins.includes(metadataOrigin)) return host.label;
    if (client.redirectUris.length > 0 && client.redirectUris.every((uri) => isCallbackOf(host, uri))) return host.label;
  }
  return null;
}
