import { randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { CountRow } from '../../../schema/rows.ts';
import type { Core } from '../kernel/context.ts';
import { AppError } from '../../../schema/errors.ts';
import { mergeGuest, type Merged } from './guests.ts';
import { forgetCredentials, openSession } from './credentials.ts';
import { deliveryNote, sendMail, type Delivery } from './mail.ts';
import { addressKey, refuseDisposable } from './standing.ts';

const MINUTE = 60_000;
export const CODE_TTL = 60 * MINUTE;
/** SPEC part 8 "Per-IP route limits": the per-address halves (the per-IP ones are in ipLimits.ts). */
export const SIGNIN_LIMITS = { codesPerAddressPerHour: 5, triesPerAddress: 8, triesWindowMinutes: 15 } as const;

const derive = promisify(scrypt) as (code: string, salt: string, length: number, options: { N: number }) => Promise<Buffer>;

/**
 * A code has only a million values, so a plain hash of it would be read back from a database dump in
 * a second: it is kept as scrypt with the row's id as salt (about 40 ms a try for anyone but us too).
 */
const hashCode = async (code: string, salt: string) => (await derive(code, salt, 32, { N: 16_384 })).toString('hex');
/** Compared against when no code is waiting, so a try takes as long for any address. */
const NO_CODE = { id: 'sic_none', code_hash: randomBytes(32).toString('hex') };

const TRow = z.object({ t: z.number() });

function rateLimited(message: string, oldest: number, window: number) {
  const retry = Math.max(1, Math.ceil((oldest + window - Date.now()) / 1000));
  return new AppError('rate_limited', `${message} Try again in ${retry} s.`, { retry_after_seconds: retry, retryAfterSeconds: retry });
}

/**
 * Mails a 6-digit code valid an hour to any address, known or not: the answer and the work done are
 * the same either way, so nothing tells whether an account exists. A new code replaces the address's
 * earlier ones; 5 an hour per address.
 */
export async function sendSignInCode(core: Core, email: string): Promise<{ delivery: Delivery; note: string }> {
  refuseDisposable(email);
  const key = addressKey(email);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const id = 'sic_' + randomBytes(10).toString('hex');
  const codeHash = await hashCode(code, id);
  await core.db.write(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'signin:' + key}))`);
    const window = sql.fragment`email_key = ${key} AND created_at > now() - interval '1 hour'`;
    const sent = await tx.oneFirst(sql.type(CountRow)`SELECT count(*)::int AS n FROM signin_codes WHERE ${window}`);
    if (sent >= SIGNIN_LIMITS.codesPerAddressPerHour) {
      const oldest = await tx.oneFirst(sql.type(TRow)`SELECT min(created_at) AS t FROM signin_codes WHERE ${window}`);
      throw rateLimited(`At most ${SIGNIN_LIMITS.codesPerAddressPerHour} codes an hour go to one address.`, oldest, 60 * MINUTE);
    }
    await tx.query(sql.unsafe`DELETE FROM signin_codes WHERE created_at < now() - interval '1 day'`);
    await tx.query(sql.unsafe`DELETE FROM signin_tries WHERE created_at < now() - interval '1 day'`);
    await tx.query(sql.unsafe`UPDATE signin_codes SET used_at = now() WHERE email_key = ${key} AND used_at IS NULL`);
    await tx.query(sql.unsafe`
      INSERT INTO signin_codes (id, email_key, email, code_hash, expires_at)
      VALUES (${id}, ${key}, ${email.trim()}, ${codeHash}, ${new Date(Date.now() + CODE_TTL).toISOString()})`);
  });
  const delivery = await sendMail(core, {
    to: email.trim(),
    subject: 'Your Dotpad sign-in code',
    text: [
      `Your sign-in code for ${core.config.baseUrl} is:`,
      '',
      `    ${code}`,
      '',
      'It works once, for one hour. If you did not ask for it, ignore this mail: nobody can sign in without it.',
    ].join('\n'),
  });
  return { delivery, note: deliveryNote(core, delivery) };
}

const CodeRow = z.object({ id: z.string(), email: z.string(), code_hash: z.string() });

type Outcome = { kind: 'signed-in'; signedIn: Awaited<ReturnType<typeof openSession>> } | { kind: 'wrong' } | { kind: 'limited'; error: AppError };

/**
 * Checks a code: the newest one mailed to the address, unused and under an hour old. Right, it is
 * spent and the person with that address (made now when new) gets a session and counts as verified.
 * Wrong, missing, spent or expired all answer alike. Every try counts: 8 per 15 minutes per address.
 */
export async function checkSignInCode(core: Core, email: string, code: string) {
  const key = addressKey(email);
  const outcome = await core.db.write(async (tx): Promise<Outcome> => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'signin:' + key}))`);
    const window = sql.fragment`email_key = ${key} AND created_at > now() - make_interval(mins => ${SIGNIN_LIMITS.triesWindowMinutes})`;
    const tries = await tx.oneFirst(sql.type(CountRow)`SELECT count(*)::int AS n FROM signin_tries WHERE ${window}`);
    if (tries >= SIGNIN_LIMITS.triesPerAddress) {
      const oldest = await tx.oneFirst(sql.type(TRow)`SELECT min(created_at) AS t FROM signin_tries WHERE ${window}`);
      const error = rateLimited(`At most ${SIGNIN_LIMITS.triesPerAddress} tries per ${SIGNIN_LIMITS.triesWindowMinutes} minutes for one address.`, oldest, SIGNIN_LIMITS.triesWindowMinutes * MINUTE);
      return { kind: 'limited', error };
    }
    await tx.query(sql.unsafe`INSERT INTO signin_tries (email_key) VALUES (${key})`);
    const row = await tx.maybeOne(sql.type(CodeRow)`
      SELECT id, email, code_hash FROM signin_codes
      WHERE email_key = ${key} AND used_at IS NULL AND expires_at > now()
      ORDER BY created_at DESC LIMIT 1 FOR UPDATE`);
    const against = row ?? NO_CODE;
    const given = await hashCode(/^\d{6}$/.test(code) ? code : 'xxxxxx', against.id);
    const right = timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(against.code_hash, 'hex'));
    if (!row || !right) return { kind: 'wrong' };
    await tx.query(sql.unsafe`UPDATE signin_codes SET used_at = now() WHERE id = ${row.id}`);
    const name = row.email.split('@')[0]!.split('+')[0]!.slice(0, 80) || 'Person';
    return { kind: 'signed-in', signedIn: await openSession(tx, { name, email: row.email, verified: true }) };
  });
  if (outcome.kind === 'limited') throw outcome.error;
  if (outcome.kind === 'wrong') {
    throw new AppError('invalid', `That code is not right, or it was used or has expired. Use the newest code mailed to you, or ask for a new one at ${core.config.baseUrl}/signin.`);
  }
  return outcome.signedIn;
}

/** After a guest was folded into an account: this instance forgets the guest's sessions at once (others within seconds). */
export function forgetFolded(core: Core, folded: Merged) {
  forgetCredentials(core);
  for (const id of folded.revokedCredentials) core.sync.closeCredential(id);
}

/**
 * A guest who signs in (SPEC part 2): the guest this browser was is folded into the account it signed
 * into (posts, seats, held names), and the guest's sessions end. Nothing for anyone else.
 */
export async function foldBrowserGuest(core: Core, browserId: string | undefined, accountId: string): Promise<boolean> {
  if (!browserId?.startsWith('ppl_') || accountId.startsWith('ppl_')) return false;
  const folded = await core.db.write((tx) => mergeGuest(tx, browserId, accountId));
  forgetFolded(core, folded);
  return true;
}
