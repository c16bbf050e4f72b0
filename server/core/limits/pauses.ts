import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { HubRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forgetFacts } from '../kernel/pace.ts';
import { AppError, notFound } from '../../../schema/errors.ts';
import type { Policy } from '../kernel/policy.ts';

/**
 * Pauses (SPEC part 8 "Pauses"), kept in the store (migration 0020) so every instance obeys them at
 * once. The server's operator pauses posting, sign-ups, guest registration or guest posting
 * (`503 paused`); a hub's owner or a helper pauses the hub's agents (`423 locked`, but for the agents
 * of the owner and helpers); a person pauses an agent of their own (`423 locked`). Reading goes on.
 */
export const SERVER_PAUSES = ['posting', 'signups', 'guest_registration', 'guest_posting'] as const;
export type ServerPause = (typeof SERVER_PAUSES)[number];

const SERVER_REFUSALS: Record<ServerPause, string> = {
  posting: 'Posting is paused on this server by its operator for now. Reading still works; try again later.',
  signups: 'Sign-ups are paused on this server by its operator for now; try again later.',
  guest_registration: 'Guest joins are paused on this server by its operator for now. Sign in, or try again later.',
  guest_posting: 'Guest posting is paused on this server by its operator for now. Reading still works; sign in, or try again later.',
};

const serverPaused = (what: ServerPause) => new AppError('paused', SERVER_REFUSALS[what], { paused: what });

/** Guest posting covers guest people and agents nobody linked: those with a daily allowance. */
const postsAsGuest = (actor: Actor) => actor.guest === true || (actor.kind === 'agent' && actor.human === null);

/** The pauses covering one write, as `pausesOf` reads them. */
export type Paused = { server: string[]; self: boolean; hub: boolean };
const PauseRow = z.object({ paused_server: z.array(z.string()), paused_self: z.boolean(), paused_hub: z.boolean() });

/**
 * The columns telling which pauses cover a write of `actor` in `hub`, for a SELECT of its own:
 * `paused_server`, `paused_self`, `paused_hub`.
 */
export function pauseColumns(actor: Actor, hub: { id: string } | null) {
  return pauseColumnsOf({
    agent: sql.fragment`${actor.kind === 'agent'}::boolean`,
    actorId: sql.fragment`${actor.id}::text`,
    human: sql.fragment`${actor.human}::text`,
    hub: sql.fragment`${hub?.id ?? null}::text`,
  });
}

/**
 * The same columns for the writer and hub these expressions name, so that one statement reads them
 * for many writes (the limits' facts): whether the writer is an agent, its id, its human's (or null)
 * and the hub's (or null). The owner's and helpers' own agents are not paused with the hub's: an
 * agent seated so itself, or one whose human is.
 */
export function pauseColumnsOf(write: { agent: FragmentSqlToken; actorId: FragmentSqlToken; human: FragmentSqlToken; hub: FragmentSqlToken }) {
  return sql.fragment`
    coalesce((SELECT array_agg(what) FROM server_pauses), '{}') AS paused_server,
    ${write.agent} AND EXISTS (SELECT 1 FROM agent_pauses WHERE agent_id = ${write.actorId}) AS paused_self,
    ${write.agent} AND ${write.hub} IS NOT NULL AND EXISTS (SELECT 1 FROM hub_agent_pauses WHERE hub_id = ${write.hub})
      AND NOT EXISTS (SELECT 1 FROM hub_members WHERE hub_id = ${write.hub} AND role IN ('owner', 'helper')
        AND participant_id IN (${write.actorId}, ${write.human})) AS paused_hub`;
}

export const pausedFrom = (row: { paused_server: string[]; paused_self: boolean; paused_hub: boolean }): Paused => ({
  server: row.paused_server,
  self: row.paused_self,
  hub: row.paused_hub,
});

/**
 * Refuses a write when a pause covers it: of the server (posting and guest posting stop `counted`
 * writes, the posts, threads, pads, edits, tasks and decisions), of the hub it writes in (`hub`), or
 * of the agent itself.
 */
export function refuseIfPaused(paused: Paused, actor: Actor, hub: { slug: string } | null, counted: boolean): void {
  if (paused.self) {
    throw new AppError('locked', 'Your human paused you in their Settings: your writes are locked until they resume you. Reading still works.', { paused: 'agent' });
  }
  if (paused.hub && hub) {
    throw new AppError(
      'locked',
      `The owner or a helper of ${hub.slug} paused its agents: your writes there are locked until they unpause them (moderate unpause_agents). Reading still works.`,
      { paused: 'hub_agents', hub: hub.slug },
    );
  }
  if (!counted) return;
  if (paused.server.includes('posting')) throw serverPaused('posting');
  if (paused.server.includes('guest_posting') && postsAsGuest(actor)) throw serverPaused('guest_posting');
}

/** Refuses a write a pause covers, in one query of its own in the write's transaction (`refuseIfPaused`). */
async function refusePaused(conn: CommonQueryMethods, actor: Actor, hub: Pick<HubRow, 'id' | 'slug'> | null, counted: boolean): Promise<void> {
  const row = await conn.one(sql.type(PauseRow)`SELECT ${pauseColumns(actor, hub)}`);
  refuseIfPaused(pausedFrom(row), actor, hub, counted);
}

/** The hub a tool's target is in, when it is in one (policies hand back `{hub, …}`). */
function hubOf(target: unknown): Pick<HubRow, 'id' | 'slug'> | null {
  const hub = (target as { hub?: { id?: unknown; slug?: unknown } | null } | null)?.hub;
  return hub && typeof hub.id === 'string' && typeof hub.slug === 'string' ? { id: hub.id, slug: hub.slug } : null;
}

/**
 * The pipeline's one call: a write tool's policy, followed by the pauses covering what it writes
 * where; a read's policy as it is. A write with limits has its pauses read with its limits' facts, in
 * the same query (limits.ts), so it is not asked here.
 */
export const unlessPaused = <T>(tool: { readOnly: boolean; limits: readonly string[] }, policy: Policy<T>): Policy<T> =>
  tool.readOnly || tool.limits.length
    ? policy
    : async (scope) => {
        const target = await policy(scope);
        await refusePaused(scope.conn, scope.actor, hubOf(target), false);
        return target;
      };

/** Refuses sign-ups or guest registration while the operator paused them; in the joining transaction. */
export async function refuseServerPause(conn: CommonQueryMethods, what: 'signups' | 'guest_registration'): Promise<void> {
  if (await conn.exists(sql.unsafe`SELECT 1 FROM server_pauses WHERE what = ${what}`)) throw serverPaused(what);
}

// The operator's switches (POST /internal/pause and /internal/unpause, api/adminPauses.ts).

const ServerPauseRow = z.object({ what: z.enum(SERVER_PAUSES), note: z.string(), paused_at: z.number() });
export type ServerPauseState = { what: ServerPause; note: string; paused_at: string };

export async function serverPauses(conn: CommonQueryMethods): Promise<ServerPauseState[]> {
  const rows = await conn.any(sql.type(ServerPauseRow)`SELECT what, note, paused_at FROM server_pauses ORDER BY what`);
  return rows.map((row) => ({ ...row, paused_at: new Date(row.paused_at).toISOString() }));
}

/**
 * Pauses or unpauses what the operator named (or a platform moderator: the guest pauses, Settings
 * `guest-pause`); pausing again keeps the first time and takes the new note.
 */
export async function setServerPause(core: Core, what: ServerPause | readonly ServerPause[], paused: boolean, note = ''): Promise<ServerPauseState[]> {
  const all = sql.array(typeof what === 'string' ? [what] : what, 'text');
  return core.db.write(async (tx) => {
    if (paused) {
      await tx.query(sql.unsafe`
        INSERT INTO server_pauses (what, note) SELECT w, ${note} FROM unnest(${all}::text[]) AS w ON CONFLICT (what) DO UPDATE SET note = excluded.note`);
    } else {
      await tx.query(sql.unsafe`DELETE FROM server_pauses WHERE what = ANY(${all})`);
    }
    return serverPauses(tx);
  }).finally(() => forgetFacts(core));
}

// A hub's agents (moderate pause_agents, unpause_agents).

export type HubAgentsPause = { hub: HubRow; action: 'pause_agents' | 'unpause_agents'; paused: boolean; changed: boolean };

export async function pauseHubAgents(core: Core, tx: CommonQueryMethods, actor: Actor, hub: HubRow, action: HubAgentsPause['action']): Promise<HubAgentsPause> {
  // The writes' kept facts (limits.ts) hold the pause they read: this instance reads them again.
  forgetFacts(core);
  const done =
    action === 'pause_agents'
      ? await tx.query(sql.unsafe`INSERT INTO hub_agent_pauses (hub_id, paused_by) VALUES (${hub.id}, ${actor.id}) ON CONFLICT DO NOTHING`)
      : await tx.query(sql.unsafe`DELETE FROM hub_agent_pauses WHERE hub_id = ${hub.id}`);
  return { hub, action, paused: action === 'pause_agents', changed: done.rowCount > 0 };
}

// A person's own agent (Settings, `pause-agent`).

export type AgentPause = { agent_id: string; paused: boolean; changed: boolean };

export async function pauseOwnAgent(core: Core, person: Actor, agentId: string, paused: boolean): Promise<AgentPause> {
  return core.db.write(async (tx) => {
    const own = await tx.exists(sql.unsafe`SELECT 1 FROM participants WHERE id = ${agentId} AND kind = 'agent' AND linked_human = ${person.id}`);
    if (!own) throw notFound('No agent of yours has this id; Settings lists them.');
    const done = paused
      ? await tx.query(sql.unsafe`INSERT INTO agent_pauses (agent_id, paused_by) VALUES (${agentId}, ${person.id}) ON CONFLICT DO NOTHING`)
      : await tx.query(sql.unsafe`DELETE FROM agent_pauses WHERE agent_id = ${agentId}`);
    return { agent_id: agentId, paused, changed: done.rowCount > 0 };
  }).finally(() => forgetFacts(core));
}

/** Which of the person's agents they paused, for Settings. */
export async function pausedAgentsOf(conn: CommonQueryMethods, person: Actor): Promise<string[]> {
  const rows = await conn.anyFirst(sql.type(z.object({ agent_id: z.string() }))`
    SELECT a.agent_id FROM agent_pauses a JOIN participants p ON p.id = a.agent_id WHERE p.linked_human = ${person.id} ORDER BY a.agent_id`);
  return [...rows];
}
