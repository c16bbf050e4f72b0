import * as Y from 'yjs';
import { ForeignKeyIntegrityConstraintViolationError } from 'slonik';
import type { Extension, Hocuspocus, onChangePayload, onLoadDocumentPayload, afterUnloadDocumentPayload } from '@hocuspocus/server';
import type { Db } from '../../server/db/database.ts';
import type { Logger } from '../../server/db/logger.ts';
import { appendUpdates, compact, compactionDue, loadInto, tailSize, type PadLog } from '../store.ts';
import { startFolding } from '../fold.ts';
import { ReadAheads } from '../readAhead.ts';
import type { SyncContext } from '../syncContext.ts';

/** Live updates reach the database within this long. */
const LIVE_FLUSH_MS = 100;
/** How many appends to a pad between two looks at the size of its log. */
const TAIL_CHECK_EVERY = 50;

/** Several updates of one pad as one. */
const merged = (updates: Uint8Array[]) => (updates.length === 1 ? updates[0]! : Y.mergeUpdates(updates));

/**
 * Persistence of live documents: a pad loads from its snapshot and log, and every update made on
 * this instance is appended to the log within LIVE_FLUSH_MS. What every pad queued in that time is
 * appended by one statement, a row per pad (several queued updates of a pad as one): hundreds of
 * pads typed in at once were hundreds of statements a second, each a round trip and a commit.
 * Updates that arrive from another instance (origin "redis") are that instance's to store; changes
 * whose context says `persisted` were stored by whoever made them (an API edit, in its own
 * statement). Every so many appends the log is folded into a snapshot, off the path of whoever
 * appended.
 */
export class Persistence implements Extension<SyncContext> {
  extensionName = 'dotpad-persistence';
  /** Updates not appended yet, by pad, in the order they came. */
  private readonly queues = new Map<string, Uint8Array[]>();
  /** Set while something is queued: when it all goes. */
  private timer: NodeJS.Timeout | null = null;
  private readonly appending = new Set<Promise<void>>();
  private readonly appends = new Map<string, number>();
  private compactions = Promise.resolve();
  private closing = false;
  /** Logs read with the access of the connection that opens the pad, for its load. */
  readonly readAheads = new ReadAheads();

  private readonly db: Db;
  private readonly log: Logger;

  constructor(db: Db, log: Logger) {
    this.db = db;
    this.log = log;
    startFolding();
  }

  /**
   * A pad loads from its snapshot and log. Appends are counted per load, so a pad opened for short
   * sittings (fewer than TAIL_CHECK_EVERY appends each) would never be looked at, and its log would
   * grow without end, every cold open replaying all of it: a load that finds the log due folds it,
   * from what it has just read, once the open is served. A connection's load applies the log its
   * authentication read, if it read one and nothing here touched the pad since (readAhead.ts).
   */
  async onLoadDocument({ document, documentName, connectionConfig }: onLoadDocumentPayload<SyncContext>) {
    const read = this.readAheads.take(connectionConfig, documentName);
    this.readAheads.touch(documentName);
    const loaded = await loadInto(this.db, documentName, document, read);
    if (compactionDue({ n: loaded.tail, bytes: loaded.tailBytes })) this.compactLater(documentName, loaded.log);
  }

  async onChange({ documentName, update, transactionOrigin }: onChangePayload<SyncContext>) {
    const origin = transactionOrigin as { source?: string; context?: SyncContext; skipStoreHooks?: boolean } | undefined;
    // From the log itself (a live copy catching up with the database): stored already.
    if (origin?.source === 'redis' || origin?.context?.persisted || origin?.skipStoreHooks) return;
    this.queue(documentName, update);
  }

  async afterUnloadDocument({ documentName }: afterUnloadDocumentPayload) {
    this.appends.delete(documentName);
    this.readAheads.touch(documentName);
  }

  /** The mark with which a connection may read the pad's log with its access, or null (`ReadAheads.mark`). */
  readAheadMark(instance: Hocuspocus, padId: string): number | null {
    return this.readAheads.mark(instance, padId, this.queues.has(padId));
  }

  /** Puts an update on the pad's queue, to be appended shortly. */
  queue(padId: string, update: Uint8Array) {
    this.readAheads.touch(padId);
    const queued = this.queues.get(padId);
    if (queued) queued.push(update);
    else this.queues.set(padId, [update]);
    this.timer ??= setTimeout(() => void this.appendQueued(), LIVE_FLUSH_MS);
  }

  /** The pad's queued updates as one, taken off the queue (for a statement that appends them itself); null when none wait. */
  take(padId: string): Uint8Array | null {
    const queued = this.queues.get(padId);
    if (!queued) return null;
    this.queues.delete(padId);
    return merged(queued);
  }

  /** Appends everything queued, every pad's in one statement; resolves once it is stored (or queued again). */
  private appendQueued(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.queues].map(([padId, updates]) => ({ padId, update: merged(updates) }));
    this.queues.clear();
    if (!batch.length) return Promise.resolve();
    const run = this.append(batch);
    this.appending.add(run);
    void run.finally(() => this.appending.delete(run));
    return run;
  }

  private async append(batch: { padId: string; update: Uint8Array }[]) {
    try {
      await appendUpdates(this.db.pool, batch);
      for (const { padId } of batch) this.appended(padId);
    } catch (error) {
      if (error instanceof ForeignKeyIntegrityConstraintViolationError) {
        // A pad itself was never saved (its creation failed and was taken back): nothing to keep of
        // it. Which one is not said, so each pad's updates go again on their own.
        if (batch.length > 1) {
          await Promise.all(batch.map((append) => this.append([append])));
          return;
        }
        this.log.warn('updates of a pad that does not exist dropped', { padId: batch[0]!.padId });
        return;
      }
      this.log.error('pad updates not saved; retrying', { padIds: batch.map(({ padId }) => padId), error });
      if (!this.closing) for (const { padId, update } of batch) this.queue(padId, update);
    }
  }

  /** Counts an append to the pad's log (live typing and API edits alike); every so many, compacts a grown log. */
  appended(padId: string) {
    this.readAheads.touch(padId);
    const count = (this.appends.get(padId) ?? 0) + 1;
    this.appends.set(padId, count);
    if (count < TAIL_CHECK_EVERY) return;
    this.appends.delete(padId);
    this.compactLater(padId);
  }

  /**
   * Compacts the pad's log after those already queued, if it is due (known from `log` as read, or
   * else read now); not before the next turn of the event loop, so that handing the log to the fold's
   * thread does not delay what the caller does next (a cold open answers its client first).
   */
  private compactLater(padId: string, log?: PadLog) {
    this.compactions = this.compactions.then(async () => {
      await new Promise(setImmediate);
      try {
        if (log) await compact(this.db, padId, log);
        else if (compactionDue(await tailSize(this.db.pool, padId))) await compact(this.db, padId);
      } catch (error) {
        this.log.error('pad log not compacted', { padId, error });
      }
    });
  }

  /** Everything queued reaches the database (with the appends already under way), and running compactions end. */
  async flush() {
    await Promise.all([...this.appending, this.appendQueued()]);
    await this.compactions;
  }

  /** The last flush: a write that fails now is not queued again. */
  async close() {
    await this.flush();
    this.closing = true;
    await this.flush();
  }
}
