import * as Y from 'yjs';
import type { CommonQueryMethods } from 'slonik';
import type { Document, Hocuspocus } from '@hocuspocus/server';
import { PAD_FRAGMENT } from '../schema/pad.ts';
import { readBlocks, type Block } from './blocks.ts';
import { catchUpLog } from './store.ts';
import type { Persistence } from './extensions/persistence.ts';
import type { SyncContext } from './syncContext.ts';
import type { Author } from './versions.ts';

/** A pad the API touched stays loaded this long after its last use. */
const KEEP_WARM_MS = 60_000;

type DirectConnection = Awaited<ReturnType<Hocuspocus<SyncContext>['openDirectConnection']>>;

/** A change made in the live document and not yet known to be stored: `done` once it is, `rollback` if it cannot be. */
export type LiveChange<T> = { result: T; update: Uint8Array | null; done(): void; rollback(): void };

/**
 * Server-side access to live documents: a direct connection held open while the API uses a pad, so a
 * busy pad is not reloaded per call, and changes made as one Yjs transaction with the author as the
 * origin's context (attribution reaches persistence with it).
 */
export function createLiveDocs(hocuspocus: Hocuspocus<SyncContext>, persistence: Persistence, onCool: (padId: string) => void) {
  const warm = new Map<string, { connection: Promise<DirectConnection>; lastUse: number }>();

  function connection(padId: string): Promise<DirectConnection> {
    const held = warm.get(padId);
    if (held) {
      held.lastUse = Date.now();
      return held.connection;
    }
    const opened = hocuspocus.openDirectConnection(padId, { system: true });
    warm.set(padId, { connection: opened, lastUse: Date.now() });
    opened.catch(() => warm.delete(padId));
    return opened;
  }

  const sweep = setInterval(() => {
    for (const [padId, held] of warm) {
      if (Date.now() - held.lastUse < KEEP_WARM_MS) continue;
      warm.delete(padId);
      onCool(padId);
      void held.connection.then((c) => c.disconnect({ unloadImmediately: true }), () => {});
    }
  }, KEEP_WARM_MS / 2);

  return {
    async document(padId: string): Promise<Document> {
      return (await connection(padId)).document!;
    },

    /** The pad's blocks as the live document has them now. */
    async read(padId: string): Promise<Block[]> {
      return readBlocks((await connection(padId)).document!.getXmlFragment(PAD_FRAGMENT));
    },

    /**
     * Brings the live copy up to what the database holds: what other instances appended reaches it
     * (and its clients), even without Redis or before Redis delivered it.
     */
    async catchUp(document: Document, conn: CommonQueryMethods) {
      await catchUpLog(conn, document.name, document);
    },

    /**
     * Runs `change` in one Yjs transaction on the live document and hands back the update it made.
     * The people in the pad get it only once the caller has stored it and calls `done`: a client that
     * held a change the store then lost (the process killed before its commit) would send it back
     * after a restart, and a retry of the same call would apply it a second time. `rollback` takes
     * the change back out of the live document and logs both the change and its undoing, so the log
     * has no gap and nets to nothing; clients then get the two together, which is nothing.
     */
    apply<T>(document: Document, author: Author, change: (fragment: Y.XmlFragment) => T): LiveChange<T> {
      const fragment = document.getXmlFragment(PAD_FRAGMENT);
      const origin = { source: 'local', context: { author, participantId: author?.id ?? null, persisted: true } satisfies SyncContext };
      const updates: Uint8Array[] = [];
      const capture = (update: Uint8Array, from: unknown) => {
        if (from === origin) updates.push(update);
      };
      const undo = new Y.UndoManager(fragment, { trackedOrigins: new Set([origin]), captureTimeout: 0 });
      let result!: T;
      // What others typed before this change goes out now; this change, and whatever is typed while
      // it is stored (a few milliseconds), waits in Hocuspocus' broadcast buffer until it is durable.
      document.flush();
      const delay = document.flushDelay;
      document.flushDelay = HOLD_BROADCAST_MS;
      document.on('update', capture);
      try {
        document.transact(() => {
          result = change(fragment);
        }, origin);
      } catch (error) {
        undo.destroy();
        document.flush();
        throw error;
      } finally {
        document.off('update', capture);
        document.flushDelay = delay;
      }
      const update = updates.length === 0 ? null : updates.length === 1 ? updates[0]! : Y.mergeUpdates(updates);
      return {
        result,
        update,
        done() {
          undo.destroy();
          if (update) persistence.appended(document.name);
          document.flush();
        },
        rollback() {
          if (update) {
            persistence.queue(document.name, update);
            undo.undo();
          }
          undo.destroy();
          document.flush();
        },
      };
    },

    async close() {
      clearInterval(sweep);
      const held = [...warm.values()];
      warm.clear();
      // All at once: each unload waits out the Redis extension's delay for last updates (a second or
      // two), which one after another made a shutdown with many pads warm take minutes.
      await Promise.all(held.map(({ connection }) => connection.then((c) => c.disconnect({ unloadImmediately: true }), () => {})));
    },
  };
}

export type LiveDocs = ReturnType<typeof createLiveDocs>;

/** A held change goes out after this long even if its writer never said: a backstop, not a path. */
const HOLD_BROADCAST_MS = 10_000;
