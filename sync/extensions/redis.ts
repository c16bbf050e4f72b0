import { Redis } from '@hocuspocus/extension-redis';
import { OutgoingMessage, isTransactionOrigin, type afterUnloadDocumentPayload, type onChangePayload } from '@hocuspocus/server';
import * as Y from 'yjs';
import type { Logger } from '../../server/db/logger.ts';

/**
 * After a pad's last change here, at most this long until this instance's state vector goes to the
 * others holding it, who answer with what it lacks and ask for what they lack: whatever a lost
 * message left out (Redis' publish reaches those subscribed at that moment, once) is made up then.
 */
const RESYNC_MS = 5_000;
/** A failing connection to Redis is logged at most this often. */
const ERROR_QUIET_MS = 10_000;

/**
 * Hocuspocus' Redis extension, with each change passed on as itself. The extension as it is
 * announces a change by this instance's state vector, and every other instance holding the pad
 * answers with a diff of its whole document and its own state vector, for which this one diffs its
 * whole document again: two round trips through Redis and work that grows with the pad, per change.
 * Here the change's own update goes out (the changes of one turn of the event loop merged into one
 * message), and the others apply it with the origin "redis" as before. The exchange of state vectors
 * stays as the repair: on loading a pad (the extension's own), and once within `RESYNC_MS` after a
 * pad's last change, so that a message lost while a connection to Redis came back is made up.
 */
class RelayingRedis extends Redis {
  private readonly relayed = new Map<string, { document: onChangePayload['document']; updates: Uint8Array[] }>();
  private readonly resyncs = new Map<string, NodeJS.Timeout>();
  private readonly log: Logger;

  constructor(configuration: ConstructorParameters<typeof Redis>[0], log: Logger) {
    super(configuration);
    this.log = log;
    // ioredis connects again by itself; what went wrong is logged, once a while per connection, rather
    // than printed raw on every try.
    for (const [role, client] of [['publishing', this.pub], ['subscribed', this.sub]] as const) {
      let quietUntil = 0;
      client.on('error', (error: Error) => {
        if (Date.now() < quietUntil) return;
        quietUntil = Date.now() + ERROR_QUIET_MS;
        this.log.warn('a connection to Redis failed; it connects again by itself', { connection: role, message: error.message });
      });
    }
  }

  override async onChange(data: onChangePayload): Promise<void> {
    const origin = data.transactionOrigin;
    if (isTransactionOrigin(origin) && origin.source === 'redis') return;
    const pending = this.relayed.get(data.documentName);
    if (pending && pending.document === data.document) {
      pending.updates.push(data.update);
    } else {
      this.relayed.set(data.documentName, { document: data.document, updates: [data.update] });
      setImmediate(() => this.relay(data.documentName));
    }
    if (!this.resyncs.has(data.documentName)) {
      const timer = setTimeout(() => {
        this.resyncs.delete(data.documentName);
        // The extension's own announcement: this instance's state vector, answered by the others.
        if (this.instance.documents.get(data.documentName) === data.document) void super.onChange(data);
      }, RESYNC_MS);
      timer.unref();
      this.resyncs.set(data.documentName, timer);
    }
  }

  private relay(documentName: string) {
    const pending = this.relayed.get(documentName);
    if (!pending) return;
    this.relayed.delete(documentName);
    if (this.instance.documents.get(documentName) !== pending.document) return;
    const update = pending.updates.length === 1 ? pending.updates[0]! : Y.mergeUpdates(pending.updates);
    const message = new OutgoingMessage(documentName).createSyncMessage().writeUpdate(update).toUint8Array();
    this.pub.publish(`${this.configuration.prefix}:${documentName}`, Buffer.concat([this.messagePrefix, message])).catch((error: Error) => {
      // The next exchange of state vectors (within RESYNC_MS) brings it to the others.
      this.log.warn('could not pass a live change on through Redis; the next exchange of state vectors will', { padId: documentName, message: error.message });
    });
  }

  override async afterUnloadDocument(data: afterUnloadDocumentPayload): Promise<void> {
    if (!data.instance.documents.has(data.documentName)) {
      clearTimeout(this.resyncs.get(data.documentName));
      this.resyncs.delete(data.documentName);
    }
    return super.afterUnloadDocument(data);
  }
}

/**
 * The Redis extension on the server a redis:// URL names. Several instances: each change is passed
 * on to the others holding the pad, which apply it with the origin "redis" and leave its persisting
 * and versioning to the instance where it was made.
 */
export function redisExtension(url: string, log: Logger) {
  const parsed = new URL(url);
  return new RelayingRedis(
    {
      host: parsed.hostname,
      port: Number(parsed.port || 6379),
      prefix: 'dotpad',
      options: {
        ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
        ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
        ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
        ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
      },
    },
    log,
  );
}
