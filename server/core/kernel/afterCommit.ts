/**
 * What a write tells every instance once it commits (kept reads dropped, waits woken, credential
 * caches dropped), said from inside its transaction: `afterCommit(tx, { wake: `thread:${id}` })`.
 * Every write to a table kept reads come from, to a thread's version, an inbox or a credential's end
 * says so here; the database tells nobody by itself (migration 0040).
 */
import type { CommonQueryMethods } from 'slonik';
import { afterCommit } from '../../db/afterCommit.ts';

export { afterCommit, type Announcement, type KeptTable, type WakeKey } from '../../db/afterCommit.ts';

/** Threads whose version this write raised: their waits wake and kept reads drop, once it commits. */
export function threadsMoved(conn: CommonQueryMethods, ...threadIds: readonly string[]): void {
  afterCommit(conn, { reads: 'threads' }, ...threadIds.map((id) => ({ wake: `thread:${id}` as const })));
}

/** Credentials this write revoked, cut short or deleted: every instance forgets them once it commits. */
export function credentialsEnded(conn: CommonQueryMethods, ids: readonly string[]): void {
  afterCommit(conn, ...ids.map((id) => ({ credentialEnded: id })));
}
