import { AppError } from '../../../schema/errors.ts';

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
