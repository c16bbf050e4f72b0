import type { CommonQueryMethods } from 'slonik';
import { afterCommit } from '../../db/afterCommit.ts';

/*
 * What a write tells every instance once it commits (kept reads dropped, waits woken, credential
 * lookups dropped), said from inside its transaction: `afterCommit(tx, { reads: 'hubs' })`. Every
 * write to a table kept reads come from, to a thread's version, to an inbox or to a credential's end
 * says so; no trigger tells anyone any more (docs/storage.md "Changes are told after their commit").
 */

export { afterCommit, type Announcement, type KeptTable, type WakeKey } from '../../db/afterCommit.ts';

/** Threads whose version this write raised: their waits wake and kept reads drop, once it commits. */
export function threadsMoved(conn: CommonQueryMethods, ...threadIds: readonly string[]): void {
  afterCommit(conn, { reads: 'threads' }, ...threadIds.map((id) => ({ wake: `thread:${id}` as const })));
}

/** Credentials this write revoked, cut short or deleted: every instance forgets them once it commits. */
export function credentialsEnded(conn: CommonQueryMethods, ids: readonly string[]): void {
  afterCommit(conn, ...ids.map((id) => ({ credentialEnded: id })));
}
