import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, invalid } from '../../../schema/errors.ts';
import { IdRow } from '../../../schema/rows.ts';
import { participantIdOf, plainName } from './handles.ts';
import { suspendedSql } from './standing.ts';

const AgentRow = z.object({ id: z.string(), name: z.string(), handle: z.string(), suspended: z.boolean() });

const ISSUES = (message: string) => ({ issues: [{ path: 'as_agent', message }] });

/** Whether `ref` names this agent: its id, its handle (with or without `@`), its name alone, or its name. */
function namesItself(actor: Actor, ref: string): boolean {
  const text = ref.trim().toLowerCase();
  const bare = text.replace(/^@/, '');
  return text === actor.id || bare === actor.handle.toLowerCase().replace(/^@/, '') || bare === plainName(actor.handle).toLowerCase() || text === actor.name.toLowerCase();
}

/** Whom a reference names by id or handle, an earlier handle included (participantIdOf). */
const namedId = (core: Core, ref: string) => core.db.pool.maybeOneFirst(sql.type(IdRow)`SELECT id FROM participants WHERE id = ${participantIdOf(ref)}`);

/**
 * `as_agent` (SPEC part 5): who the call runs as. Over OAuth, one of the person's own agents, named by
 * its handle (`@<agent>.<human>`), its name alone, an earlier handle or its id: the call then runs as
 * that agent, with its rights and allowance, still through the host (`via: 'oauth'`, recorded as
 * "<agent> via <host>"). On an agent key, naming the agent itself changes nothing; naming another is
 * `invalid`. A person names an agent they do not operate: `not_found`, listing theirs. A web session
 * naming one of theirs is `invalid`, pointing to its key. Decided before anything runs, so a refusal
 * changes nothing.
 */
export async function asAgentActor(core: Core, actor: Actor, ref: unknown): Promise<Actor> {
  if (typeof ref !== 'string' || ref.trim() === '') {
    throw invalid('as_agent must be a string: the handle, name or id of an agent.', ISSUES('as_agent must be a string.'));
  }
  if (actor.kind === 'agent') {
    if (namesItself(actor, ref)) return actor;
    if ((await namedId(core, ref)) === actor.id) return actor;
    throw invalid(`This connection is the agent ${actor.handle} and cannot act as another agent; leave as_agent unset, or call with that agent's own key.`, ISSUES('Not on an agent key.'));
  }
  const agents = await core.db.pool.any(sql.type(AgentRow)`
    SELECT id, name, handle, ${suspendedSql('participants')} AS suspended
    FROM participants WHERE kind = 'agent' AND linked_human = ${actor.id} ORDER BY created_at LIMIT 50`);
  const named = await namedId(core, ref);
  const text = ref.trim().toLowerCase();
  const own = agents.find((agent) => agent.id === named || agent.name.toLowerCase() === text || plainName(agent.handle).toLowerCase() === text.replace(/^@/, ''));
  if (!own) {
    const yours = agents.length ? `Your agents: ${agents.map((agent) => agent.handle).join(', ')}.` : 'You operate no agents yet; add one under Settings, "Your agents".';
    throw new AppError('not_found', `You operate no agent ${JSON.stringify(ref.trim().slice(0, 100))}. ${yours}`, ISSUES('Not one of your agents.'));
  }
  if (actor.via !== 'oauth') {
    throw invalid(
      `Acting as ${own.handle} takes an assistant's OAuth connection; here, call with ${own.handle}'s own key (Settings, "Your agents"), or leave as_agent unset.`,
      ISSUES('Only over OAuth.'),
    );
  }
  if (own.suspended) throw new AppError('forbidden', `${own.handle} is suspended by the platform moderators; leave as_agent unset to act as yourself.`);
  return {
    id: own.id,
    kind: 'agent',
    human: actor.id,
    linkedTo: { id: actor.id, name: actor.name, handle: actor.handle },
    name: own.name,
    handle: own.handle,
    credentialId: actor.credentialId,
    via: 'oauth',
    scopes: actor.scopes,
    expiresAt: actor.expiresAt,
    ...(actor.oauth ? { oauth: actor.oauth } : {}),
  };
}
