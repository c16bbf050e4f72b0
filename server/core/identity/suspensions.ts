import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { IdRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forgetFacts } from '../kernel/pace.ts';
import { forbidden } from '../../../schema/errors.ts';
import { closeEnded, forgetCredentials } from './credentials.ts';
import { requireParticipant } from './handles.ts';
import { addressKey } from './standing.ts';
import { credentialsEnded } from '../kernel/afterCommit.ts';

/**
 * Platform moderators and the accounts they suspend (SPEC part 4 "Web app only": `suspend`; part 5:
 * a suspended account is refused like a bad credential). Moderators are named by configuration
 * (`SVC_MODERATORS`, email addresses): a signed-in person whose confirmed address is one of them. A
 * suspension (migration 0025) refuses the account's sessions and keys, and the keys of the agents
 * linked to it, on every door; lifting it lets the same credentials work again.
 */

/** Whether the caller is a platform moderator: a person (not a guest) on a session, whose confirmed address the configuration names. */
export async function isModerator(core: Core, conn: CommonQueryMethods, actor: Actor): Promise<boolean> {
  const keys = core.config.moderators.map(addressKey);
  if (!keys.length || actor.kind !== 'human' || actor.guest || actor.via !== 'session') return false;
  return conn.exists(sql.unsafe`
    SELECT 1 FROM participants WHERE id = ${actor.id} AND email_verified_at IS NOT NULL AND email_key = ANY(${sql.array(keys, 'text')})`);
}

/** The moderators' operations' policy: anyone else is refused, told who may. */
export async function requireModerator(core: Core, conn: CommonQueryMethods, actor: Actor): Promise<void> {
  if (await isModerator(core, conn, actor)) return;
  throw forbidden('Only platform moderators (the addresses SVC_MODERATORS names, signed in and confirmed) suspend accounts and pause guests. Ask one of them.');
}

const SuspendedRow = z.object({ id: z.string(), kind: z.enum(['human', 'agent']), name: z.string(), handle: z.string(), note: z.string(), suspended_at: z.number() });
export type Suspended = z.infer<typeof SuspendedRow>;

/** Every suspended account, newest first: what the moderators' part of Settings lists. */
export async function suspendedAccounts(conn: CommonQueryMethods): Promise<readonly Suspended[]> {
  return conn.any(sql.type(SuspendedRow)`
    SELECT p.id, p.kind, p.name, p.handle, s.note, s.suspended_at
    FROM suspensions s JOIN participants p ON p.id = s.participant_id ORDER BY s.suspended_at DESC, p.id LIMIT 500`);
}

export type Suspension = { participant: { id: string; kind: 'human' | 'agent'; name: string; handle: string }; suspended: boolean; changed: boolean; agents: number };

/**
 * Suspends an account (`suspended: true`) or lifts its suspension, for a moderator (the policy
 * `platformModerator` checked). A moderator cannot be suspended
 * here (nor suspend themselves): the configuration names them. Suspending again keeps the first time
 * and takes the new note. Once committed, this instance forgets its cached lookups and closes the
 * live connections of the account and its agents; other instances hear it on the change feed (told,
 * once it commits, as the ending of each of those credentials) and do the same.
 */
export async function suspendAccount(core: Core, moderator: Actor, input: { who: string; suspended: boolean; note?: string | undefined }): Promise<Suspension> {
  const done = await core.db.write(async (tx) => {
    const participant = await requireParticipant(tx, input.who);
    const keys = core.config.moderators.map(addressKey);
    const isModeratorAccount = await tx.exists(sql.unsafe`
      SELECT 1 FROM participants WHERE id = ${participant.id} AND email_key = ANY(${sql.array(keys, 'text')})`);
    if (isModeratorAccount) throw forbidden(`${participant.handle} is a platform moderator: take their address off SVC_MODERATORS first.`);
    const changed = input.suspended
      ? await tx.query(sql.unsafe`
          INSERT INTO suspensions (participant_id, suspended_by, note) VALUES (${participant.id}, ${moderator.id}, ${input.note ?? ''})
          ON CONFLICT (participant_id) DO UPDATE SET note = excluded.note WHERE ${input.note !== undefined}`)
      : await tx.query(sql.unsafe`DELETE FROM suspensions WHERE participant_id = ${participant.id}`);
    const credentials = await tx.anyFirst(sql.type(IdRow)`
      SELECT c.id FROM credentials c JOIN participants p ON p.id = c.participant_id
      WHERE (p.id = ${participant.id} OR p.linked_human = ${participant.id}) AND c.revoked_at IS NULL AND c.expires_at > now()`);
    const agents = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM participants WHERE linked_human = ${participant.id}`);
    // A suspension made or lifted is told as the ending of the account's credentials (and its agents').
    if (changed.rowCount > 0) credentialsEnded(tx, credentials);
    return { participant, changed: changed.rowCount > 0, credentials, agents };
  });
  forgetCredentials(core);
  forgetFacts(core);
  if (input.suspended) await closeEnded(core, done.credentials);
  return { participant: done.participant, suspended: input.suspended, changed: done.changed, agents: done.agents };
}
