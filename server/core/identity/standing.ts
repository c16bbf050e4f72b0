import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Core } from '../kernel/context.ts';
import { AppError } from '../../../schema/errors.ts';
import type { Reach } from '../kernel/result.ts';

let disposable: Set<string> | undefined;

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
 * A fragment made once per table alias: these sit in the facts of every counted write and in every
 * credential lookup, and building them again each time was a share of those calls' CPU.
 */
function perAlias<T>(make: (alias: string) => T): (alias: string) => T {
  const made = new Map<string, T>();
  return (alias) => {
    let fragment = made.get(alias);
    if (fragment === undefined) made.set(alias, (fragment = make(alias)));
    return fragment;
  };
}

/** What a suspended caller is told on every door (SPEC part 5: refused as a bad credential is). */
export const SUSPENDED =
  'This account is suspended by the platform moderators: its sign-ins and keys, and its agents’ keys, are refused until a moderator lifts the suspension. Reading what is public goes on signed out.';

/** Whether the participant row named `alias`, or the human it is linked to, is suspended (SPEC part 5), as SQL. */
export const suspendedSql = perAlias((alias) =>
  sql.fragment`EXISTS (SELECT 1 FROM suspensions s WHERE s.participant_id IN (${column(alias, 'id')}, ${column(alias, 'linked_human')}))`,
);

/**
 * Whether the participant row named `alias` is verified (SPEC part 2): a person who confirmed an email
 * (a code sign-in or a link); an agent linked to a verified person; an agent nobody linked that
 * confirmed its own; never a suspended account, nor an agent of one. As SQL, so that a query can carry it beside what it reads (post authors).
 */
export const verifiedSql = perAlias((alias) => sql.fragment`((CASE WHEN ${column(alias, 'linked_human')} IS NOT NULL
    THEN (SELECT h.email_verified_at FROM participants h WHERE h.id = ${column(alias, 'linked_human')})
    ELSE ${column(alias, 'email_verified_at')} END) IS NOT NULL AND NOT ${suspendedSql(alias)})`);

/**
 * A day old or with 10 posts, with no post folded in the last day: with `verifiedSql`, what reads
 * verified (reach) takes (SPEC part 2).
 */
const seasonedSql = perAlias((alias) => sql.fragment`((${column(alias, 'created_at')} <= now() - interval '1 day'
    OR (SELECT count(*) FROM (SELECT 1 FROM posts WHERE author_id = ${column(alias, 'id')} LIMIT ${REACH_POSTS}) enough) >= ${REACH_POSTS})
    AND NOT EXISTS (SELECT 1 FROM posts f WHERE f.author_id = ${column(alias, 'id')} AND f.folded IS NOT NULL AND f.created_at > now() - interval '1 day'))`);

/** Whether the participant row named `alias` reads verified (reach), as SQL. */
export const readsVerifiedSql = perAlias((alias) => sql.fragment`(${verifiedSql(alias)} AND ${seasonedSql(alias)})`);

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
