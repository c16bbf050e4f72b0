import { randomBytes } from 'node:crypto';
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, forbidden } from '../../../schema/errors.ts';
import { deliveryNote, sendMail, type Delivery } from './mail.ts';
import type { Reach } from '../kernel/result.ts';
import { hashSecret, newSecret } from '../kernel/secrets.ts';
import { mergeGuest, type Merged } from './guests.ts';
import { issueCredential, SESSION_TTL } from './identity.ts';
import { forgetFolded } from './signin.ts';

const HOUR = 3_600_000;
export const VERIFICATION_TTL = 24 * HOUR;
/** SPEC part 8 "Identity and registration". */
export const VERIFICATION_LIMITS = { perIdPerHour: 3, perAddressPerDay: 5, idsPerAddress: 5 } as const;
/** "Reads verified" (reach): a verified account a day old or with this many posts. */
const REACH_POSTS = 10;

/**
 * An address as it is compared everywhere (SPEC part 2, "one email address means one human"):
 * trimmed, lowercase, without a `+tag` in its local part. The one place addresses are normalised.
 */
export function addressKey(address: string): string {
  const trimmed = address.trim().toLowerCase();
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return trimmed;
  const local = trimmed.slice(0, at);
  const plus = local.indexOf('+');
  return (plus < 0 ? local : local.slice(0, plus)) + trimmed.slice(at);
}

let disposable: Set<string> | undefined;

/** Whether the address is at a disposable-mail domain or under one (`x.mailinator.com`). */
export function isDisposable(address: string): boolean {
  disposable ??= disposableEmailBlocklistSet();
  const labels = address.trim().toLowerCase().split('@').pop()!.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (disposable.has(labels.slice(i).join('.'))) return true;
  return false;
}

export function refuseDisposable(address: string) {
  if (isDisposable(address)) throw new AppError('invalid', 'Addresses at disposable-mail domains are refused. Use an address you keep.');
}

const StandingRow = z.object({ id: z.string(), verified: z.boolean(), seasoned: z.boolean() });
export type Standing = { verified: boolean; reach: Reach };

const column = (alias: string, name: string) => sql.identifier([alias, name]);

/**
 * Whether the participant row named `alias` is verified (SPEC part 2): a person who confirmed an email
 * (a code sign-in or a link); an agent linked to a verified person; an agent nobody linked that
 * confirmed its own. As SQL, so that a query can carry it beside what it reads (post authors).
 */
export const verifiedSql = (alias: string) => sql.fragment`((CASE WHEN ${column(alias, 'linked_human')} IS NOT NULL
    THEN (SELECT h.email_verified_at FROM participants h WHERE h.id = ${column(alias, 'linked_human')})
    ELSE ${column(alias, 'email_verified_at')} END) IS NOT NULL)`;

/** A day old or with 10 posts: with `verifiedSql`, what reads verified (reach) takes. */
const seasonedSql = (alias: string) => sql.fragment`(${column(alias, 'created_at')} <= now() - interval '1 day'
    OR (SELECT count(*) FROM (SELECT 1 FROM posts WHERE author_id = ${column(alias, 'id')} LIMIT ${REACH_POSTS}) enough) >= ${REACH_POSTS})`;

/** Whether the participant row named `alias` reads verified (reach), as SQL. */
export const readsVerifiedSql = (alias: string) => sql.fragment`(${verifiedSql(alias)} AND ${seasonedSql(alias)})`;

/**
 * Who is verified and who reads verified (SPEC part 2): the one source of both (`verifiedSql`,
 * `seasonedSql`). `conn` is the pool unless the caller holds a transaction.
 */
export async function standingOf(core: Core, ids: readonly string[], conn: CommonQueryMethods = core.db.pool): Promise<Map<string, Standing>> {
  const rows = ids.length
    ? await conn.any(sql.type(StandingRow)`
        SELECT p.id, ${verifiedSql('p')} AS verified, ${seasonedSql('p')} AS seasoned
        FROM participants p WHERE p.id = ANY(${sql.array([...ids], 'text')})`)
    : [];
  return new Map(rows.map((r) => [r.id, { verified: r.verified, reach: r.verified && r.seasoned ? 'verified' : 'unverified' }]));
}

/** Whether a participant reads verified: what `said(...)` parts take as `reach`. */
export async function reachOf(core: Core, id: string): Promise<Reach> {
  return (await standingOf(core, [id])).get(id)?.reach ?? 'unverified';
}

export async function isVerified(core: Core, id: string, conn: CommonQueryMethods = core.db.pool): Promise<boolean> {
  return (await standingOf(core, [id], conn)).get(id)?.verified ?? false;
}

const EmailRow = z.object({ email: z.string().nullable() });

/** The address a participant holds and whether they count as verified (for the web app's header and Settings). */
export async function emailStatus(core: Core, id: string): Promise<{ email: string | null; verified: boolean }> {
  const [row, verified] = await Promise.all([
    core.db.pool.maybeOne(sql.type(EmailRow)`SELECT email FROM participants WHERE id = ${id}`),
    isVerified(core, id),
  ]);
  return { email: row?.email ?? null, verified };
}

const TRow = z.object({ t: z.number() });

async function refuseOverLimit(count: number, limit: number, oldest: () => Promise<number>, window: number, what: string) {
  if (count < limit) return;
  const retry = Math.max(1, Math.ceil(((await oldest()) + window - Date.now()) / 1000));
  throw new AppError('rate_limited', `${what} Try again in ${retry} s.`, { retry_after_seconds: retry, retryAfterSeconds: retry });
}

/**
 * Mails a one-click link (`/verify#svcv_…`, 24 hours) confirming `email` for the caller: 3 an hour
 * per participant, 5 a day per address, at most 5 participants per address, no disposable domains.
 */
export async function requestVerification(core: Core, actor: Actor, email: string): Promise<{ delivery: Delivery; note: string }> {
  refuseDisposable(email);
  const key = addressKey(email);
  const token = newSecret('svcv_');
  await core.db.write(async (tx) => {
    // One request at a time per participant and per address, so no count can be raced past.
    await tx.query(sql.unsafe`SELECT id FROM participants WHERE id = ${actor.id} FOR UPDATE`);
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'verify:' + key}))`);
    const mine = await tx.oneFirst(sql.type(CountRow)`
      SELECT count(*)::int AS n FROM email_verifications WHERE participant_id = ${actor.id} AND created_at > now() - interval '1 hour'`);
    await refuseOverLimit(mine, VERIFICATION_LIMITS.perIdPerHour, () => tx.oneFirst(sql.type(TRow)`
      SELECT min(created_at) AS t FROM email_verifications WHERE participant_id = ${actor.id} AND created_at > now() - interval '1 hour'`), HOUR,
      `At most ${VERIFICATION_LIMITS.perIdPerHour} verification mails an hour.`);
    const toAddress = await tx.oneFirst(sql.type(CountRow)`
      SELECT count(*)::int AS n FROM email_verifications WHERE email_key = ${key} AND created_at > now() - interval '1 day'`);
    await refuseOverLimit(toAddress, VERIFICATION_LIMITS.perAddressPerDay, () => tx.oneFirst(sql.type(TRow)`
      SELECT min(created_at) AS t FROM email_verifications WHERE email_key = ${key} AND created_at > now() - interval '1 day'`), 24 * HOUR,
      `At most ${VERIFICATION_LIMITS.perAddressPerDay} verification mails a day go to one address.`);
    await refuseCrowdedAddress(tx, key, actor.id);
    await tx.query(sql.unsafe`
      INSERT INTO email_verifications (id, participant_id, email, email_key, token_hash, expires_at)
      VALUES (${'evf_' + randomBytes(10).toString('hex')}, ${actor.id}, ${email.trim()}, ${key}, ${hashSecret(token)},
              ${new Date(Date.now() + VERIFICATION_TTL).toISOString()})`);
  });
  const delivery = await sendMail(core, {
    to: email.trim(),
    subject: 'Confirm your email address for Dotpad',
    text: [
      `Someone (we hope you, as ${actor.name}) asked to confirm this address on ${core.config.baseUrl}.`,
      '',
      'Open this link to confirm it (it works once, for 24 hours):',
      `${core.config.baseUrl}/verify#${token}`,
      '',
      'If you did not ask for this, ignore this mail: nothing happens without the link.',
    ].join('\n'),
  });
  return { delivery, note: deliveryNote(core, delivery) };
}

/** SPEC part 8: at most 5 participants verified with one address (besides the one asking). */
async function refuseCrowdedAddress(tx: Parameters<Parameters<Core['db']['write']>[0]>[0], key: string, self: string) {
  const holders = await tx.oneFirst(sql.type(CountRow)`
    SELECT count(*)::int AS n FROM participants WHERE email_key = ${key} AND email_verified_at IS NOT NULL AND id <> ${self}`);
  if (holders >= VERIFICATION_LIMITS.idsPerAddress) {
    throw forbidden(`At most ${VERIFICATION_LIMITS.idsPerAddress} accounts can be verified with one address; use another address.`);
  }
}

const Pending = z.object({ id: z.string(), participant_id: z.string(), email: z.string(), email_key: z.string(), kind: z.string(), name: z.string() });
const Account = z.object({ id: z.string(), name: z.string() });

export type Confirmed = {
  verified: true;
  name: string;
  /** This browser is (now) signed in as the one verified. */
  signedIn: boolean;
  /** A guest's posts were folded into the account that has the address. */
  merged: boolean;
  /** This browser is signed in as someone else, and stays so. */
  otherSession: boolean;
  /** A new session for this browser (a guest is signed in by the link). */
  session: string | null;
};

/**
 * Completes a verification link. Every token failure (bad, used, expired) is the same `not_found`.
 * A person or agent: the address becomes their confirmed one; a person's address that is already
 * another account's is `conflict` (one address is one human). A guest (SPEC part 5): verified, and
 * signed in by the link; if an account has the address, the guest is folded into it and the browser
 * signed in as that account. A browser signed in as someone else is never switched.
 */
export async function confirmEmail(core: Core, token: string, browser: Pick<Actor, 'id'> | null): Promise<Confirmed> {
  const gone = () => new AppError('not_found', `This verification link is not valid: it may have been used or expired (links work for 24 hours). Ask for a new one in Settings at ${core.config.baseUrl}/settings.`);
  if (!token.startsWith('svcv_')) throw gone();
  const { confirmed, folded } = await core.db.write(async (tx) => {
    const row = await tx.maybeOne(sql.type(Pending)`
      SELECT v.id, v.participant_id, v.email, v.email_key, p.kind, p.name
      FROM email_verifications v JOIN participants p ON p.id = v.participant_id
      WHERE v.token_hash = ${hashSecret(token)} AND v.used_at IS NULL AND v.expires_at > now()
      FOR UPDATE OF v`);
    if (!row) throw gone();
    const guest = row.participant_id.startsWith('ppl_');
    const account = row.kind === 'human'
      ? await tx.maybeOne(sql.type(Account)`
          SELECT id, name FROM participants
          WHERE kind = 'human' AND email_key = ${row.email_key} AND id <> ${row.participant_id} AND left(id, 4) <> 'ppl_'
          ORDER BY created_at LIMIT 1`)
      : null;
    if (account && !guest) throw new AppError('conflict', `This address is already another account's. Sign in with it at ${core.config.baseUrl}/signin instead.`);
    await tx.query(sql.unsafe`UPDATE email_verifications SET used_at = now() WHERE id = ${row.id}`);
    let folded: Merged | null = null;
    let target = { id: row.participant_id, name: row.name };
    if (account) {
      folded = await mergeGuest(tx, row.participant_id, account.id);
      target = account;
    } else {
      await refuseCrowdedAddress(tx, row.email_key, row.participant_id);
      // A guest keeps the address only as compared (the account made later with it holds it in full).
      await tx.query(sql.unsafe`
        UPDATE participants SET email = ${guest ? null : row.email}, email_key = ${row.email_key}, email_verified_at = now()
        WHERE id = ${row.participant_id}`);
    }
    const takesBrowser = guest && (!browser || browser.id === row.participant_id || browser.id === target.id);
    const session = takesBrowser ? (await issueCredential(tx, target.id, 'session', 'signin', SESSION_TTL)).secret : null;
    const signedIn = session !== null || browser?.id === target.id;
    const confirmed: Confirmed = { verified: true, name: target.name, signedIn, merged: folded !== null, otherSession: browser !== null && !signedIn, session };
    return { confirmed, folded };
  });
  if (folded) forgetFolded(core, folded);
  return confirmed;
}
