import { AppError } from '../../../schema/errors.ts';
import { allows, type Seat } from './rights.ts';

/** A thread or a pad: who locked it, if anyone (`moderate` lock, SPEC part 2 "Hub roles and rights"). */
export type Lockable = { id: string; locked_by: string | null };

/**
 * Refuses a write to a locked thread or pad (`423 locked`), naming who may unlock it: the owner and
 * helpers always, and the maker of the item when the lock is their own. Reading goes on.
 */
export function requireUnlocked(kind: 'thread' | 'pad', item: Lockable & { maker: string }, hub: { slug: string }): void {
  if (item.locked_by === null) return;
  const who = item.locked_by === item.maker ? `its ${kind === 'thread' ? 'starter' : 'maker'}, the owner or a helper of ${hub.slug}` : `the owner or a helper of ${hub.slug}`;
  throw new AppError('locked', `This ${kind} is locked: it takes no writes until ${who} unlocks it (moderate action unlock, ${kind}_id ${item.id}). Reading still works.`, {
    locked: kind,
    locked_by: item.locked_by,
  });
}

/**
 * Whether a seat may lock (or, `unlocking`, unlock) an item: the owner and helpers always; the item's
 * maker, while they hold a seat, locks it and lifts a lock of their own, never one an owner or helper
 * placed.
 */
export function mayLock(actorId: string, seat: Seat, item: Lockable & { maker: string }, unlocking: boolean): boolean {
  if (allows(seat, 'moderate')) return true;
  if (item.maker !== actorId || !allows(seat, 'write')) return false;
  return !unlocking || item.locked_by === null || item.locked_by === actorId;
}
