import { sql, type CommonQueryMethods } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import type { Policy } from '../kernel/policy.ts';
import type { HubRow } from '../../../schema/rows.ts';
import { forbidden } from '../../../schema/errors.ts';
import { allows, requireWriter, type Seat } from '../kernel/rights.ts';
import { readHub, readPad, readThread } from './policies.ts';
import { afterCommit, threadsMoved } from '../kernel/afterCommit.ts';

/**
 * Renaming a hub, a thread or a pad (the web app's `ui_rename`): the hub's owner and helpers rename
 * anything in it; whoever started a thread or made a pad renames that one, while they still have a
 * seat. A hub keeps its slug, so every link to it keeps working under its new name.
 */
export type RenameTarget = { kind: 'hub' | 'thread' | 'pad'; id: string; name: string; hub: HubRow; seat: Seat; maker: string | null };

/** The item `item` names (`thr_…`, `pad_…`, else a hub's slug or id), where the caller may rename it. */
export const renameTarget = (item: string, actor: Actor): Policy<RenameTarget> => async (scope) => {
  let target: RenameTarget;
  if (item.startsWith('thr_')) {
    const { thread, hub, seat } = await readThread(item)(scope);
    target = { kind: 'thread', id: thread.id, name: thread.title, hub, seat, maker: thread.started_by };
  } else if (item.startsWith('pad_')) {
    const { pad, hub, seat } = await readPad(item)(scope);
    target = { kind: 'pad', id: pad.id, name: pad.title, hub, seat, maker: pad.created_by };
  } else {
    const { hub, seat } = await readHub(item)(scope);
    target = { kind: 'hub', id: hub.id, name: hub.name, hub, seat, maker: null };
  }
  if (allows(target.seat, 'moderate')) return target;
  if (target.maker === actor.id) {
    requireWriter(target.seat, target.hub);
    return target;
  }
  throw forbidden(
    target.kind === 'hub'
      ? `Only the owner and helpers of ${target.hub.slug} rename it; ask them in a thread there.`
      : `Only whoever ${target.kind === 'thread' ? 'started this thread' : 'made this pad'} and the owner and helpers of ${target.hub.slug} rename it; suggest a name in a post.`,
    { your_role: target.seat ?? 'none' },
  );
};

const TABLE = { hub: sql.fragment`hubs SET name`, thread: sql.fragment`threads SET version = version + 1, title`, pad: sql.fragment`pads SET title` } as const;
const COLUMN = { hub: sql.fragment`name`, thread: sql.fragment`title`, pad: sql.fragment`title` } as const;

/** Gives the item its new name; the same name again changes nothing. A thread's version moves on, as its title is in every view of it. */
export async function renameItem(tx: CommonQueryMethods, target: RenameTarget, name: string) {
  const done = await tx.query(sql.unsafe`
    UPDATE ${TABLE[target.kind]} = ${name}, updated_at = now() WHERE id = ${target.id} AND ${COLUMN[target.kind]} <> ${name}`);
  if (done.rowCount > 0 && target.kind === 'thread') threadsMoved(tx, target.id);
  else if (done.rowCount > 0) afterCommit(tx, { reads: target.kind === 'hub' ? 'hubs' : 'pads' });
  return { kind: target.kind, id: target.id, name, ...(target.kind === 'hub' ? { slug: target.hub.slug } : {}), changed: done.rowCount > 0 };
}
