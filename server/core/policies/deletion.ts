import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { HubTarget, Policy } from '../kernel/policy.ts';
import type { HubRow, PadRow } from '../../../schema/rows.ts';
import { forbidden } from '../../../schema/errors.ts';
import { allows, requireWriter } from '../kernel/rights.ts';
import { readHub, readPad } from './policies.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

/**
 * Deleting a pad or a whole hub (the web app's `ui_delete_pad`, `ui_delete_hub`). A first call
 * without `confirm` only counts what would go, so the person confirms knowing it; with `confirm`
 * the item is marked deleted and from then reads as missing everywhere (`not_found`, out of every
 * list and search). Rows stay, because posts, tasks and a pad's history point at them; a hub's
 * slug stays taken, so an old link never opens somebody else's hub.
 */
export type PadDeletion = { pad: PadRow; hub: HubRow };

/** A pad: its maker while they have a seat, and the hub's owner and helpers. */
export const padToDelete = (padId: string, actor: Actor): Policy<PadDeletion> => async (scope) => {
  const { pad, hub, seat } = await readPad(padId)(scope);
  if (allows(seat, 'moderate')) return { pad, hub };
  if (pad.created_by === actor.id) {
    requireWriter(seat, hub);
    return { pad, hub };
  }
  throw forbidden(`Only whoever made this pad and the owner and helpers of ${hub.slug} delete it; ask them in a thread.`, { your_role: seat ?? 'none' });
};

/** A hub: its owner alone. */
export const hubToDelete = (ref: string): Policy<HubTarget> => async (scope) => {
  const target = await readHub(ref)(scope);
  if (target.seat !== 'owner') throw forbidden(`Only the owner of ${target.hub.slug} deletes it; a helper or member can leave it instead.`, { your_role: target.seat ?? 'none' });
  return target;
};

const CountsRow = z.object({ threads: z.number(), pads: z.number(), tasks: z.number() });
export type Deletion = { kind: 'hub' | 'pad'; id: string; name: string; deleted: boolean; threads: number; pads: number; tasks: number };

/**
 * A pad takes with it its text and history; the threads about one of its sections and the tasks
 * whose result it is lose that link (counted so the person knows).
 */
export async function deletePad(core: Core, tx: CommonQueryMethods, actor: Actor, { pad }: PadDeletion, confirm: boolean): Promise<Deletion> {
  const counts = await tx.one(sql.type(CountsRow)`
    SELECT (SELECT count(*)::int FROM threads WHERE about_pad_id = ${pad.id}) AS threads, 1 AS pads,
           (SELECT count(*)::int FROM tasks WHERE result_pad = ${pad.id}) AS tasks`);
  const out = { kind: 'pad' as const, id: pad.id, name: pad.title, deleted: false, ...counts };
  if (!confirm) return out;
  await tx.query(sql.unsafe`UPDATE pads SET deleted_at = now(), deleted_by = ${actor.id} WHERE id = ${pad.id} AND deleted_at IS NULL`);
  await tx.query(sql.unsafe`DELETE FROM hub_front_pads WHERE pad_id = ${pad.id}`);
  afterCommit(tx, { reads: 'pads' });
  // Edit grants kept for a few seconds would outlive the pad on this instance.
  core.editors.forget();
  return { ...out, deleted: true };
}

/** A hub takes everything in it: its threads (and their posts and tasks) and its pads. */
export async function deleteHub(core: Core, tx: CommonQueryMethods, actor: Actor, { hub }: HubTarget, confirm: boolean): Promise<Deletion> {
  const counts = await tx.one(sql.type(CountsRow)`
    SELECT (SELECT count(*)::int FROM threads WHERE hub_id = ${hub.id}) AS threads,
           (SELECT count(*)::int FROM pads WHERE hub_id = ${hub.id} AND deleted_at IS NULL) AS pads,
           (SELECT count(*)::int FROM tasks WHERE hub_id = ${hub.id}) AS tasks`);
  const out = { kind: 'hub' as const, id: hub.id, name: hub.name, deleted: false, ...counts };
  if (!confirm) return out;
  await tx.query(sql.unsafe`UPDATE hubs SET deleted_at = now(), deleted_by = ${actor.id} WHERE id = ${hub.id} AND deleted_at IS NULL`);
  afterCommit(tx, { reads: 'hubs' });
  core.editors.forget();
  return { ...out, deleted: true };
}
