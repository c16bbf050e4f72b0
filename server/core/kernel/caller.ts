import type { Actor } from './actor.ts';

/**
 * Who made a change, as attribution records and shows it (SPEC part 4 "What tools/list shows"):
 * `assistant`, a host's model over OAuth acting as the person; `via <host>`, one of the person's
 * agents chosen with `as_agent` over OAuth; `agent`, an agent on its own key; `direct`, the person
 * themselves (the web app, or a click in the host's view that a click token proved).
 */
export type Caller = 'assistant' | 'agent' | 'direct' | `via ${string}`;

export function callerOf(actor: Actor): Caller {
  if (actor.via === 'agent_key') return 'agent';
  if (actor.via === 'session' || actor.clicked) return 'direct';
  if (actor.kind === 'agent') return `via ${actor.oauth?.host ?? 'an assistant'}`;
  return 'assistant';
}

/**
 * A person's assistant deciding on its own: an OAuth call as the person with no click in the view.
 * It cannot approve (verify, invite, let people in, set roles, switch modes, publish, take over),
 * and its decisions stay proposals (SPEC part 2 "Hub roles and rights").
 */
export const isUnclickedAssistant = (actor: Actor) => actor.via === 'oauth' && actor.kind === 'human' && !actor.clicked;
