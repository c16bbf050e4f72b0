import { sql, type FragmentSqlToken } from 'slonik';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';

/**
 * What a reader may read, as SQL conditions over many rows at once (search, its lanes, the home): the
 * same rules as one item's read (`readableThread`, `readablePad`). A hub they have a seat in, or a
 * public hub where public reading is on; a thread or pad of such a hub, or one they hold an item seat
 * on (a thread's seat covers the pads beside it); a sub-agent key only its granted threads, the pads
 * beside them and its granted pads, and no hub as a whole. `reader` null reads as signed out.
 */
export type ReadableScope = {
  /** Over a hub aliased `h`. */
  hub: FragmentSqlToken;
  /** Over a thread aliased `t` in its hub `h`. */
  thread: FragmentSqlToken;
  /** Over a pad aliased `p` in its hub `h`. */
  pad: FragmentSqlToken;
  /** A sub-agent key: hubs as a whole are outside its grant. */
  granted: boolean;
};

export function readableScope(core: Core, reader: Actor | null): ReadableScope {
  const who = reader?.id ?? null;
  const grant = reader?.grant ?? null;
  const grantThreads = sql.array([...(grant?.threads ?? [])], 'text');
  const grantPads = sql.array([...(grant?.pads ?? [])], 'text');
  const hubSeen = sql.fragment`(EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = h.id AND m.participant_id = ${who})
    OR (${core.config.publicThreads} AND h.audience = 'public'))`;
  const itemSeat = (items: FragmentSqlToken) =>
    sql.fragment`EXISTS (SELECT 1 FROM item_members i WHERE i.item_id IN (${items}) AND i.participant_id = ${who})`;
  return {
    // A deleted hub, and everything in it, reads as missing to everyone, item seats included.
    hub: sql.fragment`(${grant === null} AND h.deleted_at IS NULL AND ${hubSeen})`,
    thread: sql.fragment`(h.deleted_at IS NULL AND (${hubSeen} OR ${itemSeat(sql.fragment`t.id`)}) AND (${grant === null} OR t.id = ANY(${grantThreads})))`,
    pad: sql.fragment`(p.deleted_at IS NULL AND h.deleted_at IS NULL AND (${hubSeen} OR ${itemSeat(sql.fragment`p.id, p.thread_id`)})
      AND (${grant === null} OR p.id = ANY(${grantPads}) OR p.thread_id = ANY(${grantThreads})))`,
    granted: grant !== null,
  };
}
