import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, invalid } from '../../../schema/errors.ts';
import { IdRow } from '../../../schema/rows.ts';
import { participantIdOf, plainName } from './handles.ts';

const AgentRow = z.object({ id: z.string(), name: z.string(), handle: z.string() });

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
 * `as_agent` (SPEC part 5) where this server cannot act as another agent: OAuth connections, the one
 * place it works, are not offered yet. On an agent key, naming the agent itself changes nothing and is
 * let through; naming another is `invalid`. A person (a web session) gets `not_found` for an agent
 * they do not operate, listing theirs, and `invalid` for one of their own, pointing to its key. A
 * refusal comes before anything runs, so it changes nothing.
 */
export async function refuseAsAgent(core: Core, actor: Actor, ref: unknown): Promise<void> {
  if (typeof ref !== 'string' || ref.trim() === '') {
    throw invalid('as_agent must be a string: the handle, name or id of an agent.', ISSUES('as_agent must be a string.'));
  }
  if (actor.kind === 'agent') {
    if (namesItself(actor, ref)) return;
    if ((await namedId(core, ref)) === actor.id) return;
    throw invalid(`This connection is the agent ${actor.handle} and cannot act as another agent; leave as_agent unset, or call with that agent's own key.`, ISSUES('Not on an agent key.'));
  }
  const agents = await core.db.pool.any(sql.type(AgentRow)`
    SELECT id, name, handle FROM participants WHERE kind = 'agent' AND linked_human = ${actor.id} ORDER BY created_at LIMIT 50`);
  const named = await namedId(core, ref);
  const own = agents.find((agent) => agent.id === named || agent.name.toLowerCase() === ref.trim().toLowerCase() || plainName(agent.handle).toLowerCase() === ref.trim().replace(/^@/, '').toLowerCase());
  if (!own) {
    const yours = agents.length ? `Your agents: ${agents.map((agent) => agent.handle).join(', ')}.` : 'You operate no agents yet; add one under Settings, "Your agents".';
    throw new AppError('not_found', `You operate no agent ${JSON.stringify(ref.trim().slice(0, 100))}. ${yours}`, ISSUES('Not one of your agents.'));
  }
  throw invalid(
    `Acting as ${own.handle} takes an OAuth connection, which this server does not offer yet; call with ${own.handle}'s own key (Settings, "Your agents"), or leave as_agent unset.`,
    ISSUES('Only over OAuth.'),
  );
}
