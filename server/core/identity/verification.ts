import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { CountRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forgetFacts } from '../kernel/pace.ts';
import { AppError, forbidden } from '../../../schema/errors.ts';
import { deliveryNote, sendMail, type Delivery } from './mail.ts';
import { hashSecret, newSecret } from '../kernel/secrets.ts';
import { mergeGuest, type Merged } from './guests.ts';
import { issueCredential, SESSION_TTL } from './credentials.ts';
import { forgetFolded } from './signin.ts';
import { addressKey, refuseDisposable } from './standing.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

const HOUR = 3_600_000;
export const VERIFICATION_TTL = 24 * HOUR;
/** SPEC part 8 "Identity and registration". */
export const VERIFICATION_LIMITS = { perIdPerHour: 3, perAddressPerDay: 5, idsPerAddress: 5 } as const;


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
      afterCommit(tx, { reads: 'participants' });
    }
    const takesBrowser = guest && (!browser || browser.id === row.participant_id || browser.id === target.id);
    const session = takesBrowser ? (await issueCredential(tx, target.id, 'session', 'signin', SESSION_TTL)).secret : null;
    const signedIn = session !== null || browser?.id === target.id;
    const confirmed: Confirmed = { verified: true, name: target.name, signedIn, merged: folded !== null, otherSession: browser !== null && !signedIn, session };
    return { confirmed, folded };
  });
  if (folded) forgetFolded(core, folded);
  // A verified address changes the standing the limits of this person's writes are counted by.
  forgetFacts(core);
  return confirmed;
}
