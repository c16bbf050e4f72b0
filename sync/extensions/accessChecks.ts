import type { Extension, Hocuspocus } from '@hocuspocus/server';
import type { Logger } from '../../server/db/logger.ts';
import { liveConnections, type SyncContext } from '../syncContext.ts';

/** How often the access of open live connections is checked again (SPEC part 5: revocation counts within 5 s). */
export const ACCESS_CHECK_MS = 4_000;

/** An open live connection as the check sees it: the pad, who opened it, with which credential, and whether it may write. */
export type OpenAccess = { padId: string; participantId: string | null; credentialId: string | null; readOnly: boolean; suggests: boolean };
/**
 * Of these, the ones that no longer hold: the credential was revoked or ran out, or the pad became
 * unreadable to them (closed); or, with a `reason`, a connection that may write lost that right (the
 * pad was locked, or its person must now suggest: it turns read-only at once), or one read-only
 * because its participant suggested belongs to someone who may now edit directly. Either is closed
 * with the reason, which tells the page to connect again and learn its new scope.
 */
export type AccessRecheck = (open: readonly OpenAccess[]) => Promise<(OpenAccess & { reason?: string })[]>;

/** The close code of a live connection whose right to write changed: the page connects again. */
export const SCOPE_CHANGED = 4_403;

const keyOf = (access: OpenAccess) => `${access.padId} ${access.participantId ?? ''} ${access.credentialId ?? ''} ${access.readOnly}`;

/**
 * Credential re-checks of open live connections: every ACCESS_CHECK_MS, everything this instance
 * holds open is asked about in one call, and the connections whose access ended are closed, whether
 * it ended here or on another instance (a key revoked, a member removed from the hub).
 */
export class AccessChecks implements Extension<SyncContext> {
  extensionName = 'dotpad-access-checks';
  private readonly timer: NodeJS.Timeout;

  private readonly instance: Hocuspocus<SyncContext>;
  private readonly recheck: AccessRecheck;
  private readonly log: Logger;

  constructor(instance: Hocuspocus<SyncContext>, recheck: AccessRecheck, log: Logger, everyMs = ACCESS_CHECK_MS) {
    this.instance = instance;
    this.recheck = recheck;
    this.log = log;
    this.timer = setInterval(() => void this.check(), everyMs);
  }

  private *connections() {
    for (const { padId, connection, context } of liveConnections(this.instance)) {
      yield {
        connection,
        access: { padId, participantId: context?.participantId ?? null, credentialId: context?.credentialId ?? null, readOnly: connection.readOnly, suggests: context?.suggests ?? false },
      };
    }
  }

  async check() {
    const open = new Map<string, OpenAccess>();
    for (const { access } of this.connections()) open.set(keyOf(access), access);
    if (!open.size) return;
    let ended: Awaited<ReturnType<AccessRecheck>>;
    try {
      ended = await this.recheck([...open.values()]);
    } catch (error) {
      this.log.warn('access of live connections not checked', { message: (error as Error).message });
      return;
    }
    if (!ended.length) return;
    const closing = new Map(ended.map((access) => [keyOf(access), access.reason]));
    for (const { connection, access } of this.connections()) {
      const key = keyOf(access);
      if (!closing.has(key)) continue;
      const reason = closing.get(key);
      if (reason === undefined) {
        connection.close();
        continue;
      }
      // Nothing more it sends is taken; the reason reaches the page (the provider's onClose), which connects again.
      connection.readOnly = true;
      connection.close({ code: SCOPE_CHANGED, reason });
    }
  }

  /** Ends every live connection opened with this credential, at once (it was revoked here). */
  closeCredential(credentialId: string) {
    for (const { connection, access } of this.connections()) if (access.credentialId === credentialId) connection.close();
  }

  async onDestroy() {
    clearInterval(this.timer);
  }
}
