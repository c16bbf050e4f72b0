import pg from 'pg';
import type { Logger } from './logger.ts';

/** The channel the triggers of migration 0007 notify when a table that reads keep changes. */
export const READ_CHANGES_CHANNEL = 'dotpad_reads';
/** The channel the triggers of migration 0008 notify, with the credential's id, when one ends. */
export const CREDENTIALS_CHANNEL = 'dotpad_credentials';
/** The channel the triggers of migrations 0015 and 0018 notify with the key of what waiters wait on. */
export const WAITS_CHANNEL = 'dotpad_waits';

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

/** Told of changes made anywhere, and of whether changes made elsewhere can be heard at all. */
export type ChangeListener = {
  /** Something that reads keep changed, here or on another instance. */
  changed(): void;
  /** Whether changes made by other instances are heard; while they are not, nothing may be kept. */
  hearing(on: boolean): void;
  /** A credential was revoked, cut short or deleted, here or on another instance (its id). */
  credentialEnded?(id: string): void;
  /** What `wait_for_changes` waits on changed, here or on another instance (`thread:<id>`, `pad:<id>`, `inbox:<id>`). */
  woke?(key: string): void;
};

/**
 * Changes committed by other instances, heard over LISTEN on a connection of its own (the pool's
 * connections come and go). The listener hears `hearing(true)` once LISTEN is in place, and
 * `hearing(false)` as soon as the connection is lost, until a new one listens again; a notification
 * that came while nobody listened is lost, so whatever was kept before must go (which
 * `hearing(false)` tells).
 */
export function listenForChanges(url: string, log: Logger, listener: ChangeListener): { close(): Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | undefined;

  const lost = (reason: string) => {
    if (!client) return;
    const gone = client;
    client = null;
    listener.hearing(false);
    gone.removeAllListeners();
    gone.on('error', () => {});
    void gone.end().catch(() => {});
    if (closed) return;
    log.warn('the change feed lost its connection; kept reads are off until it is back', { reason, retryMs });
    timer = setTimeout(connect, retryMs);
    retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
  };

  async function connect() {
    if (closed) return;
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, application_name: 'dotpad change feed' });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === CREDENTIALS_CHANNEL) listener.credentialEnded?.(message.payload ?? '');
      else if (message.channel === WAITS_CHANNEL) listener.woke?.(message.payload ?? '');
      else listener.changed();
    });
    next.on('error', (error) => lost(error.message));
    next.on('end', () => lost('the connection ended'));
    try {
      await next.connect();
      await next.query(`LISTEN ${READ_CHANGES_CHANNEL}; LISTEN ${CREDENTIALS_CHANNEL}; LISTEN ${WAITS_CHANNEL}`);
    } catch (error) {
      lost((error as Error).message);
      return;
    }
    if (client !== next || closed) return;
    retryMs = RETRY_MIN_MS;
    listener.hearing(true);
  }

  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const open = client;
      client = null;
      listener.hearing(false);
      if (open) {
        open.removeAllListeners();
        open.on('error', () => {});
        await open.end().catch(() => {});
      }
    },
  };
}
