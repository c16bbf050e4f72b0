import type { beforeSyncPayload, Extension, Hocuspocus, onChangePayload } from '@hocuspocus/server';
import { messageYjsSyncStep1 } from 'y-protocols/sync';
import { padTextStopReason } from '../../schema/pad.ts';
import type { Logger } from '../../server/db/logger.ts';
import { LIVE_VERSION_MS } from '../liveVersions.ts';
import { liveConnections, type SyncContext } from '../syncContext.ts';
import { addsContent, insertedChars } from '../typedText.ts';

/** What the core gives the live layer to count typed text by (SPEC part 8 "Pad text saved"). */
export type PadTextCount = {
  /**
   * Records the characters each participant typed live (by participant id) in their daily window of
   * pad text saved, all at once (it is in the pad already, so it is recorded whatever the window
   * holds); answers the participants whose window is now past its max, with the time (epoch ms) each
   * may type again.
   */
  count(typed: ReadonlyMap<string, number>): Promise<Map<string, number>>;
  /** The limits' clock (epoch ms): a stop ends by it. */
  now(): number;
};

/** Thrown from a hook to close a connection with this reason; not an Error, so Hocuspocus prints one line. */
class PadTextStopped {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/**
 * The daily limit on pad text, for live typing. The characters each connection inserts (content
 * strings; deletions are free) are summed per participant, and every LIVE_VERSION_MS every typist's
 * sum is recorded in their window, all of them in one small transaction however many type (hundreds
 * of typists were hundreds of transactions every 2 s). Not in the live version's: a version is per
 * pad and named after its last typist while a count is per participant (two typists in one version,
 * one typist on several pads), the version's usual write is one statement with no transaction
 * around it, and a count that fails must not cost a version (it is kept and sent with the next). A
 * participant past the max is stopped on this instance until the window frees room: their writable
 * connections are closed with the reason and the time, and until then any change of theirs that
 * adds something (on any pad, on a new connection too) is refused the same way; deleting is let
 * through. Once the time passes, their next connection types again (the web app reconnects itself
 * then).
 */
export class PadTextPace implements Extension<SyncContext> {
  extensionName = 'dotpad-pad-text-pace';

  /** Characters typed here and not counted yet, by participant. */
  private readonly typed = new Map<string, number>();
  /** Participants stopped, and until when (epoch ms). */
  private readonly stopped = new Map<string, number>();
  private readonly counting = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  private readonly instance: Hocuspocus<SyncContext>;
  private readonly pace: PadTextCount;
  private readonly log: Logger;

  constructor(instance: Hocuspocus<SyncContext>, pace: PadTextCount, log: Logger, everyMs = LIVE_VERSION_MS) {
    this.instance = instance;
    this.pace = pace;
    this.log = log;
    this.timer = setInterval(() => void this.count(), everyMs);
  }

  /** Text a connection's change added to the pad (a change from anywhere else is counted where it was typed, or by its tool). */
  async onChange({ connection, update }: onChangePayload<SyncContext>) {
    const id = connection?.context?.participantId;
    if (!id) return;
    const chars = insertedChars(update);
    if (chars) this.typed.set(id, (this.typed.get(id) ?? 0) + chars);
  }

  async beforeSync({ type, payload, document, connection }: beforeSyncPayload<SyncContext>) {
    if (type === messageYjsSyncStep1 || connection.readOnly) return;
    const until = this.stoppedUntil(connection.context?.participantId);
    if (until === null || !addsContent(payload, document)) return;
    throw new PadTextStopped(padTextStopReason(new Date(until)));
  }

  /** Records what was typed since the last count; resolves once every count under way has ended. */
  count(): Promise<void> {
    const now = this.pace.now();
    for (const [id, until] of this.stopped) if (until <= now) this.stopped.delete(id);
    const batch = new Map(this.typed);
    this.typed.clear();
    const run = batch.size ? this.countBatch(batch) : Promise.resolve();
    this.counting.add(run);
    void run.finally(() => this.counting.delete(run));
    return Promise.all(this.counting).then(() => undefined);
  }

  private async countBatch(batch: Map<string, number>) {
    try {
      for (const [participantId, until] of await this.pace.count(batch)) this.stop(participantId, until);
    } catch (error) {
      this.log.warn('live pad text not counted yet; it goes with the next count', { typists: batch.size, message: (error as Error).message });
      for (const [participantId, chars] of batch) this.typed.set(participantId, (this.typed.get(participantId) ?? 0) + chars);
    }
  }

  private stoppedUntil(participantId: string | null | undefined): number | null {
    if (!participantId) return null;
    const until = this.stopped.get(participantId);
    if (until === undefined) return null;
    if (until > this.pace.now()) return until;
    this.stopped.delete(participantId);
    return null;
  }

  private stop(participantId: string, until: number) {
    const later = Math.max(until, this.stopped.get(participantId) ?? 0);
    this.stopped.set(participantId, later);
    this.log.info('live typing stopped: the pad text of the day passed its limit', { participantId, until: new Date(later).toISOString() });
    const reason = padTextStopReason(new Date(later));
    for (const { connection, context } of liveConnections(this.instance)) {
      if (!connection.readOnly && context?.participantId === participantId) connection.close({ code: 4429, reason });
    }
  }

  async onDestroy() {
    clearInterval(this.timer);
  }
}
