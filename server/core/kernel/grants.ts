import type { Actor } from './actor.ts';

/**
 * What a sub-agent key may touch (SPEC part 2 "Credentials"): the threads it was made for, the pads
 * beside them, and the pads it was made for. A caller without a grant is limited by its seats alone.
 * The read policies ask these first, so anything outside a grant answers exactly as a missing item.
 */
export const grantsThread = (actor: Actor | null, threadId: string): boolean => !actor?.grant || actor.grant.threads.includes(threadId);

export const grantsPad = (actor: Actor | null, pad: { id: string; thread_id: string | null }): boolean =>
  !actor?.grant || actor.grant.pads.includes(pad.id) || (pad.thread_id !== null && actor.grant.threads.includes(pad.thread_id));

/** Hubs as a whole (reading one, joining, making one) are outside every grant. */
export const grantsHubs = (actor: Actor | null): boolean => !actor?.grant;
