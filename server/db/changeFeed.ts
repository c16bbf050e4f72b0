import pg from 'pg';
import type { Logger } from './logger.ts';

/** The channel told, with the table's name, when a table that reads keep changes (`afterCommit.ts`). */
export const READ_CHANGES_CHANNEL = 'dotpad_reads';
/** The channel told, with the credential's id, when one ends (revoked, cut short, deleted). */
export const CREDENTIALS_CHANNEL = 'dotpad_credentials';
/** The channel told the key of what waiters wait on (`thread:<id>`, `pad:<id>`, `inbox:<participant id>`). */
export const WAITS_CHANNEL = 'dotpad_waits';

const RETRY_MIN_MS = 200;
/**
 * Announcements of one instance go out at most this often, each batch one statement: however many
 * edits commit, the others hear of them within this much more, and the instance sends a hundred
 * small statements a second at most rather than one per edit.
 */
const ANNOUNCE_EVERY_MS = 10;
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

/** The change feed of one instance: what it hears, and what it tells the others. */
export type ChangeFeed = {
  /**
   * Tells every other instance on `channel`, after the change has committed and outside any write's
   * transaction: a NOTIFY takes a lock over the whole database at commit, which would let one
   * committing write through at a time. Sent in batches, one statement each. The feed does not hand
   * its own back to the listener: the caller tells this instance's listeners itself, at once.
   */
  announce(channel: string, payload: string): void;
  close(): Promise<void>;
};

/**
 * Changes committed by other instances, heard over LISTEN on a connection of its own (the pool's
 * connections come and go). The listener hears `hearing(true)` once LISTEN is in place, and
 * `hearing(false)` as soon as the connection is lost, until a new one listens again; a notification
 * that came while nobody listened is lost, so whatever was kept before must go (which
 * `hearing(false)` tells). The same connection sends this instance's announcements: what waits for
 * it to come back is sent then.
 */
export function listenForChanges(url: string, log: Logger, listener: ChangeListener): ChangeFeed {
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | undefined;
  // Announcements waiting to be sent, deduplicated (Postgres folds equal ones of a transaction anyway).
  let waiting = new Set<string>();
  let sending: Promise<void> | null = null;
  let scheduled = false;

  function schedule() {
    if (scheduled || sending || !waiting.size) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      send();
    }, ANNOUNCE_EVERY_MS);
  }

  function send() {
    const to = client;
    if (!to || !listening || sending || !waiting.size) return;
    const batch = waiting;
    waiting = new Set();
    const pairs = [...batch].map((entry) => JSON.parse(entry) as [string, string]);
    sending = to
      .query('SELECT count(pg_notify(c, p)) FROM unnest($1::text[], $2::text[]) AS n(c, p)', [pairs.map(([c]) => c), pairs.map(([, p]) => p)])
      .then(
        () => {},
        (error: Error) => {
          // The connection is lost (lost() reconnects) or the statement failed: the batch goes again.
          for (const entry of batch) waiting.add(entry);
          log.warn('could not announce changes to other instances; they go again once the feed is back', { message: error.message });
        },
      )
      .finally(() => {
        sending = null;
        if (client === to) schedule();
      });
  }

  const lost = (reason: string) => {
    if (!client) return;
    const gone = client;
    client = null;
    listening = false;
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
    // This instance's own announcements come back to it: it told its own listeners when it announced.
    let ownPid: number | null = null;
    next.on('notification', (message) => {
      if (message.processId === ownPid) return;
      if (message.channel === CREDENTIALS_CHANNEL) listener.credentialEnded?.(message.payload ?? '');
      else if (message.channel === WAITS_CHANNEL) listener.woke?.(message.payload ?? '');
      else listener.changed();
    });
    next.on('error', (error) => lost(error.message));
    next.on('end', () => lost('the connection ended'));
    try {
      await next.connect();
      await next.query(`LISTEN ${READ_CHANGES_CHANNEL}; LISTEN ${CREDENTIALS_CHANNEL}; LISTEN ${WAITS_CHANNEL}`);
      ownPid = (await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    } catch (error) {
      lost((error as Error).message);
      return;
    }
    if (client !== next || closed) return;
    retryMs = RETRY_MIN_MS;
    listening = true;
    listener.hearing(true);
    schedule();
  }

  void connect();
  return {
    announce(channel, payload) {
      if (closed) return;
      waiting.add(JSON.stringify([channel, payload]));
      schedule();
    },
    async close() {
      closed = true;
      // What was announced before closing goes out first (a clean stop loses no wake-up).
      await sending;
      send();
      await sending;
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
