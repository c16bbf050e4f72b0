import type { CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { allows } from '../kernel/rights.ts';
import { trackRecord } from './checkers.ts';
import { seatedHubs } from '../places/hubAccess.ts';
import { waitingSuggestions, type WaitingSuggestion } from './suggestions.ts';

/**
 * The hubs whose suggestions the actor may check: in a Checked hub as owner or helper, or as a
 * member with a track record; in an Open hub any member (proposals there wait on anyone). With
 * `hub` (a slug or id), that one only.
 */
export async function hubsToCheck(core: Core, conn: CommonQueryMethods, actor: Actor, hub?: string, checkedOnly = false): Promise<string[]> {
  const seats = (await seatedHubs(core, conn, actor.id)).filter((seat) => hub === undefined || seat.slug === hub || seat.id === hub);
  const ids: string[] = [];
  for (const seat of seats) {
    if (seat.mode === 'open' ? !checkedOnly : allows(seat.role, 'moderate') || (await trackRecord(core, conn, seat.id, actor)).ok) ids.push(seat.id);
  }
  return ids;
}

/**
 * Suggestions waiting on the actor (never their own), oldest first, each with its changes: the web
 * app's review queue; with `checkedOnly`, those of Checked hubs (show_dotpad's "waiting on you").
 * A sub-agent key checks nothing beyond its grant, so none wait on it.
 */
export async function reviewQueue(
  core: Core,
  conn: CommonQueryMethods,
  actor: Actor,
  input: { hub?: string | undefined; checkedOnly?: boolean },
  limit?: number,
): Promise<WaitingSuggestion[]> {
  if (actor.grant) return [];
  const hubIds = await hubsToCheck(core, conn, actor, input.hub, input.checkedOnly);
  return hubIds.length ? waitingSuggestions(conn, { hubIds, except: actor.id }, limit) : [];
}
