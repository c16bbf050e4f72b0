import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { HubRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import { notFound } from '../../../schema/errors.ts';

/**
 * A hub's front pad: the one pad its owner or a helper puts beside the Read me first (the app tool
 * `ui_set_front_pad`), which `open_hub` shows there. None until someone chooses one (migration 0025).
 */
const FrontPadRow = z.object({ id: z.string(), title: z.string(), version: z.number().int(), updated_at: z.number() });
export type FrontPad = z.infer<typeof FrontPadRow>;

export const FrontPadJson = FrontPadRow.nullable();

/** The hub's front pad as one SQL expression yielding a JSON object (`FrontPadJson`), or null: open_hub reads it with the rest of the hub. */
export const frontPadJson = (hubId: string) => sql.fragment`(
    SELECT json_build_object('id', p.id, 'title', p.title, 'version', p.version, 'updated_at', floor(extract(epoch FROM p.updated_at) * 1000))
    FROM hub_front_pads f JOIN pads p ON p.id = f.pad_id WHERE f.hub_id = ${hubId})`;

export async function frontPadOf(conn: CommonQueryMethods, hubId: string): Promise<FrontPad | null> {
  return conn.oneFirst(sql.type(z.object({ pad: FrontPadJson }))`SELECT ${frontPadJson(hubId)} AS pad`);
}

export type FrontPadChoice = { hub: HubRow; frontPad: FrontPad | null; changed: boolean };

/** Makes one of the hub's pads its front pad, or (`padId` null) leaves it with none. */
export async function setFrontPad(tx: CommonQueryMethods, actor: Actor, hub: HubRow, padId: string | null): Promise<FrontPadChoice> {
  const before = await frontPadOf(tx, hub.id);
  if (padId === null) {
    await tx.query(sql.unsafe`DELETE FROM hub_front_pads WHERE hub_id = ${hub.id}`);
    return { hub, frontPad: null, changed: before !== null };
  }
  const inHub = await tx.exists(sql.unsafe`SELECT 1 FROM pads WHERE id = ${padId} AND hub_id = ${hub.id}`);
  if (!inHub) throw notFound(`${hub.slug} has no pad with this id; open_hub "${hub.slug}" lists its pads.`);
  await tx.query(sql.unsafe`
    INSERT INTO hub_front_pads (hub_id, pad_id, set_by) VALUES (${hub.id}, ${padId}, ${actor.id})
    ON CONFLICT (hub_id) DO UPDATE SET pad_id = excluded.pad_id, set_by = excluded.set_by, set_at = now()`);
  return { hub, frontPad: await frontPadOf(tx, hub.id), changed: before?.id !== padId };
}
