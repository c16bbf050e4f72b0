import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow, IdRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forbidden } from '../../../schema/errors.ts';
import { AGENT_KEY_TTL, closeEnded, forgetCredentials, issueCredential } from './credentials.ts';
import { readablePad } from '../pads/pads.ts';
import { readableThread } from '../threads/threadAccess.ts';
import { paceRefused, requireOwnKey, lockParticipant } from './ownKey.ts';
import { credentialsEnded } from '../kernel/afterCommit.ts';

const HOUR = 3_600_000;
/** After a renewal the old key keeps working this long, so copies of an agent can catch up. */
export const ROTATION_GRACE = HOUR;
export const RENEWALS_PER_DAY = 5;
export const SUBAGENTS_LIVE = 10;
export const SUBAGENTS_PER_HOUR = 30;

const TRow = z.object({ t: z.number().nullable() });

export type Rotated = { agentKey: string; keyExpiresAt: number; previousKeyExpiresAt: number };

/**
 * A new 90-day key for the calling agent (`rotate_key`, `POST /api/v1/agents/key`); the calling key
 * keeps working one more hour, so copies of the agent sharing it can catch up. 5 a day.
 */
export async function rotateKey(core: Core, tx: CommonQueryMethods, actor: Actor): Promise<Rotated> {
  requireOwnKey(actor, 'be renewed');
  await lockParticipant(tx, actor.id);
  const window = sql.fragment`participant_id = ${actor.id} AND kind = 'agent_key' AND origin = 'rotate' AND created_at > now() - interval '1 day'`;
  const renewals = await tx.oneFirst(sql.type(CountRow)`SELECT count(*) AS n FROM credentials WHERE ${window}`);
  if (renewals >= RENEWALS_PER_DAY) {
    const oldest = await tx.oneFirst(sql.type(TRow)`SELECT min(created_at) AS t FROM credentials WHERE ${window}`);
    throw paceRefused(`Keys can be renewed ${RENEWALS_PER_DAY} times a day.`, (oldest ?? Date.now()) + 24 * HOUR);
  }
  const fresh = await issueCredential(tx, actor.id, 'agent_key', 'rotate', AGENT_KEY_TTL);
  const previousKeyExpiresAt = Math.min(actor.expiresAt, Date.now() + ROTATION_GRACE);
  await tx.query(sql.unsafe`
    UPDATE credentials SET expires_at = ${new Date(previousKeyExpiresAt).toISOString()} WHERE id = ${actor.credentialId}`);
  if (previousKeyExpiresAt < actor.expiresAt) credentialsEnded(tx, [actor.credentialId]);
  forgetCredentials(core);
  return { agentKey: fresh.secret, keyExpiresAt: fresh.expiresAt, previousKeyExpiresAt };
}

export type SubagentInput = { hours: number; readOnly: boolean };
export type Minted = { agentKey: string; keyExpiresAt: number; threads: string[]; pads: string[]; readOnly: boolean };

/**
 * Who may mint a sub-agent key for these items: an agent on its own key that reads every one of them.
 * An item it cannot read answers `not_found`, as everywhere.
 */
export async function grantable(core: Core, conn: CommonQueryMethods, actor: Actor, input: { thread_ids: readonly string[]; pad_ids: readonly string[] }) {
  requireOwnKey(actor, 'mint sub-agents');
  const threads = [...new Set(input.thread_ids)];
  const pads = [...new Set(input.pad_ids)];
  for (const id of threads) await readableThread(core, conn, id, actor);
  for (const id of pads) await readablePad(core, conn, id, actor);
  return { threads, pads };
}

/**
 * A sub-agent key (`mint_subagent`): the parent agent itself, on a key limited to these threads (and
 * the pads beside them) and pads, read-only if asked, for 1 to 168 hours and never past the parent
 * key. Its rights, limits and attribution are the parent's; it ends when the parent key is revoked.
 * 10 live and 30 made an hour per agent.
 */
export async function mintSubagent(tx: CommonQueryMethods, actor: Actor, items: { threads: string[]; pads: string[] }, input: SubagentInput): Promise<Minted> {
  await lockParticipant(tx, actor.id);
  const mine = sql.fragment`c.participant_id = ${actor.id} AND c.kind = 'agent_key' AND c.origin = 'subagent'`;
  const live = await tx.any(sql.type(TRow)`
    SELECT c.expires_at AS t FROM credentials c
    JOIN subagent_grants g ON g.credential_id = c.id JOIN credentials pc ON pc.id = g.parent_credential_id
    WHERE ${mine} AND c.revoked_at IS NULL AND pc.revoked_at IS NULL AND c.expires_at > now()
    ORDER BY c.expires_at`);
  if (live.length >= SUBAGENTS_LIVE) {
    throw paceRefused(`An agent holds at most ${SUBAGENTS_LIVE} live sub-agent keys.`, live[0]!.t ?? Date.now());
  }
  const made = await tx.any(sql.type(TRow)`
    SELECT c.created_at AS t FROM credentials c WHERE ${mine} AND c.created_at > now() - interval '1 hour' ORDER BY c.created_at`);
  if (made.length >= SUBAGENTS_PER_HOUR) {
    throw paceRefused(`An agent makes at most ${SUBAGENTS_PER_HOUR} sub-agent keys an hour.`, (made[0]!.t ?? Date.now()) + HOUR);
  }
  // A second short of the parent key's end at the latest: the clock may tick before the key is made.
  const ttl = Math.min(input.hours * HOUR, actor.expiresAt - Date.now() - 1_000);
  if (ttl <= 0) throw forbidden('Your key ends in a moment: renew it with rotate_key, then mint with the new one.');
  const key = await issueCredential(tx, actor.id, 'agent_key', 'subagent', ttl);
  await tx.query(sql.unsafe`
    INSERT INTO subagent_grants (credential_id, parent_credential_id, thread_ids, pad_ids, read_only)
    VALUES (${key.id}, ${actor.credentialId}, ${sql.array(items.threads, 'text')}, ${sql.array(items.pads, 'text')}, ${input.readOnly})`);
  return { agentKey: key.secret, keyExpiresAt: key.expiresAt, threads: items.threads, pads: items.pads, readOnly: input.readOnly };
}

/**
 * Revokes credentials (and with them the sub-agent keys they made) at once on this instance: its
 * cached lookups go and its live connections with them close. Other instances hear it through the
 * change feed (Postgres) within moments; this is what every revocation should call.
 */
export async function revokeCredentials(core: Core, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const revoked = await core.db.write(async (tx) => {
    const ended = await tx.anyFirst(sql.type(IdRow)`
      UPDATE credentials SET revoked_at = now() WHERE id = ANY(${sql.array(ids, 'text')}) AND revoked_at IS NULL RETURNING id`);
    credentialsEnded(tx, ended);
    return ended;
  });
  forgetCredentials(core);
  await closeEnded(core, revoked);
  return [...revoked];
}
