import { sql, type CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import { hashSecret, newSecret } from '../kernel/secrets.ts';

/** SPEC part 4 "Click proof for app-only tools": a click token lasts 10 minutes. */
export const VIEW_TOKEN_TTL_MS = 10 * 60_000;

/**
 * A fresh click token for the MCP Apps view, bound to the credential that asked (an OAuth access
 * token): `svcw_…`, shown once, kept as its hash. The credential's expired tokens go with it.
 */
export async function issueViewToken(tx: CommonQueryMethods, actor: Actor): Promise<{ token: string; expiresAt: number }> {
  const token = newSecret('svcw_');
  const expiresAt = Date.now() + VIEW_TOKEN_TTL_MS;
  await tx.query(sql.unsafe`DELETE FROM view_tokens WHERE credential_id = ${actor.credentialId} AND expires_at < now()`);
  await tx.query(sql.unsafe`
    INSERT INTO view_tokens (hash, credential_id, expires_at) VALUES (${hashSecret(token)}, ${actor.credentialId}, ${new Date(expiresAt).toISOString()})`);
  return { token, expiresAt };
}

/**
 * Spends a click token in the caller's transaction: true when it was this credential's, unspent and
 * within its 10 minutes. Spent in the write's own transaction, so a write refused later leaves it unspent.
 */
export async function spendViewToken(tx: CommonQueryMethods, actor: Actor, token: string): Promise<boolean> {
  const spent = await tx.query(sql.unsafe`
    UPDATE view_tokens SET spent_at = now()
    WHERE hash = ${hashSecret(token)} AND credential_id = ${actor.credentialId} AND spent_at IS NULL AND expires_at > now()
    RETURNING hash`);
  return spent.rowCount === 1;
}
