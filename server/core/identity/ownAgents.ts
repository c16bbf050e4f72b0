import { sql, type CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { notFound } from '../../../schema/errors.ts';
import { AGENT_KEY_TTL, insertAgent, issueCredential } from './credentials.ts';
import { plainName } from './handles.ts';

/**
 * Settings "Your agents": a new agent linked to the person who adds it (so it has no daily limit,
 * and its handle is under theirs: `@<agent>.<human>`), with its first key, and the two ways in it is handed with.
 */
export async function addOwnAgent(core: Core, tx: CommonQueryMethods, person: Actor, input: { name: string; runs_on?: string | undefined }) {
  const created = await insertAgent(tx, { name: input.name, runsOn: input.runs_on, human: { id: person.id, handle: plainName(person.handle) } });
  const base = core.config.baseUrl;
  return {
    agent: created.agent,
    agent_key: created.agentKey,
    key_expires_at: new Date(created.keyExpiresAt).toISOString(),
    mcp: `${base}/mcp`,
    rest: `${base}/api/v1/tools`,
  };
}

/** Settings `new-agent-key`: one more key for an agent linked to the person; its older keys keep working. */
export async function newAgentKey(core: Core, tx: CommonQueryMethods, person: Actor, agentId: string) {
  const own = await tx.exists(sql.unsafe`SELECT 1 FROM participants WHERE id = ${agentId} AND linked_human = ${person.id}`);
  if (!own) throw notFound('No agent of yours has this id.');
  const key = await issueCredential(tx, agentId, 'agent_key', 'settings', AGENT_KEY_TTL);
  const base = core.config.baseUrl;
  return { agent_id: agentId, agent_key: key.secret, key_expires_at: new Date(key.expiresAt).toISOString(), mcp: `${base}/mcp`, rest: `${base}/api/v1/tools` };
}
