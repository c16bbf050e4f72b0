import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type Socket } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Core } from '../kernel/context.ts';
import { OAuthError } from './oauthError.ts';
import { checkRedirectUris, type OAuthClient } from './redirectUris.ts';

/**
 * Client ID Metadata Documents (SPEC part 5 "OAuth 2.1"): a `client_id` that is an https URL serving
 * `{client_id, client_name, redirect_uris}`. The fetch is guarded against server-side request forgery:
 * only public unicast addresses, checked on the address each connection is actually made to (the
 * lookup that hands the socket its address refuses any other, and the connected socket is checked
 * again), on every redirect hop; 20 KB after decoding; 5 seconds in all. Good documents are kept 10
 * minutes.
 */
const MAX_BYTES = 20 * 1024;
const DEADLINE_MS = 5_000;
const MAX_HOPS = 3;
const CACHE_MS = 10 * 60_000;

/** Everything that is not public unicast: IANA's special-purpose registries, multicast, and the rest. */
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 127], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');
const GLOBAL_V6 = new BlockList();
GLOBAL_V6.addSubnet('2000::', 3, 'ipv6');

/** Whether an address is public unicast; an IPv4-mapped IPv6 address is judged by its IPv4 part. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const plain = mapped ? mapped[1]! : address;
  const family = isIP(plain);
  if (family === 4) return !NOT_PUBLIC.check(plain, 'ipv4');
  if (family === 6) return GLOBAL_V6.check(plain, 'ipv6') && !NOT_PUBLIC.check(plain, 'ipv6');
  return false;
}

type Fetched = { status: number; location: string | undefined; body: string };

function refused(url: string, why: string): OAuthError {
  return new OAuthError('invalid_client', `The client metadata document at ${url} could not be used: ${why}`);
}

/**
 * The DNS lookup handed to the socket: it resolves the name and answers only when every address is
 * public, so the address connected to is one that was checked (no second resolution can differ).
 */
function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const bad = addresses.find((a) => !isPublicAddress(a.address));
      if (bad && !allowPrivate) return callback(Object.assign(new Error(`${hostname} resolves to ${bad.address}, which is not a public address`), { code: 'ENOTPUBLIC' }), '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      return callback(null, first.address, first.family);
    });
  };
}

/** One GET, no redirects followed: its status, Location, and body (decoded, at most MAX_BYTES). */
function getOnce(url: URL, allowPrivate: boolean, signal: AbortSignal): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !isPublicAddress(literal) && !allowPrivate) return reject(new Error(`${literal} is not a public address`));
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: guardedLookup(allowPrivate) as never,
      headers: { accept: 'application/json', 'accept-encoding': 'gzip, deflate, br', 'user-agent': 'Dotpad-OAuth/1 (client metadata)' },
      signal,
    });
    // The address actually connected to, whatever resolved it.
    req.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        const remote = socket.remoteAddress ?? '';
        if (!allowPrivate && !isPublicAddress(remote)) req.destroy(new Error(`connected to ${remote}, which is not a public address`));
      });
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const location = typeof res.headers.location === 'string' ? res.headers.location : undefined;
      const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
      const decoder = encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
      if (!decoder && encoding !== 'identity') {
        res.destroy();
        return reject(new Error(`the content encoding ${encoding} is not read`));
      }
      const stream: Readable = decoder ? res.pipe(decoder) : res;
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) {
          req.destroy();
          stream.destroy();
          reject(new Error(`it is over ${MAX_BYTES / 1024} KB`));
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', reject);
      stream.on('end', () => resolve({ status: res.statusCode ?? 0, location, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.end();
  });
}

const caches = new WeakMap<Core['db'], Map<string, { client: OAuthClient; at: number }>>();

/** The client a metadata document describes, fetched under the guard, or `invalid_client` saying why not. */
export async function fetchClientMetadata(core: Core, clientId: string): Promise<OAuthClient> {
  let cache = caches.get(core.db);
  if (!cache) caches.set(core.db, (cache = new Map()));
  const cached = cache.get(clientId);
  if (cached && Date.now() - cached.at < CACHE_MS) return cached.client;

  const allowed = (url: URL) => core.config.testClientMetadataOrigins.includes(url.origin);
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw refused(clientId, 'it is not a URL.');
  }
  if ((url.protocol !== 'https:' && !allowed(url)) || url.hash || url.username || url.password || url.pathname === '/') {
    throw refused(clientId, 'a client_id URL is https, with a path, and no fragment or user name.');
  }
  const signal = AbortSignal.timeout(DEADLINE_MS);
  let fetched: Fetched;
  try {
    let at = url;
    for (let hop = 0; ; hop++) {
      fetched = await getOnce(at, allowed(at), signal);
      if (![301, 302, 303, 307, 308].includes(fetched.status)) break;
      if (hop >= MAX_HOPS || !fetched.location) throw new Error('it redirects too often');
      at = new URL(fetched.location, at);
      if (at.protocol !== 'https:' && !allowed(at)) throw new Error(`it redirects to ${at.protocol} rather than https`);
    }
  } catch (error) {
    const why = signal.aborted ? `it did not answer within ${DEADLINE_MS / 1000} s.` : `${(error as Error).message}.`;
    throw refused(clientId, why);
  }
  if (fetched.status !== 200) throw refused(clientId, `it answered ${fetched.status}.`);
  let document: unknown;
  try {
    document = JSON.parse(fetched.body);
  } catch {
    throw refused(clientId, 'it is not JSON.');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw refused(clientId, 'it is not a JSON object.');
  const fields = document as Record<string, unknown>;
  if (fields.client_id !== clientId) throw refused(clientId, 'its client_id is not its own URL.');
  if (fields.token_endpoint_auth_method !== undefined && fields.token_endpoint_auth_method !== 'none') {
    throw refused(clientId, 'only public clients are served: token_endpoint_auth_method must be "none".');
  }
  let redirectUris: string[];
  try {
    redirectUris = checkRedirectUris(fields.redirect_uris, 'invalid_client_metadata');
  } catch (error) {
    throw refused(clientId, (error as Error).message);
  }
  const name = typeof fields.client_name === 'string' ? fields.client_name.trim().slice(0, 200) || null : null;
  const client: OAuthClient = { id: clientId, name, redirectUris, metadataUrl: clientId };
  if (cache.size > 1_000) cache.clear();
  cache.set(clientId, { client, at: Date.now() });
  return client;
}
