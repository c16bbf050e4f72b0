import { createHash } from 'node:crypto';
import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { Actor, Scope } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, notFound } from '../../../schema/errors.ts';
import { hashSecret, newId, newSecret } from '../kernel/secrets.ts';
import { clientHost, clientName, type OAuthClient } from './oauthClients.ts';
import { OAuthError } from './oauthError.ts';
import { knownHostOf } from './oauthHosts.ts';
import { SUSPENDED, suspendedSql } from './standing.ts';

/**
 * The authorization server's grants and tokens (SPEC part 2 "Credentials", part 3 "Refresh
 * rotation", part 5 "OAuth 2.1"): one-time codes (120 s), access tokens (`svco_…`, 1 hour, for the
 * `/mcp` resource) and refresh tokens (`svcr_…`, 30 days, rotated on each use). Every secret is stored
 * as its SHA-256 only. Times come from the server's clock (`core.pace.now`), which tests move.
 */
export const CODE_TTL = 120_000;
export const ACCESS_TTL = 3_600_000;
export const REFRESH_TTL = 30 * 24 * 3_600_000;
/** A refresh token used again this soon after its rotation is a client's race, refused alone; later, a theft: the grant ends. */
export const REUSE_RACE_MS = 3_000;

export const ALL_SCOPES: readonly Scope[] = ['svc:read', 'svc:write'];

/** The one resource tokens are issued for: the MCP endpoint (RFC 8707, RFC 9728). */
export const mcpResource = (core: Core) => `${core.config.baseUrl}/mcp`;

/** The scopes asked for, as granted: none asked is both; `svc:write` brings `svc:read`. Unknown ones are `invalid_scope`. */
export function grantedScopes(asked: string | undefined): Scope[] {
  const words = (asked ?? '').split(' ').filter(Boolean);
  const unknown = words.filter((word) => !ALL_SCOPES.includes(word as Scope));
  if (unknown.length) throw new OAuthError('invalid_scope', `Unknown scope ${unknown.join(', ')}; this server has svc:read and svc:write.`);
  if (!words.length || words.includes('svc:write')) return [...ALL_SCOPES];
  return ['svc:read'];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What a person allowed on the consent page, to be handed to the client as a one-time code. */
export type Consent = { person: Actor; client: OAuthClient; redirectUri: string; codeChallenge: string; scopes: readonly Scope[]; resource: string };

export async function issueCode(core: Core, consent: Consent): Promise<string> {
  const code = newSecret('svccode_');
  const { client } = consent;
  await core.db.write((tx) =>
    tx.query(sql.unsafe`
      INSERT INTO oauth_codes (code_hash, participant_id, client_id, client_name, host, redirect_uris, redirect_uri, code_challenge, scopes, resource, expires_at)
      VALUES (${hashSecret(code)}, ${consent.person.id}, ${client.id}, ${clientName(client)}, ${clientHost(client)}, ${sql.array(client.redirectUris, 'text')},
              ${consent.redirectUri}, ${consent.codeChallenge}, ${sql.array(consent.scopes, 'text')}, ${consent.resource}, ${iso(core.pace.now() + CODE_TTL)})`),
  );
  return code;
}

export type TokenResponse = { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string; scope: string };

/** A new access and refresh token of the grant. */
async function issueTokens(tx: CommonQueryMethods, now: number, grantId: string, scopes: readonly string[]): Promise<TokenResponse> {
  const access = newSecret('svco_');
  const refresh = newSecret('svcr_');
  await tx.query(sql.unsafe`
    INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at, created_at) VALUES
      (${hashSecret(access)}, ${grantId}, 'access', ${iso(now + ACCESS_TTL)}, ${iso(now)}),
      (${hashSecret(refresh)}, ${grantId}, 'refresh', ${iso(now + REFRESH_TTL)}, ${iso(now)})`);
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TTL / 1000, refresh_token: refresh, scope: scopes.join(' ') };
}

/** Ends a grant and every token of it, in the caller's transaction. */
async function endGrant(tx: CommonQueryMethods, grantId: string) {
  await tx.query(sql.unsafe`UPDATE oauth_grants SET revoked_at = now() WHERE id = ${grantId} AND revoked_at IS NULL`);
  await tx.query(sql.unsafe`UPDATE oauth_tokens SET revoked_at = now() WHERE grant_id = ${grantId} AND revoked_at IS NULL`);
}

/** Ends every grant of a person (their account is deleted), in the caller's transaction. */
export async function endGrantsOf(tx: CommonQueryMethods, participantId: string) {
  await tx.query(sql.unsafe`
    UPDATE oauth_tokens SET revoked_at = now() WHERE revoked_at IS NULL AND grant_id IN (SELECT id FROM oauth_grants WHERE participant_id = ${participantId})`);
  await tx.query(sql.unsafe`UPDATE oauth_grants SET revoked_at = now() WHERE participant_id = ${participantId} AND revoked_at IS NULL`);
}

/** PKCE S256 (RFC 7636): the verifier's shape, and its hash equal to the challenge. */
function verifierMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  return createHash('sha256').update(verifier).digest('base64url') === challenge;
}

const CodeRow = z.object({
  participant_id: z.string(),
  client_id: z.string(),
  client_name: z.string(),
  host: z.string(),
  redirect_uris: z.array(z.string()),
  redirect_uri: z.string(),
  code_challenge: z.string(),
  scopes: z.array(z.string()),
  resource: z.string(),
  expires_at: z.number(),
  used_at: z.number().nullable(),
  grant_id: z.string().nullable(),
});

/**
 * Writes in one transaction, then throws the refusal it decided on: a refusal that ends a grant
 * (a reused code or refresh token) must commit that ending rather than roll it back.
 */
async function writeThenRefuse<T>(core: Core, work: (tx: DatabaseTransactionConnection) => Promise<T | OAuthError>): Promise<T> {
  const outcome = await core.db.write(work);
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

/** `grant_type=authorization_code`: the code once, within 120 s, by the client it was issued to, with the PKCE verifier. */
export async function exchangeCode(core: Core, input: { code: string; verifier: string; clientId: string; redirectUri: string; resource: string | undefined }): Promise<TokenResponse> {
  const now = core.pace.now();
  return writeThenRefuse(core, async (tx) => {
    const hash = hashSecret(input.code);
    const code = await tx.maybeOne(sql.type(CodeRow)`
      SELECT participant_id, client_id, client_name, host, redirect_uris, redirect_uri, code_challenge, scopes, resource, expires_at, used_at, grant_id
      FROM oauth_codes WHERE code_hash = ${hash} FOR UPDATE`);
    if (!code) return new OAuthError('invalid_grant', 'The authorization code is not known here.');
    if (code.used_at !== null) {
      // A second use: someone else may hold the code, so what its first use was given ends.
      if (code.grant_id) await endGrant(tx, code.grant_id);
      return new OAuthError('invalid_grant', 'The authorization code was used already; the tokens it gave are revoked. Start the authorization again.');
    }
    if (code.expires_at <= now) return new OAuthError('invalid_grant', 'The authorization code has expired (codes last 120 seconds). Start the authorization again.');
    if (code.client_id !== input.clientId) return new OAuthError('invalid_grant', 'The authorization code was issued to another client.');
    if (code.redirect_uri !== input.redirectUri) return new OAuthError('invalid_grant', 'redirect_uri is not the one the authorization request named.');
    if (!verifierMatches(input.verifier, code.code_challenge)) return new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE S256).');
    if (input.resource !== undefined && input.resource !== code.resource) return new OAuthError('invalid_target', `resource must be ${code.resource}, the one authorized.`);
    if (await tx.exists(sql.unsafe`SELECT 1 FROM participants p WHERE p.id = ${code.participant_id} AND ${suspendedSql('p')}`)) {
      return new OAuthError('invalid_grant', SUSPENDED);
    }
    const grantId = newId('oag_');
    await tx.query(sql.unsafe`
      INSERT INTO oauth_grants (id, participant_id, client_id, client_name, host, redirect_uris, scopes, resource, created_at)
      VALUES (${grantId}, ${code.participant_id}, ${code.client_id}, ${code.client_name}, ${code.host}, ${sql.array(code.redirect_uris, 'text')},
              ${sql.array(code.scopes, 'text')}, ${code.resource}, ${iso(now)})`);
    await tx.query(sql.unsafe`UPDATE oauth_codes SET used_at = ${iso(now)}, grant_id = ${grantId} WHERE code_hash = ${hash}`);
    return issueTokens(tx, now, grantId, code.scopes);
  });
}

const RefreshRow = z.object({
  grant_id: z.string(),
  expires_at: z.number(),
  rotated_at: z.number().nullable(),
  revoked_at: z.number().nullable(),
  client_id: z.string(),
  scopes: z.array(z.string()),
  resource: z.string(),
  grant_revoked_at: z.number().nullable(),
  suspended: z.boolean(),
});

/**
 * `grant_type=refresh_token`: a new pair, the grant's older access tokens revoked (SPEC part 3
 * "Refresh rotation"). A token used again within 3 s of its rotation is `invalid_grant` alone (two
 * requests of one client crossed); later, the whole grant is revoked.
 */
export async function refreshTokens(core: Core, input: { refreshToken: string; clientId: string; scope: string | undefined; resource: string | undefined }): Promise<TokenResponse> {
  const now = core.pace.now();
  return writeThenRefuse(core, async (tx) => {
    const hash = hashSecret(input.refreshToken);
    const token = await tx.maybeOne(sql.type(RefreshRow)`
      SELECT t.grant_id, t.expires_at, t.rotated_at, t.revoked_at, g.client_id, g.scopes, g.resource, g.revoked_at AS grant_revoked_at, ${suspendedSql('p')} AS suspended
      FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN participants p ON p.id = g.participant_id
      WHERE t.token_hash = ${hash} AND t.kind = 'refresh' FOR UPDATE OF t`);
    if (!token) return new OAuthError('invalid_grant', 'The refresh token is not known here.');
    if (token.client_id !== input.clientId) return new OAuthError('invalid_grant', 'The refresh token was issued to another client.');
    if (token.grant_revoked_at !== null) return new OAuthError('invalid_grant', 'This connection was revoked; authorize again.');
    if (token.rotated_at !== null) {
      if (now - token.rotated_at <= REUSE_RACE_MS) return new OAuthError('invalid_grant', 'The refresh token was just used; use the tokens that call returned.');
      await endGrant(tx, token.grant_id);
      return new OAuthError('invalid_grant', 'The refresh token was used already; the connection is revoked. Authorize again.');
    }
    if (token.revoked_at !== null) return new OAuthError('invalid_grant', 'The refresh token was revoked; authorize again.');
    if (token.expires_at <= now) return new OAuthError('invalid_grant', 'The refresh token has expired; authorize again.');
    if (token.suspended) return new OAuthError('invalid_grant', SUSPENDED);
    if (input.resource !== undefined && input.resource !== token.resource) return new OAuthError('invalid_target', `resource must be ${token.resource}, the one authorized.`);
    const asked = (input.scope ?? '').split(' ').filter(Boolean);
    if (asked.some((scope) => !token.scopes.includes(scope))) return new OAuthError('invalid_scope', `This connection was granted ${token.scopes.join(' ')} only.`);
    await tx.query(sql.unsafe`UPDATE oauth_tokens SET rotated_at = ${iso(now)} WHERE token_hash = ${hash}`);
    await tx.query(sql.unsafe`UPDATE oauth_tokens SET revoked_at = now() WHERE grant_id = ${token.grant_id} AND kind = 'access' AND revoked_at IS NULL`);
    return issueTokens(tx, now, token.grant_id, token.scopes);
  });
}

/** `/oauth/revoke` (RFC 7009): the token's whole grant ends; an unknown token changes nothing and is not told apart. */
export async function revokeToken(core: Core, token: string): Promise<void> {
  await core.db.write(async (tx) => {
    const grantId = await tx.maybeOneFirst(sql.type(z.object({ grant_id: z.string() }))`SELECT grant_id FROM oauth_tokens WHERE token_hash = ${hashSecret(token)}`);
    if (grantId) await endGrant(tx, grantId);
  });
}

const AccessRow = z.object({
  expires_at: z.number(),
  revoked_at: z.number().nullable(),
  grant_id: z.string(),
  client_id: z.string(),
  client_name: z.string(),
  host: z.string(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(z.string()),
  resource: z.string(),
  last_used_at: z.number().nullable(),
  participant_id: z.string(),
  name: z.string(),
  handle: z.string(),
  suspended: z.boolean(),
});

/** How often a grant's "last used" is written: at most once a minute, not on every call. */
const LAST_USED_EVERY_MS = 60_000;

/**
 * An access token (`svco_…`) made the Actor of its person: kind `human`, the grant's scopes, and the
 * app behind it, whose known-host label is worked out again now. Read from the store on every call
 * (no cache), so a revocation takes effect at once on every instance. Throws `unauthenticated`.
 */
export async function authenticateAccessToken(core: Core, token: string): Promise<Actor> {
  const row = await core.db.pool.maybeOne(sql.prepared('oauth_access_lookup', AccessRow)`
    SELECT t.expires_at, coalesce(t.revoked_at, g.revoked_at) AS revoked_at, g.id AS grant_id, g.client_id, g.client_name, g.host, g.redirect_uris,
           g.scopes, g.resource, g.last_used_at, p.id AS participant_id, p.name, p.handle, ${suspendedSql('p')} AS suspended
    FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN participants p ON p.id = g.participant_id
    WHERE t.token_hash = ${hashSecret(token)} AND t.kind = 'access'`);
  const refresh = `get a new one from ${core.config.baseUrl}/oauth/token with the refresh token`;
  if (!row) throw new AppError('unauthenticated', 'The credential is invalid.');
  if (row.revoked_at !== null) throw new AppError('unauthenticated', 'The credential was revoked.');
  if (row.expires_at <= core.pace.now()) throw new AppError('unauthenticated', `The credential has expired; ${refresh}.`);
  if (row.suspended) throw new AppError('unauthenticated', SUSPENDED);
  if (row.resource !== mcpResource(core)) {
    throw new AppError('unauthenticated', `This OAuth token was issued for the resource ${row.resource}, not ${mcpResource(core)}; authorize again for this one.`);
  }
  if (row.last_used_at === null || Date.now() - row.last_used_at > LAST_USED_EVERY_MS) {
    await core.db.writeStatement((conn) => conn.query(sql.unsafe`UPDATE oauth_grants SET last_used_at = now() WHERE id = ${row.grant_id}`));
  }
  const knownHost = knownHostOf(core.config, { clientId: row.client_id, redirectUris: row.redirect_uris }) !== null;
  return {
    id: row.participant_id,
    kind: 'human',
    human: row.participant_id,
    name: row.name,
    handle: row.handle,
    credentialId: row.grant_id,
    via: 'oauth',
    scopes: row.scopes.filter((scope): scope is Scope => ALL_SCOPES.includes(scope as Scope)),
    expiresAt: row.expires_at,
    oauth: { grantId: row.grant_id, clientId: row.client_id, clientName: row.client_name, host: row.host, knownHost },
  };
}

const GrantRow = z.object({
  id: z.string(),
  client_id: z.string(),
  client_name: z.string(),
  host: z.string(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(z.string()),
  created_at: z.number(),
  last_used_at: z.number().nullable(),
});

/** The apps a person connected that still hold a live token, newest first, as Settings lists them. */
export async function appConnectionsOf(core: Core, conn: CommonQueryMethods, person: Actor) {
  const rows = await conn.any(sql.type(GrantRow)`
    SELECT g.id, g.client_id, g.client_name, g.host, g.redirect_uris, g.scopes, g.created_at, g.last_used_at FROM oauth_grants g
    WHERE g.participant_id = ${person.id} AND g.revoked_at IS NULL
      AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > now())
    ORDER BY g.created_at DESC LIMIT 100`);
  return rows.map((row) => {
    const label = knownHostOf(core.config, { clientId: row.client_id, redirectUris: row.redirect_uris });
    return {
      id: row.id,
      client_name: row.client_name,
      host: row.host,
      verified: label !== null,
      ...(label ? { host_label: label } : {}),
      scopes: row.scopes,
      connected_at: iso(row.created_at),
      last_used_at: row.last_used_at === null ? null : iso(row.last_used_at),
    };
  });
}
export type AppConnection = Awaited<ReturnType<typeof appConnectionsOf>>[number];

/** Settings `revoke` of an app: the person's own grant ends, with every token of it, at once. */
export async function revokeAppConnection(core: Core, person: Actor, grantId: string) {
  const ended = await core.db.write(async (tx) => {
    const mine = await tx.exists(sql.unsafe`SELECT 1 FROM oauth_grants WHERE id = ${grantId} AND participant_id = ${person.id} AND revoked_at IS NULL`);
    if (mine) await endGrant(tx, grantId);
    return mine;
  });
  if (!ended) throw notFound('No connected app of yours has this id; Settings lists them.');
  return { credential_id: grantId, status: 'revoked' as const };
}
