import type { connectedPayload, Extension, onAuthenticatePayload } from '@hocuspocus/server';
import type { Logger } from '../../server/db/logger.ts';
import type { PadLog } from '../store.ts';
import type { SyncContext } from '../syncContext.ts';
import type { Author } from '../versions.ts';
import type { Persistence } from './persistence.ts';

/**
 * Who may open a pad over WebSocket; throwing refuses the connection. With `readLog` (the pad is not
 * held here, so this connection's open will load it), the pad's log is read in the same statement as
 * the access, and handed back for the load.
 */
export type SyncAuthenticate = (input: { padId: string; token: string; cookie: string | null; readLog: boolean }) => Promise<{
  readOnly: boolean;
  /** Read-only only because the participant suggests rather than edits directly (re-checked while open). */
  suggests: boolean;
  author: Author;
  credentialId: string | null;
  log?: PadLog;
}>;

const hostOf = (origin: string) => {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return '';
  }
};

/**
 * Authentication on connect: an agent key as the provider's token, or the session cookie of a page
 * of ours, decided by the core. The verdict's author and credential become the connection's context.
 */
export class Authentication implements Extension<SyncContext> {
  extensionName = 'dotpad-authentication';
  // Before any other extension hears of the connection.
  priority = 1_000;

  private readonly authenticate: SyncAuthenticate;
  private readonly hosts: () => Set<string>;
  private readonly log: Logger;
  private readonly persistence: Pick<Persistence, 'readAheadMark' | 'readAheads'>;

  constructor(authenticate: SyncAuthenticate, hosts: () => Set<string>, log: Logger, persistence: Pick<Persistence, 'readAheadMark' | 'readAheads'>) {
    this.authenticate = authenticate;
    this.hosts = hosts;
    this.log = log;
    this.persistence = persistence;
  }

  async onAuthenticate(payload: onAuthenticatePayload<SyncContext>): Promise<SyncContext> {
    let verdict: Awaited<ReturnType<SyncAuthenticate>>;
    const padId = payload.documentName;
    const mark = this.persistence.readAheadMark(payload.instance, padId);
    try {
      // A browser's cookie rides on any WebSocket it opens, whichever page opened it: without a
      // key, the page must be one of ours.
      const origin = payload.requestHeaders.get('origin');
      if (!payload.token.startsWith('svc') && origin && !this.hosts().has(hostOf(origin))) {
        throw new Error('cross-site WebSocket refused');
      }
      verdict = await this.authenticate({ padId, token: payload.token, cookie: payload.requestHeaders.get('cookie'), readLog: mark !== null });
    } catch (error) {
      // Refused: logged here, structured; an error without a message keeps Hocuspocus from
      // printing it to the console as well. The client gets Hocuspocus' permission-denied close.
      this.log.info('pad connection refused', { padId, reason: (error as Error).message });
      throw new Error('');
    }
    if (verdict.log && mark !== null) this.persistence.readAheads.keep(payload.connectionConfig, padId, verdict.log, mark);
    payload.connectionConfig.readOnly = verdict.readOnly;
    return { author: verdict.author, participantId: verdict.author?.id ?? null, credentialId: verdict.credentialId, suggests: verdict.suggests };
  }

  /** Connected to a pad that another connection loaded meanwhile: the log read ahead is not needed. */
  async connected({ connectionConfig }: connectedPayload<SyncContext>) {
    this.persistence.readAheads.drop(connectionConfig);
  }
}
