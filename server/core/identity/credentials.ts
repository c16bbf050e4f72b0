import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { CountRow, CredentialRow, IdRow, ParticipantRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forgetFacts } from '../kernel/pace.ts';
import { AppError, forbidden } from '../../../schema/errors.ts';
import { refuseServerPause } from '../limits/pauses.ts';
import { hashSecret, newId, newSecret } from '../kernel/secrets.ts';
import { addressKey, SUSPENDED, suspendedSql } from './standing.ts';
import { authenticateAccessToken } from './oauthTokens.ts';
import { afterCommit, credentialsEnded } from '../kernel/afterCommit.ts';
import { keptBatch, type KeptBatch } from '../kernel/keptBatch.ts';

const HandleRow = z.object({ handle: z.string() });

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const AGENT_KEY_TTL = 90 * DAY;
export const SESSION_TTL = 30 * DAY;
export const LINK_TTL = 30 * DAY;

type Kind = CredentialRow['kind'];
/** `settings`: a key its human made under Settings (it stops when they unlink); `unlink`: the key an agent gets when it unlinks itself with one of those. */
type Origin = 'register' | 'rotate' | 'signin' | 'fresh' | 'guest' | 'subagent' | 'settings' | 'unlink';

const handleBase = (name: string) =>
  name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30) || 'agent';

/**
 * `@<name>`, made unique with a number when the plain one is taken (now or before, SPEC: old handles
 * keep pointing), or is one of `tried`; with `under` (a human's plain handle), `@<name>.<under>`,
 * numbered before the dot.
 */
async function uniqueHandle(tx: CommonQueryMethods, name: string, tried: ReadonlySet<string>, under?: string): Promise<string> {
  const base = '@' + handleBase(name);
  const tail = under === undefined ? '' : `.${under}`;
  const key = (handle: string) => (handle + tail).toLowerCase();
  const taken = new Set(
    await tx.anyFirst(sql.type(HandleRow)`
      SELECT lower(handle) AS handle FROM participants WHERE lower(handle) = ${key(base)} OR lower(handle) LIKE ${key(base + '-%')}
      UNION SELECT lower(handle) FROM handle_history WHERE lower(handle) = ${key(base)} OR lower(handle) LIKE ${key(base + '-%')}`),
  );
  for (const handle of tried) taken.add(handle.toLowerCase());
  if (!taken.has(key(base))) return base + tail;
  for (let n = 2; ; n++) if (!taken.has(key(`${base}-${n}`))) return `${base}-${n}${tail}`;
}

const HANDLE_TRIES = 20;

/**
 * Inserts a participant under a handle made from `name`. `insert` runs `INSERT … ON CONFLICT DO
 * NOTHING` and answers null when its row went in under no handle: two sign-ups under one name at the
 * same moment pick the same free handle, and the second's insert waits for the first to commit, finds
 * the handle taken, and the handle is chosen again rather than the call failing. With `under`, the
 * handle is under that human's (uniqueHandle).
 */
export async function insertWithHandle<T>(tx: CommonQueryMethods, name: string, insert: (handle: string) => Promise<T | null>, under?: string): Promise<T> {
  const tried = new Set<string>();
  for (let n = 0; n < HANDLE_TRIES; n++) {
    const handle = await uniqueHandle(tx, name, tried, under);
    const inserted = await insert(handle);
    if (inserted !== null) return inserted;
    tried.add(handle);
  }
  throw new Error(`no free handle for ${JSON.stringify(name)} after ${HANDLE_TRIES} tries`);
}

export async function issueCredential(tx: CommonQueryMethods, participantId: string, kind: Kind, origin: Origin, ttl: number) {
  const prefix = kind === 'agent_key' ? 'svca_' : kind === 'session' ? 'svcs_' : 'svcc_';
  const secret = newSecret(prefix);
  const expiresAt = Date.now() + ttl;
  const id = newId('crd_');
  await tx.query(sql.unsafe`
    INSERT INTO credentials (id, participant_id, kind, origin, secret_hash, expires_at)
    VALUES (${id}, ${participantId}, ${kind}, ${origin}, ${hashSecret(secret)}, ${new Date(expiresAt).toISOString()})`);
  return { id, secret, expiresAt };
}

export type NewAgent = {
  agent: { id: string; handle: string; displayName: string };
  agentKey: string;
  keyCredentialId: string;
  keyExpiresAt: number;
  linkSecret: string;
};

/**
 * A new agent with its first key, in one transaction: unlinked with a link for its human (it registered
 * itself), or linked to the human who added it under Settings (no daily allowance, SPEC part 5).
 */
export async function createAgent(core: Core, input: Parameters<typeof insertAgent>[1]): Promise<NewAgent> {
  return core.db.write((tx) => insertAgent(tx, input));
}

/**
 * createAgent inside a caller's transaction (registering with an invite joins in the same one). An
 * agent a person adds (`human`: their id and plain handle) is linked to them at once, its handle under
 * theirs (`@<agent>.<human>`), as a linked agent's is.
 */
export async function insertAgent(tx: CommonQueryMethods, input: { name: string; runsOn?: string | undefined; human?: { id: string; handle: string } | undefined }): Promise<NewAgent> {
  // An agent registering itself signs up; one a person adds under Settings does not.
  if (input.human === undefined) await refuseServerPause(tx, 'signups');
  const id = newId('agt_');
  const handle = await insertWithHandle(
    tx,
    input.name,
    (handle) =>
      tx.maybeOneFirst(sql.type(HandleRow)`
        INSERT INTO participants (id, kind, name, handle, runs_on, linked_human)
        VALUES (${id}, 'agent', ${input.name}, ${handle}, ${input.runsOn ?? null}, ${input.human?.id ?? null})
        ON CONFLICT DO NOTHING RETURNING handle`),
    input.human?.handle,
  );
  const key = await issueCredential(tx, id, 'agent_key', input.human ? 'settings' : 'register', AGENT_KEY_TTL);
  const link = await issueCredential(tx, id, 'link', 'register', LINK_TTL);
  return {
    agent: { id, handle, displayName: input.name },
    agentKey: key.secret,
    keyCredentialId: key.id,
    keyExpiresAt: key.expiresAt,
    linkSecret: link.secret,
  };
}

/**
 * Whether the development doors (the name-and-email form, /dev/outbox) are open: never in production;
 * on the local machine; elsewhere with the tester code (SVC_TESTER_CODE).
 */
export function developmentOpen(config: Core['config'], testerCode: string | undefined): boolean {
  if (config.production) return false;
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(new URL(config.baseUrl).hostname);
  return local || (config.testerCode !== undefined && testerCode === config.testerCode);
}

/**
 * The development sign-in: a name and an email, no password. The same email signs into the same
 * person. Refused in production, where a real sign-in provider must be configured.
 */
export async function signInDev(core: Core, input: { name: string; email: string; tester_code?: string | undefined }) {
  if (core.config.production) {
    throw forbidden('The development sign-in is off in production.');
  }
  if (!developmentOpen(core.config, input.tester_code)) {
    throw forbidden('Off the local machine the development sign-in needs the tester code (SVC_TESTER_CODE).');
  }
  return core.db.write((tx) => openSession(tx, { name: input.name, email: input.email, verified: false }));
}

/**
 * The person with this address (compared by `addressKey`: one address is one human), made when new,
 * and a fresh 30-day session. `verified` when the address was just proven (a code sign-in). A
 * suspended account cannot sign in.
 */
export async function openSession(tx: CommonQueryMethods, input: { name: string; email: string; verified: boolean }) {
  const key = addressKey(input.email);
  const person = () =>
    tx.maybeOne(sql.type(ParticipantRow)`
      SELECT id, kind, name, handle, email, linked_human, created_at FROM participants
      WHERE kind = 'human' AND email_key = ${key} AND left(id, 4) <> 'ppl_' ORDER BY created_at LIMIT 1`);
  let participant = await person();
  if (!participant) {
    await refuseServerPause(tx, 'signups');
    const id = newId('hum_');
    participant = await insertWithHandle(
      tx,
      input.name,
      async (handle) =>
        (await tx.maybeOne(sql.type(ParticipantRow)`
          INSERT INTO participants (id, kind, name, handle, email, email_key, email_verified_at)
          VALUES (${id}, 'human', ${input.name}, ${handle}, ${input.email}, ${key}, ${input.verified ? sql.fragment`now()` : null})
          ON CONFLICT DO NOTHING RETURNING id, kind, name, handle, email, linked_human, created_at`)) ??
        // The same address signed up at the same moment: that sign-up made the person this one signs into.
        (await person()),
    );
  } else if (await tx.exists(sql.unsafe`SELECT 1 FROM suspensions WHERE participant_id = ${participant.id}`)) {
    throw forbidden(SUSPENDED);
  } else if (input.verified) {
    await tx.query(sql.unsafe`UPDATE participants SET email_verified_at = coalesce(email_verified_at, now()) WHERE id = ${participant.id}`);
    afterCommit(tx, { reads: 'participants' });
  }
  const session = await issueCredential(tx, participant.id, 'session', 'signin', SESSION_TTL);
  return { participant: publicParticipant(participant), session: session.secret, expiresAt: session.expiresAt };
}

export const publicParticipant = (p: Pick<ParticipantRow, 'id' | 'name' | 'handle' | 'kind'>) => ({
  id: p.id,
  name: p.name,
  handle: p.handle,
  kind: p.kind,
});

const CredentialWithParticipant = z.object({
  credential_id: z.string(),
  kind: z.enum(['agent_key', 'session', 'link']),
  expires_at: z.number(),
  revoked_at: z.number().nullable(),
  participant_id: z.string(),
  participant_kind: z.enum(['human', 'agent']),
  linked_human: z.string().nullable(),
  name: z.string(),
  handle: z.string(),
  /** A sub-agent key's grant (`mint_subagent`). */
  grant_threads: z.array(z.string()).nullable(),
  grant_pads: z.array(z.string()).nullable(),
  read_only: z.boolean().nullable(),
  /** The human an agent is linked to, as its replies name them (`linked_to`). */
  human_name: z.string().nullable(),
  human_handle: z.string().nullable(),
  /** The participant, or the human it is linked to, is suspended by the platform moderators. */
  suspended: z.boolean(),
});
type CredentialLookup = z.infer<typeof CredentialWithParticipant>;
const CredentialLookupRow = CredentialWithParticipant.extend({ secret_hash: z.string() });

/**
 * Credential lookups are cached for a few seconds, per instance (per store): every call of an agent
 * starts with one. A credential that ends (revoked, cut short, deleted) is heard at once on every
 * instance through the change feed (the write that ended it announces it after its commit), which
 * drops the cache and closes the live connections opened with it; the TTL bounds what a lost feed or
 * a lost announcement (the writer stopped between its commit and the announcement) could keep, and
 * the live connections' own re-check (ACCESS_CHECK_MS, 4 s) closes theirs: SPEC part 5 allows 5 s.
 *
 * Lookups are read in batches, one statement for many keys (keptBatch.ts): at 400 agents each
 * calling now and then, a statement per agent every 4 s would be a statement every sixth call.
 */
const CREDENTIAL_TTL_MS = 4_000;
const credentialCaches = new WeakMap<Core['db'], KeptBatch<CredentialLookup>>();

/** This instance's cache, made with the first lookup, which also starts listening for ended credentials. */
function cacheOf(core: Core): KeptBatch<CredentialLookup> {
  let cache = credentialCaches.get(core.db);
  if (cache) return cache;
  const made = keptBatch({
    maxAgeMs: CREDENTIAL_TTL_MS,
    now: Date.now,
    loadMany: async (hashes) => new Map((await lookupCredentials(core, hashes)).map(({ secret_hash, ...row }) => [secret_hash, row] as const)),
    readAheadFailed: (error) => core.log.warn('credential lookups not read ahead', { message: error.message }),
  });
  credentialCaches.set(core.db, made);
  core.db.watchChanges({
    changed: () => {},
    hearing: () => {},
    credentialEnded: (id) => {
      made.drop();
      void closeEnded(core, [id]).catch((error: Error) => core.log.warn('live connections of an ended credential not closed', { message: error.message }));
    },
  });
  return made;
}

/** Forgets every cached lookup of this instance: a credential or its participant changed here. */
export function forgetCredentials(core: Core) {
  cacheOf(core).drop();
  // Who someone is, and whom they are linked to, decide the limits of their writes too.
  forgetFacts(core);
}

const findCredential = (core: Core, secret: string) => cacheOf(core).get(hashSecret(secret));

/** A sub-agent key reads as revoked once the key that made it is. Prepared: every lookup of keys not cached is this statement. */
async function lookupCredentials(core: Core, hashes: readonly string[]) {
  return core.db.pool.any(sql.prepared('credential_lookups', CredentialLookupRow)`
    SELECT c.secret_hash, c.id AS credential_id, c.kind, c.expires_at, coalesce(c.revoked_at, pc.revoked_at) AS revoked_at,
           p.id AS participant_id, p.kind AS participant_kind, p.linked_human, p.name, p.handle,
           g.thread_ids AS grant_threads, g.pad_ids AS grant_pads, g.read_only, h.name AS human_name, h.handle AS human_handle,
           ${suspendedSql('p')} AS suspended
    FROM credentials c JOIN participants p ON p.id = c.participant_id
    LEFT JOIN participants h ON h.id = p.linked_human
    LEFT JOIN subagent_grants g ON g.credential_id = c.id
    LEFT JOIN credentials pc ON pc.id = g.parent_credential_id
    WHERE c.secret_hash = ANY(${sql.array(hashes, 'text')})`);
}

/** Why a credential is not good now, or null when it is. */
function credentialProblem(row: CredentialLookup | null): string | null {
  if (!row) return 'The credential is invalid.';
  if (row.revoked_at !== null) return 'The credential was revoked.';
  if (row.expires_at <= Date.now()) return 'The credential has expired.';
  if (row.suspended) return SUSPENDED;
  return null;
}

function toActor(row: CredentialLookup, via: Actor['via']): Actor {
  const grant = row.grant_threads && row.grant_pads ? { threads: row.grant_threads, pads: row.grant_pads } : undefined;
  return {
    id: row.participant_id,
    kind: row.participant_kind,
    human: row.participant_kind === 'human' ? row.participant_id : row.linked_human,
    name: row.name,
    handle: row.handle,
    credentialId: row.credential_id,
    via,
    scopes: row.read_only ? ['svc:read'] : ['svc:read', 'svc:write'],
    expiresAt: row.expires_at,
    ...(grant ? { grant } : {}),
    ...(row.participant_id.startsWith('ppl_') ? { guest: true } : {}),
    ...(row.participant_kind === 'agent' && row.linked_human && row.human_name !== null && row.human_handle !== null
      ? { linkedTo: { id: row.linked_human, name: row.human_name, handle: row.human_handle } }
      : {}),
  };
}

/**
 * The Bearer check of `/mcp`, `/api/v1/*` and Markdown views: an agent key, or an OAuth access token
 * (oauthTokens.ts). Throws `unauthenticated` with the reason a caller can act on; a web session is
 * refused here by name.
 */
export async function authenticateBearer(core: Core, token: string): Promise<Actor> {
  if (token.startsWith('svcs_')) {
    throw new AppError('unauthenticated', 'A web session cannot be used here; use an agent key (svca_…).');
  }
  if (token.startsWith('svco_')) return authenticateAccessToken(core, token);
  if (!token.startsWith('svca_')) throw new AppError('unauthenticated', 'The credential is invalid.');
  const row = await findCredential(core, token);
  const problem = credentialProblem(row);
  if (problem || !row || row.kind !== 'agent_key') {
    throw new AppError('unauthenticated', problem ?? 'The credential is invalid.');
  }
  return toActor(row, 'agent_key');
}

/**
 * The web app's `svc_session` cookie; a bad or stale one reads as signed out. With `refuseSuspended`,
 * a session of a suspended account is refused `unauthenticated`, saying so, instead.
 */
export async function authenticateSession(core: Core, token: string | undefined, options: { refuseSuspended?: boolean } = {}): Promise<Actor | null> {
  if (!token?.startsWith('svcs_')) return null;
  const row = await findCredential(core, token);
  const problem = credentialProblem(row);
  if (problem === SUSPENDED && options.refuseSuspended && row?.kind === 'session') throw new AppError('unauthenticated', SUSPENDED);
  if (problem || !row || row.kind !== 'session') return null;
  return toActor(row, 'session');
}

/** The web app's doors (its tools, Settings): the session's person, or `401` saying to sign in, or that the account is suspended. */
export async function requireSession(core: Core, token: string | undefined): Promise<Actor> {
  const person = await authenticateSession(core, token, { refuseSuspended: true });
  if (!person) throw new AppError('unauthenticated', `Sign in first at ${core.config.baseUrl}/signin.`);
  return person;
}

/** Revokes a web session at once: lookups on this instance, and its open pad connections too. */
export async function signOut(core: Core, token: string) {
  const revoked = await core.db.write(async (tx) => {
    const ids = await tx.anyFirst(sql.type(IdRow)`
      UPDATE credentials SET revoked_at = now()
      WHERE secret_hash = ${hashSecret(token)} AND kind = 'session' AND revoked_at IS NULL
      RETURNING id`);
    credentialsEnded(tx, ids);
    return ids;
  });
  cacheOf(core).drop(hashSecret(token));
  for (const id of revoked) core.sync.closeCredential(id);
}

/**
 * Of these credentials, the ones no longer good: revoked or expired, on any instance, or gone, or a
 * sub-agent key whose parent key was revoked, or of a suspended account (or an agent of one). Live pad connections opened with them are closed with
 * this (their key was renewed, or signed out elsewhere).
 */
export async function endedCredentials(core: Core, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const good = new Set(
    await core.db.pool.anyFirst(sql.type(IdRow)`
      SELECT c.id FROM credentials c JOIN participants p ON p.id = c.participant_id
      LEFT JOIN subagent_grants g ON g.credential_id = c.id
      LEFT JOIN credentials pc ON pc.id = g.parent_credential_id
      WHERE c.id = ANY(${sql.array(ids, 'text')}) AND c.revoked_at IS NULL AND c.expires_at > now() AND pc.revoked_at IS NULL
        AND NOT ${suspendedSql('p')}`),
  );
  return ids.filter((id) => !good.has(id));
}

/**
 * Closes this instance's live connections opened with these credentials, or with sub-agent keys
 * made from them, where they ended (a renewal only cuts the old key short; it goes on working).
 */
export async function closeEnded(core: Core, ids: readonly string[]) {
  const children = await core.db.pool.anyFirst(sql.type(IdRow)`
    SELECT credential_id AS id FROM subagent_grants WHERE parent_credential_id = ANY(${sql.array(ids, 'text')})`);
  for (const id of await endedCredentials(core, [...new Set([...ids, ...children])])) core.sync.closeCredential(id);
}

export const FRESH_LINKS_PER_DAY = 10;

/**
 * A new link for an agent's human (`/link#svcc_…`, 30 days), or null past the day's 10 fresh links.
 * Only link hashes are kept, so a link handed out earlier cannot be shown again: a fresh one is made.
 */
/** `answer` runs in the link's transaction with its URL (a keyed `link new` stores its record there). */
export async function freshLink<T = string>(
  core: Core,
  agentId: string,
  answer: (tx: DatabaseTransactionConnection, url: string) => Promise<T> = async (_tx, url) => url as T,
): Promise<T | null> {
  return core.db.write(async (tx) => {
    await tx.query(sql.unsafe`SELECT id FROM participants WHERE id = ${agentId} FOR UPDATE`);
    const made = await tx.oneFirst(sql.type(CountRow)`
      SELECT count(*) AS n FROM credentials
      WHERE participant_id = ${agentId} AND kind = 'link' AND created_at > now() - interval '1 day'`);
    if (made >= FRESH_LINKS_PER_DAY) return null;
    const link = await issueCredential(tx, agentId, 'link', 'fresh', LINK_TTL);
    return answer(tx, `${core.config.baseUrl}/link#${link.secret}`);
  });
}
