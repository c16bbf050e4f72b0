import type { beforeSyncPayload, Extension } from '@hocuspocus/server';
import { messageYjsSyncStep1 } from 'y-protocols/sync';
import { PAD_FULL_REASON, PAD_MAX_CHARS } from '../../schema/pad.ts';
import type { Logger } from '../../server/db/logger.ts';
import { fitsWithin } from '../padSize.ts';
import type { SyncContext } from '../syncContext.ts';

/**
 * Thrown from a hook to close a connection with this reason. Not an Error on purpose: Hocuspocus
 * prints what closes a connection, and this prints as one line, not a stack.
 */
class PadFull {
  readonly reason = PAD_FULL_REASON;
}

/**
 * The size limit on live changes: a change that would make the pad longer than PAD_MAX_CHARS is not
 * applied, and its connection is closed with the reason (the editor keeps the text and shows why it
 * is not saved). Step 1 of a sync only asks; read-only connections are refused their changes by
 * Hocuspocus itself.
 */
export class SizeLimit implements Extension<SyncContext> {
  extensionName = 'dotpad-size-limit';

  private readonly log: Logger;
  private readonly max: number;

  constructor(log: Logger, max = PAD_MAX_CHARS) {
    this.log = log;
    this.max = max;
  }

  async beforeSync({ type, payload, document, documentName, connection }: beforeSyncPayload<SyncContext>) {
    if (type === messageYjsSyncStep1 || connection.readOnly || fitsWithin(document, payload, this.max)) return;
    this.log.info('live change refused: the pad would pass its size limit', { padId: documentName });
    throw new PadFull();
  }
}
