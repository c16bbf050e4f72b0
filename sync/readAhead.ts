import type { ConnectionConfiguration, Hocuspocus } from '@hocuspocus/server';
import type { PadLog } from './store.ts';

/** Pads remembered by `touched` before it is emptied; a read-ahead older than the emptying is not used. */
const TOUCHED_KEPT = 10_000;

/**
 * Pad logs read ahead of their load. A connection to a pad this instance does not hold reads its
 * access and the pad's log in one statement (`readablePadWithLog`), and Hocuspocus' load of the pad
 * for that connection, which follows at once, applies that log instead of reading it a second time.
 * A log read ahead is kept for its connection only (by its `ConnectionConfiguration`, which
 * Hocuspocus hands to the load it starts for that connection), and is used only if nothing this
 * instance did to the pad came after the read began: no load, unload, queued or appended update
 * (`touch`). Otherwise the load reads the log as it always did. What other instances append meanwhile
 * reaches the loaded pad as it does after any load (the Redis extension's sync).
 */
export class ReadAheads {
  private readonly kept = new WeakMap<ConnectionConfiguration, { padId: string; log: PadLog; mark: number }>();
  /** Everything this instance does to a pad's log or its live copy, numbered in order: the last number of each pad. */
  private readonly touched = new Map<string, number>();
  private count = 0;
  /** The count when `touched` was last emptied. */
  private forgotten = 0;

  /** Something this instance did changes the pad's log or its live copy: logs read ahead before now are not used. */
  touch(padId: string) {
    if (this.touched.size >= TOUCHED_KEPT) {
      this.touched.clear();
      this.forgotten = this.count;
    }
    this.touched.set(padId, ++this.count);
  }

  /**
   * Whether a connection may read the pad's log ahead, with its access: only when this instance holds
   * nothing of the pad (not loaded, loading or unloading, no update of it waiting to be stored). The
   * mark to keep the log with, or null.
   */
  mark(instance: Hocuspocus, padId: string, waiting: boolean): number | null {
    if (waiting || instance.documents.has(padId) || instance.loadingDocuments.has(padId) || instance.unloadingDocuments.has(padId)) return null;
    return this.count;
  }

  /** Keeps the log read ahead for the load that `connection`'s authentication is followed by. */
  keep(connection: ConnectionConfiguration, padId: string, log: PadLog, mark: number) {
    this.kept.set(connection, { padId, log, mark });
  }

  /** The log read ahead for this load, if there is one and nothing touched the pad since; either way it is no longer kept. */
  take(connection: ConnectionConfiguration, padId: string): PadLog | undefined {
    const ahead = this.kept.get(connection);
    if (!ahead) return undefined;
    this.kept.delete(connection);
    const fresh = ahead.padId === padId && this.forgotten <= ahead.mark && (this.touched.get(padId) ?? 0) <= ahead.mark;
    return fresh ? ahead.log : undefined;
  }

  /** A connection whose pad was loaded already (by another connection, meanwhile) lets go of the log it read. */
  drop(connection: ConnectionConfiguration) {
    this.kept.delete(connection);
  }
}
