import type { CommonQueryMethods } from 'slonik';

/** A key `wait_for_changes` waits on: a thread's or a pad's version, or a participant's inbox. */
export type WakeKey = `thread:${string}` | `pad:${string}` | `inbox:${string}`;

/**
 * What an instance tells every instance once a write has committed: a key waiters wait on, a table
 * reads keep (any change drops every kept read; the name says which), or a credential that ended
 * (revoked, cut short or deleted: every instance drops its credential cache and closes the live
 * connections opened with it).
 */
export type Announcement = { wake: WakeKey } | { reads: KeptTable } | { credentialEnded: string };

/** The tables kept reads are read from: a write to one of them drops the kept reads of every instance. */
export type KeptTable = 'threads' | 'hubs' | 'hub_members' | 'participants' | 'pads' | 'item_members' | 'link_requests' | 'takeover_requests';

/** The announcements of each write in progress, by the connection its handler was given. */
const pending = new WeakMap<CommonQueryMethods, Set<string>>();

/**
 * Says, from inside a write (`Db.write`, `writeOrBusy`, `writeStatement`), what to tell every
 * instance once it commits; a write that rolls back tells nothing. Nothing is sent on `conn`: the
 * announcements go out after the commit over the change feed (`Db.announce`), so a notifying write
 * does not commit behind every other one (a NOTIFY takes one lock over the whole database at commit).
 * A connection no write of `Db` handed out is refused: what it wrote would go untold.
 */
export function afterCommit(conn: CommonQueryMethods, ...what: Announcement[]): void {
  const list = pending.get(conn);
  if (!list) throw new Error('afterCommit needs the connection of a write of Db (write, writeOrBusy or writeStatement).');
  for (const one of what) list.add(JSON.stringify(one));
}

/**
 * Runs `handler` with announcements collected for `conn`; returns them with its answer. A handler
 * run again (a transaction retried) starts a fresh list.
 */
export async function collecting<C extends CommonQueryMethods, T>(conn: C, handler: (conn: C) => Promise<T>): Promise<{ value: T; announcements: Announcement[] }> {
  const list = new Set<string>();
  pending.set(conn, list);
  try {
    const value = await handler(conn);
    return { value, announcements: [...list].map((one) => JSON.parse(one) as Announcement) };
  } finally {
    pending.delete(conn);
  }
}
