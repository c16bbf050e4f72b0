import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { notFound } from '../../../schema/errors.ts';
import { coolingAgentsOf } from '../limits/paceCooldown.ts';
import { pausedAgentsOf, serverPauses } from '../limits/pauses.ts';
import { revokeCredentials } from './keys.ts';
import { myAgents } from './linking.ts';
import { isModerator, suspendedAccounts } from './suspensions.ts';
import { appConnectionsOf, revokeAppConnection } from './oauthTokens.ts';

const ConnectionRow = z.object({
  id: z.string(),
  participant_id: z.string(),
  kind: z.string(),
  origin: z.string(),
  created_at: z.number(),
  expires_at: z.number(),
  current: z.boolean(),
});
export type Connection = z.infer<typeof ConnectionRow>;

/**
 * A person's own connections (web sessions) and the keys of the agents linked to them, live ones
 * only, newest first: what Settings lists and may revoke. `current` is the session asking.
 */
export async function connectionsOf(conn: CommonQueryMethods, person: Actor): Promise<readonly Connection[]> {
  return conn.any(sql.type(ConnectionRow)`
    SELECT c.id, c.participant_id, c.kind, c.origin, c.created_at, c.expires_at, c.id = ${person.credentialId} AS current
    FROM credentials c JOIN participants p ON p.id = c.participant_id
    WHERE (p.id = ${person.id} OR p.linked_human = ${person.id})
      AND c.kind IN ('session', 'agent_key') AND c.revoked_at IS NULL AND c.expires_at > now()
    ORDER BY c.created_at DESC`);
}

/**
 * Settings `credentials`: the person's connections, the apps they connected over OAuth (`apps`), their agents (and those they asked to link), and
 * which agents are paused or cooling down; for a platform moderator, the suspended accounts and the
 * server's pauses too (`moderation`).
 */
export async function accountOverview(core: Core, conn: CommonQueryMethods, person: Actor) {
  const [connections, apps, agents, paused, cooling, moderator] = await Promise.all([
    connectionsOf(conn, person),
    appConnectionsOf(core, conn, person),
    myAgents(core, person),
    pausedAgentsOf(conn, person),
    coolingAgentsOf(conn, person.id, core.pace.now()),
    isModerator(core, conn, person),
  ]);
  const moderation = moderator ? { moderation: await moderationOverview(conn) } : {};
  return { connections, apps, ...agents, paused_agents: paused, cooling_agents: cooling, moderator, ...moderation };
}

async function moderationOverview(conn: CommonQueryMethods) {
  const [suspended, pauses] = await Promise.all([suspendedAccounts(conn), serverPauses(conn)]);
  return { suspended: suspended.map((s) => ({ ...s, suspended_at: new Date(s.suspended_at).toISOString() })), paused: pauses };
}

/**
 * Settings `revoke`: one of the person's connections, a connected app, or their agents' keys, at once here (lookups,
 * live connections, the sub-agent keys made with it); other instances hear it. Anything else is
 * missing to them.
 */
export async function revokeConnection(core: Core, person: Actor, credentialId: string) {
  // A connected app (an OAuth grant, oag_…) ends with every token it holds.
  if (credentialId.startsWith('oag_')) return revokeAppConnection(core, person, credentialId);
  const mine = (await connectionsOf(core.db.pool, person)).some((c) => c.id === credentialId);
  if (!mine) throw notFound('No connection of yours or your agents has this id; Settings lists them.');
  await revokeCredentials(core, [credentialId]);
  return { credential_id: credentialId, status: 'revoked' as const };
}
