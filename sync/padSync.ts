import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import * as Y from 'yjs';
import { ForeignKeyIntegrityConstraintViolationError } from 'slonik';
import { WebSocketServer } from 'ws';
import { Hocuspocus, type Document, type onChangePayload } from '@hocuspocus/server';
import { Redis } from '@hocuspocus/extension-redis';
import { messageYjsSyncStep1 } from 'y-protocols/sync';
import { PAD_FRAGMENT, PAD_FULL_REASON, PAD_MAX_CHARS } from '../schema/pad.ts';
import type { Db } from '../server/db/database.ts';
import type { Logger } from '../server/log.ts';
import { ensureBlockIds, readBlocks, type Block } from './blocks.ts';
import { appendUpdate, compact, COMPACT_AFTER_BYTES, COMPACT_AFTER_UPDATES, loadInto, readPadLog, tailSize } from './store.ts';
import { applyPadLog } from './padLog.ts';
import { startFolding } from './fold.ts';
import { fitsWithin } from './padSize.ts';
import { diffRefs, recordVersion, StaleVersion, toRefs, type Author } from './versions.ts';

export const SYNC_PATH = '/sync';
/** Who changed which blocks in a version. */
export type VersionNote = { version: number; actorId: string | null; changed: readonly string[] };
/** How many of a pad's latest versions are kept in memory, to answer "changed by others since". */
const HISTORY_MAX = 200;
/** Live typing becomes a version at most this often. */
export const LIVE_VERSION_MS = 2_000;
/** Live updates reach the database within this long. */
const LIVE_FLUSH_MS = 100;
/** How many live appends to a pad between two looks at the size of its log. */
const TAIL_CHECK_EVERY = 50;
/** How often the credentials of open live connections are checked (SPEC part 5: revocation counts within 5 s). */
const CREDENTIAL_CHECK_MS = 4_000;
/** A pad the API touched stays loaded this long after its last use. */
const KEEP_WARM_MS = 60_000;

/** Who may open a pad over WebSocket; throwing refuses the connection. */
export type SyncAuthenticate = (input: { padId: string; token: string; cookie: string | null }) => Promise<{ readOnly: boolean; author: Author; credentialId: string | null }>;

type Context = { author?: Author; credentialId?: string | null; persisted?: boolean; system?: boolean };

const hostOf = (origin: string) => {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return '';
  }
};
/** Hocuspocus' Redis extension on the server a redis:// URL names. */
function redisExtension(url: string) {
  const parsed = new URL(url);
  return new Redis({
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    prefix: 'dotpad',
    options: {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
      ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}

/**
 * Thrown from a hook to close a connection with this reason. Not an Error on purpose: Hocuspocus
 * prints what closes a connection, and this prints as one line, not a stack.
 */
class PadFull {
  readonly reason = PAD_FULL_REASON;
}

type DirectConnection = Awaited<ReturnType<Hocuspocus<Context>['openDirectConnection']>>;

export type PadSync = ReturnType<typeof createPadSync>;

/**
 * The live document layer: Hocuspocus holds each open pad, persists every update to the append-only
 * log, turns live typing into versions every ~2 s, and lets the core edit a pad as one transaction on
 * the live document (so people typing see it at once and lose nothing).
 */
export function createPadSync(options: {
  db: Db;
  log: Logger;
  authenticate: SyncAuthenticate;
  hosts: () => Set<string>;
  /** Of these credential ids, the ones revoked or expired since their connections opened. */
  endedCredentials: (ids: readonly string[]) => Promise<string[]>;
  redisUrl?: string | undefined;
}) {
  const { db, log } = options;
  startFolding();
  const queues = new Map<string, { updates: Uint8Array[]; timer: NodeJS.Timeout }>();
  const appendsSinceCheck = new Map<string, number>();
  /** The blocks of the latest version this instance recorded of each pad it holds: saves a query per edit. */
  const recorded = new Map<string, { version: number; blocks: readonly Block[] }>();
  /** Compactions run one after another, in the background. */
  let compactions = Promise.resolve();
  const dirty = new Map<string, Author>();
  const warm = new Map<string, { connection: Promise<DirectConnection>; lastUse: number }>();
  const versionListeners = new Set<(padId: string, version: number) => void>();
  /** The latest versions this instance recorded of each pad, in an unbroken run: who changed what. */
  const histories = new Map<string, VersionNote[]>();
  let closing = false;
  // A pad is at most 60,000 characters (each change is checked against that in beforeSync); no
  // single sync message needs more than this.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });

  const hocuspocus = new Hocuspocus<Context>({
    name: 'dotpad',
    quiet: true,
    debounce: 1_000,
    yDocOptions: { gc: true, gcFilter: () => true },
    // Several instances: each change is passed on to the others holding the pad, which apply it with
    // the origin "redis" and leave its persisting to the instance where it was made.
    extensions: options.redisUrl ? [redisExtension(options.redisUrl)] : [],
    async onAuthenticate(payload) {
      let verdict: Awaited<ReturnType<SyncAuthenticate>>;
      try {
        // A browser's cookie rides on any WebSocket it opens, whichever page opened it: without a
        // key, the page must be one of ours.
        const origin = payload.requestHeaders.get('origin');
        if (!payload.token.startsWith('svc') && origin && !options.hosts().has(hostOf(origin))) {
          throw new Error('cross-site WebSocket refused');
        }
        verdict = await options.authenticate({
          padId: payload.documentName,
          token: payload.token,
          cookie: payload.requestHeaders.get('cookie'),
        });
      } catch (error) {
        // Refused: logged here, structured; an error without a message keeps Hocuspocus from
        // printing it to the console as well. The client gets Hocuspocus' permission-denied close.
        log.info('pad connection refused', { padId: payload.documentName, reason: (error as Error).message });
        throw new Error('');
      }
      payload.connectionConfig.readOnly = verdict.readOnly;
      return { author: verdict.author, credentialId: verdict.credentialId };
    },
    async beforeSync({ type, payload, document, documentName, connection }) {
      // A change that would make the pad longer than its limit is not applied: the connection is
      // closed with the reason (the editor keeps the text and shows why it is not saved). Step 1 of
      // a sync only asks; read-only connections are refused their changes by Hocuspocus itself.
      if (type === messageYjsSyncStep1 || connection.readOnly || fitsWithin(document, payload, PAD_MAX_CHARS)) return;
      log.info('live change refused: the pad would pass its size limit', { padId: documentName });
      throw new PadFull();
    },
    async onLoadDocument({ document, documentName }) {
      await loadInto(db, documentName, document);
    },
    async onChange(payload: onChangePayload<Context>) {
      const origin = payload.transactionOrigin as { source?: string; context?: Context } | undefined;
      if (origin?.source === 'redis' || origin?.context?.persisted) return;
      queueUpdate(payload.documentName, payload.update);
      if (origin?.source === 'connection') dirty.set(payload.documentName, payload.context?.author ?? null);
    },
  });

  function queueUpdate(padId: string, update: Uint8Array) {
    const queue = queues.get(padId);
    if (queue) {
      queue.updates.push(update);
      return;
    }
    queues.set(padId, { updates: [update], timer: setTimeout(() => void flushPad(padId), LIVE_FLUSH_MS) });
  }

  /** The pad's queued live updates as one, taken off the queue; null when none wait. */
  function takeQueued(padId: string): Uint8Array | null {
    const queue = queues.get(padId);
    if (!queue) return null;
    queues.delete(padId);
    clearTimeout(queue.timer);
    return queue.updates.length === 1 ? queue.updates[0]! : Y.mergeUpdates(queue.updates);
  }

  async function flushPad(padId: string) {
    const update = takeQueued(padId);
    if (!update) return;
    try {
      await appendUpdate(db.pool, padId, update);
      afterAppend(padId);
    } catch (error) {
      if (error instanceof ForeignKeyIntegrityConstraintViolationError) {
        // The pad itself was never saved (its creation failed and was taken back): nothing to keep.
        log.warn('updates of a pad that does not exist dropped', { padId });
        return;
      }
      log.error('pad update not saved; retrying', { padId, error });
      if (!closing) queueUpdate(padId, update);
    }
  }

  /**
   * Counts appends to a pad's log (live typing and API edits alike) and, every so many, folds the log
   * into a snapshot when it has grown, off the path of whoever appended.
   */
  function afterAppend(padId: string) {
    const appended = (appendsSinceCheck.get(padId) ?? 0) + 1;
    appendsSinceCheck.set(padId, appended);
    if (appended < TAIL_CHECK_EVERY) return;
    appendsSinceCheck.delete(padId);
    compactions = compactions.then(async () => {
      try {
        const tail = await tailSize(db.pool, padId);
        if (tail.n > COMPACT_AFTER_UPDATES || tail.bytes > COMPACT_AFTER_BYTES) await compact(db, padId);
      } catch (error) {
        log.error('pad log not compacted', { padId, error });
      }
    });
  }

  /**
   * One writer of versions at a time per pad on this instance: API edits and live batches take
   * turns, so a version's block list and attribution are never mixed up between them.
   */
  const padLocks = new Map<string, Promise<unknown>>();
  async function exclusive<T>(padId: string, run: () => Promise<T>): Promise<T> {
    const previous = padLocks.get(padId);
    const next = (previous ?? Promise.resolve()).then(run, run);
    padLocks.set(padId, next);
    try {
      return await next;
    } finally {
      if (padLocks.get(padId) === next) padLocks.delete(padId);
    }
  }

  /**
   * Turns a pad's pending live typing into a version attributed to its typist: ids for new blocks,
   * then a version if any block changed. The queued updates are appended by the same statement that
   * records the version. A pad whose last client left is read back from the database, so its typing
   * is still versioned. Call within `exclusive`.
   */
  async function settle(padId: string): Promise<boolean> {
    if (!dirty.has(padId)) return false;
    const author = dirty.get(padId)!;
    dirty.delete(padId);
    const document = hocuspocus.documents.get(padId);
    let pending: Uint8Array | null = null;
    try {
      let blocks: Block[];
      if (document) {
        const fragment = document.getXmlFragment(PAD_FRAGMENT);
        document.transact(() => ensureBlockIds(fragment), { source: 'local', context: { system: true } });
        pending = takeQueued(padId);
        blocks = readBlocks(fragment);
      } else {
        await flushPad(padId);
        const copy = new Y.Doc();
        await loadInto(db, padId, copy);
        blocks = readBlocks(copy.getXmlFragment(PAD_FRAGMENT));
        copy.destroy();
      }
      const input = { padId, kind: 'live' as const, author, blocks, update: pending };
      const known = recorded.get(padId);
      let version: Awaited<ReturnType<typeof recordVersion>>;
      try {
        // On the version this instance last recorded: one statement. Else (or if another instance
        // wrote since) the pad's version is read and locked first.
        version = known
          ? await db.writeStatement((conn) => recordVersion(conn, { ...input, previous: { version: known.version, blocks: toRefs(known.blocks) } }))
          : await db.write((tx) => recordVersion(tx, input));
      } catch (error) {
        if (!(error instanceof StaleVersion)) throw error;
        version = await db.write((tx) => recordVersion(tx, input));
      }
      // No block changed (nothing to version): the updates still go to the log.
      if (!version && pending) await appendUpdate(db.pool, padId, pending);
      if (pending) afterAppend(padId);
      pending = null;
      if (!version) return false;
      recorded.set(padId, { version: version.version, blocks });
      versionRecorded(padId, { version: version.version, actorId: author?.id ?? null, changed: version.changed });
      return true;
    } catch (error) {
      log.error('live version not recorded', { padId, error });
      unsettled(padId, author, pending);
      return false;
    }
  }

  /** A live version that was not written: its updates go back on the queue and its typing stays to version. */
  function unsettled(padId: string, author: Author, pending: Uint8Array | null) {
    if (closing) return;
    if (pending) queueUpdate(padId, pending);
    if (!dirty.has(padId)) dirty.set(padId, author);
  }

  /** Notes a version this instance committed, and tells those waiting for changes. */
  function versionRecorded(padId: string, note: VersionNote) {
    noteHistory(padId, note);
    for (const listener of versionListeners) listener(padId, note.version);
  }

  function noteHistory(padId: string, note: VersionNote) {
    const run = histories.get(padId);
    if (run && run.at(-1)!.version === note.version - 1) {
      run.push(note);
      if (run.length > HISTORY_MAX) run.shift();
    } else {
      histories.set(padId, [note]);
    }
  }

  /** Live versions being written while an API edit goes ahead; each resolves to whether it was. */
  const settling = new Map<string, Promise<boolean>>();

  /**
   * settle() for an API edit, without making the edit wait for the database: the live version is
   * taken as recorded at once (its blocks and its note, for the edit's checks) while its statement
   * runs, and the edit commits only after it (`edit` waits). If the statement fails, what was taken
   * as recorded is forgotten and the edit's commit is refused as stale, so it runs again on what the
   * database holds. Where that cannot be set up, it is settle() itself.
   */
  async function settleAhead(padId: string): Promise<void> {
    if (!dirty.has(padId)) return;
    const document = hocuspocus.documents.get(padId);
    const known = recorded.get(padId);
    if (!document || !known) {
      await settle(padId);
      return;
    }
    const author = dirty.get(padId)!;
    const fragment = document.getXmlFragment(PAD_FRAGMENT);
    document.transact(() => ensureBlockIds(fragment), { source: 'local', context: { system: true } });
    const blocks = readBlocks(fragment);
    const previous = { version: known.version, blocks: toRefs(known.blocks) };
    const changed = diffRefs(previous.blocks, toRefs(blocks));
    if (changed.length === 0) {
      // Nothing to version, only updates to log: the plain way.
      await settle(padId);
      return;
    }
    dirty.delete(padId);
    const pending = takeQueued(padId);
    const note = { version: known.version + 1, actorId: author?.id ?? null, changed };
    recorded.set(padId, { version: note.version, blocks });
    noteHistory(padId, note);
    const written = db.writeStatement((conn) => recordVersion(conn, { padId, kind: 'live', author, blocks, update: pending, previous })).then(
      () => {
        if (pending) afterAppend(padId);
        for (const listener of versionListeners) listener(padId, note.version);
        return true;
      },
      (error: unknown) => {
        if (error instanceof StaleVersion) log.info('live version written ahead refused: another instance wrote first', { padId });
        else log.error('live version not recorded', { padId, error });
        unsettled(padId, author, pending);
        recorded.delete(padId);
        histories.delete(padId);
        return false;
      },
    );
    settling.set(padId, written);
  }

  async function versionLive() {
    await Promise.all([...dirty.keys()].map((padId) => exclusive(padId, () => settle(padId))));
  }
  const versionTimer = setInterval(() => void versionLive(), LIVE_VERSION_MS);

  /** A direct connection held open while the API uses a pad, so a busy pad is not reloaded per call. */
  function directConnection(padId: string): Promise<DirectConnection> {
    const held = warm.get(padId);
    if (held) {
      held.lastUse = Date.now();
      return held.connection;
    }
    const connection = hocuspocus.openDirectConnection(padId, { system: true });
    warm.set(padId, { connection, lastUse: Date.now() });
    connection.catch(() => warm.delete(padId));
    return connection;
  }
  const sweepTimer = setInterval(() => {
    for (const [padId, held] of warm) {
      if (Date.now() - held.lastUse < KEEP_WARM_MS) continue;
      warm.delete(padId);
      recorded.delete(padId);
      histories.delete(padId);
      appendsSinceCheck.delete(padId);
      void held.connection.then((c) => c.disconnect({ unloadImmediately: true }), () => {});
    }
  }, KEEP_WARM_MS / 2);

  /** Ends the live connections whose credential was revoked or ran out, here or on another instance. */
  async function closeEndedCredentials() {
    const open = new Set<string>();
    for (const document of hocuspocus.documents.values()) {
      for (const connection of document.getConnections()) {
        const credentialId = (connection.context as Context | undefined)?.credentialId;
        if (credentialId) open.add(credentialId);
      }
    }
    if (!open.size) return;
    try {
      for (const credentialId of await options.endedCredentials([...open])) closeCredential(credentialId);
    } catch (error) {
      log.warn('credentials of live connections not checked', { message: (error as Error).message });
    }
  }
  const credentialTimer = setInterval(() => void closeEndedCredentials(), CREDENTIAL_CHECK_MS);

  function closeCredential(credentialId: string) {
    for (const document of hocuspocus.documents.values()) {
      for (const connection of document.getConnections()) {
        if ((connection.context as Context | undefined)?.credentialId === credentialId) connection.close();
      }
    }
  }

  return {
    hocuspocus,

    /** The pad's blocks as the live document has them now. */
    async read(padId: string): Promise<Block[]> {
      const connection = await directConnection(padId);
      return readBlocks(connection.document!.getXmlFragment(PAD_FRAGMENT));
    },

    /**
     * Runs `run` as the pad's only version writer on this instance, after its live typing is taken as
     * a version (written while `run` goes ahead; its own commit waits for that).
     */
    exclusive<T>(padId: string, run: () => Promise<T>): Promise<T> {
      return exclusive(padId, async () => {
        await settleAhead(padId);
        try {
          return await run();
        } finally {
          const written = settling.get(padId);
          settling.delete(padId);
          await written;
        }
      });
    },

    /**
     * Brings this instance's live copy of the pad up to what the database holds: the updates other
     * instances appended reach it (and its clients). For when another instance wrote a version.
     * Call within `exclusive`.
     */
    async catchUp(padId: string) {
      recorded.delete(padId);
      histories.delete(padId);
      const document = hocuspocus.documents.get(padId);
      if (document) applyPadLog(document, await readPadLog(db.pool, padId));
      // Typing whose version could not be written ahead is versioned now, on the database's latest.
      await settle(padId);
    },

    /** The latest version of the pad this instance recorded or read, with its blocks, if it has one. */
    recorded(padId: string) {
      return recorded.get(padId);
    },
    remember(padId: string, version: number, blocks: readonly Block[]) {
      recorded.set(padId, { version, blocks });
    },

    /**
     * Runs `change` in one Yjs transaction on the live document with the author as the origin's
     * context, and hands back the update it made. `persist` must store it durably (the caller's
     * database transaction); if it throws, the change is taken back out of the live document, and
     * both the change and its undoing go to the log, so the log has no gap and nets to nothing.
     * Call within `exclusive`.
     */
    async edit<T>(
      padId: string,
      author: Author,
      change: (fragment: Y.XmlFragment) => T,
      persist: (update: Uint8Array | null, result: T, blocks: Block[]) => Promise<number | null>,
    ): Promise<{ result: T; blocks: Block[] }> {
      const connection = await directConnection(padId);
      const document: Document = connection.document!;
      const fragment = document.getXmlFragment(PAD_FRAGMENT);
      const context: Context = { author, persisted: true };
      const origin = { source: 'local', context };
      const updates: Uint8Array[] = [];
      const capture = (update: Uint8Array, from: unknown) => {
        if (from === origin) updates.push(update);
      };
      const undo = new Y.UndoManager(fragment, { trackedOrigins: new Set([origin]), captureTimeout: 0 });
      let update: Uint8Array | null = null;
      try {
        let result!: T;
        document.on('update', capture);
        try {
          document.transact(() => {
            result = change(fragment);
          }, origin);
        } finally {
          document.off('update', capture);
          update = updates.length === 0 ? null : updates.length === 1 ? updates[0]! : Y.mergeUpdates(updates);
        }
        // Hocuspocus sends updates at the end of the event loop turn; the people in the pad get this
        // one now, not after the work of persisting it.
        document.flush();
        const blocks = readBlocks(fragment);
        // The live version taken ahead must be in the database before this change's version.
        const ahead = settling.get(padId);
        settling.delete(padId);
        if (ahead && !(await ahead)) throw new StaleVersion(padId);
        const version = await persist(update, result, blocks);
        if (version !== null) recorded.set(padId, { version, blocks });
        if (update) afterAppend(padId);
        return { result, blocks };
      } catch (error) {
        if (update) {
          queueUpdate(padId, update);
          undo.undo();
        }
        throw error;
      } finally {
        undo.destroy();
      }
    },

    /** Ends every live connection opened with this credential (it was revoked). */
    closeCredential,

    onVersion(listener: (padId: string, version: number) => void) {
      versionListeners.add(listener);
      return () => versionListeners.delete(listener);
    },
    /** After a version the caller committed on this instance. */
    notifyVersion(padId: string, note: VersionNote) {
      versionRecorded(padId, note);
    },

    /**
     * The blocks that participants other than `actorId` changed in the versions after `base`, up to
     * `current`, from the versions this instance recorded; null when it did not record all of them.
     */
    changedByOthersSince(padId: string, base: number, current: number, actorId: string): Set<string> | null {
      const run = histories.get(padId);
      if (!run || run[0]!.version > base + 1 || run.at(-1)!.version !== current) return null;
      const ids = new Set<string>();
      for (const note of run) if (note.version > base && note.actorId !== actorId) for (const id of note.changed) ids.add(id);
      return ids;
    },

    /** WebSocket on the same HTTP server as everything else, at /sync. */
    attach(server: Server) {
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        const url = new URL(request.url ?? '/', 'http://localhost');
        const host = (request.headers.host ?? '').toLowerCase();
        if (url.pathname !== SYNC_PATH || !options.hosts().has(host)) {
          socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
          return;
        }
        wss.handleUpgrade(request, socket, head, (ws) => {
          const headers = new Headers();
          for (const [key, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(key, value);
          const client = hocuspocus.handleConnection(ws as never, new Request(`http://${host}${request.url}`, { headers }));
          ws.on('message', (data: Buffer) => client.handleMessage(new Uint8Array(data)));
          ws.on("close", (code: number, reason: Buffer) => client.handleClose({ code, reason: reason.toString() } as never));
          ws.on('error', (error) => log.warn('websocket error', { message: error.message }));
        });
      });
    },

    /** Everything acknowledged reaches the database: queued updates, then pending live versions. */
    async flush() {
      await Promise.all([...queues.keys()].map(flushPad));
      await versionLive();
      await compactions;
    },

    async close() {
      clearInterval(versionTimer);
      clearInterval(sweepTimer);
      clearInterval(credentialTimer);
      hocuspocus.closeConnections();
      await this.flush();
      closing = true;
      for (const socket of wss.clients) socket.terminate();
      wss.close();
      for (const held of warm.values()) await held.connection.then((c) => c.disconnect({ unloadImmediately: true }), () => {});
      warm.clear();
      await Promise.all([...queues.keys()].map(flushPad));
      await compactions;
      // Extensions let go of what they hold (the Redis extension, its connections).
      await hocuspocus.hooks('onDestroy', { instance: hocuspocus });
    },
  };
}
