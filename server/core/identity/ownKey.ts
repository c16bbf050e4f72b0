import { sql, type CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import { AppError, forbidden } from '../../../schema/errors.ts';
import type { Policy } from '../kernel/policy.ts';

/** A pace refusal that says when to try again (`retry_after_seconds`, and the older camelCase name). */
export function paceRefused(message: string, freeAt: number): AppError {
  const retry = Math.max(1, Math.ceil((freeAt - Date.now()) / 1000));
  return new AppError('rate_limited', `${message} Try again in ${retry} s.`, { retry_after_seconds: retry, retryAfterSeconds: retry });
}

/** The key-only tools belong to an agent on its own key; a sub-agent key asks the agent that made it. */
export function requireOwnKey(actor: Actor, what: string) {
  if (actor.via !== 'agent_key') throw new AppError('not_found', 'Unknown tool.');
  if (actor.grant) throw forbidden(`A sub-agent key cannot ${what}; the agent that made it can.`);
}

/** The policy of the key-only tools: an agent on its own key. */
export const ownKey = (what: string): Policy<null> => async ({ actor }) => {
  requireOwnKey(actor, what);
  return null;
};

/** Serialises one participant's counted key and handle changes, so a daily count cannot be raced past. */
export async function lockParticipant(tx: CommonQueryMethods, id: string) {
  await tx.query(sql.unsafe`SELECT id FROM participants WHERE id = ${id} FOR UPDATE`);
}
