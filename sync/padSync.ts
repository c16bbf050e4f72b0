import type { Server } from 'node:http';
import type { WebSocketServer } from 'ws';
import { Hocuspocus, type Extension } from '@hocuspocus/server';
import type { Db } from '../server/db/database.ts';
import type { Logger } from '../server/db/logger.ts';
import { padVersionMessage } from '../schema/pad.ts';
import { createEditEngine } from './editEngine.ts';
import { AccessChecks, type AccessRecheck } from './extensions/accessChecks.ts';
import { Authentication, type SyncAuthenticate } from './extensions/authentication.ts';
import { PadTextPace, type PadTextCount } from './extensions/padTextPace.ts';
import { Persistence } from './extensions/persistence.ts';
import { redisExtension } from './extensions/redis.ts';
import { SizeLimit } from './extensions/sizeLimit.ts';
import { createLiveDocs } from './liveDocs.ts';
import { LiveVersions } from './liveVersions.ts';
import { createPadVersions } from './padVersions.ts';
import { startSectionTextSweep } from './sectionText.ts';
import type { SyncContext } from './syncContext.ts';
import { handleUpgrades } from './upgrade.ts';
import { storedVersion } from './versions.ts';

export { SYNC_PATH } from './upgrade.ts';
export type { SyncAuthenticate } from './extensions/authentication.ts';
export type { AccessRecheck, OpenAccess } from './extensions/accessChecks.ts';
export type { PadTextCount } from './extensions/padTextPace.ts';
export type { EditOutcome, EditRequest } from './editEngine.ts';
export { EditRefused, MAX_OPS } from './editEngine.ts';

/** What the live layer needs from the core, given once the core exists. */
export type SyncAccess = {
  hosts: () => Set<string>;
  authenticate: SyncAuthenticate;
  /** Of these open connections, the ones whose access ended. */
  recheck: AccessRecheck;
  /** Counts the pad text typed live in each typist's daily window (SPEC part 8 "Pad text saved"). */
  padText: PadTextCount;
};

/**
 * Extensions added after the instance was made (the ones built on the core): before the instance's
 * own hooks, which Hocuspocus keeps last, and in order of priority like the others.
 */
function addExtensions(hocuspocus: Hocuspocus<SyncContext>, extensions: Extension<SyncContext>[]) {
  const list = hocuspocus.configuration.extensions;
  const own = list.pop()!;
  list.push(...extensions);
  list.sort((a, b) => (b.priority ?? 100) - (a.priority ?? 100));
  list.push(own);
}

/**
 * The live document layer: Hocuspocus holds each open pad; its extensions persist every update,
 * limit a pad's size, turn live typing into versions, and (once `attach` is given the core's
 * access rules) authenticate connections and close those whose access ended. The edit engine lets
 * the core edit a pad as one transaction on the live document, committed as a version.
 */
export function createPadSync(options: { db: Db; log: Logger; redisUrl?: string | undefined; readForm?: (text: string) => string }) {
  const { db, log } = options;
  const persistence = new Persistence(db, log);
  const versions = createPadVersions(db);
  const hocuspocus: Hocuspocus<SyncContext> = new Hocuspocus<SyncContext>({
    name: 'dotpad',
    quiet: true,
    debounce: 1_000,
    yDocOptions: { gc: true, gcFilter: () => true },
    extensions: [persistence, new SizeLimit(log), ...(options.redisUrl ? [redisExtension(options.redisUrl, log)] : [])],
  });
  const live = createLiveDocs(hocuspocus, persistence, (padId) => versions.forget(padId));
  const typing = new LiveVersions(hocuspocus, db, log, versions, persistence, () => live);
  addExtensions(hocuspocus, [typing]);
  // Each new version is announced to the pad's live connections (through Redis, to other instances' too),
  // and its sections' text brought up to date once the pad is quiet.
  const sectionText = startSectionTextSweep(db, log);
  versions.onVersion((padId) => sectionText.written(padId));
  versions.onVersion((padId, version) => hocuspocus.documents.get(padId)?.broadcastStateless(padVersionMessage(version)));
  const engine = createEditEngine({ db, versions, live, typing, readForm: options.readForm ?? ((text) => text) });
  let access: AccessChecks | null = null;
  let padText: PadTextPace | null = null;
  let wss: WebSocketServer | null = null;

  async function flush() {
    await persistence.flush();
    await typing.versionAll();
    await persistence.flush();
    await padText?.count();
  }

  return {
    hocuspocus,
    applyEdits: engine.applyEdits,
    createPad: engine.createPad,
    /** The pad's blocks as the live document has them now. */
    read: live.read,
    /** The pad's current version, as the database has it (another instance may have written it). */
    version: (padId: string) => storedVersion(db.pool, padId),
    onVersion: versions.onVersion,
    changedByOthersSince: versions.changedByOthersSince,
    /** Forgets what this instance knows of the pad's versions: the next write reads them again. */
    forget: versions.forget,

    /** Serves live connections on the HTTP server, under the core's access rules. */
    attach(server: Server, rules: SyncAccess) {
      access = new AccessChecks(hocuspocus, rules.recheck, log);
      padText = new PadTextPace(hocuspocus, rules.padText, log);
      addExtensions(hocuspocus, [new Authentication(rules.authenticate, rules.hosts, log, persistence), access, padText]);
      wss = handleUpgrades(server, hocuspocus, rules.hosts, log);
    },

    /** Ends every live connection opened with this credential (it was revoked here). */
    closeCredential(credentialId: string) {
      access?.closeCredential(credentialId);
    },

    /** Everything acknowledged reaches the database: queued updates, then pending live versions, then the pad text typed. */
    flush,

    async close() {
      hocuspocus.closeConnections();
      await flush();
      for (const socket of wss?.clients ?? []) socket.terminate();
      wss?.close();
      await live.close();
      await persistence.close();
      await sectionText.stop();
      // Extensions stop their timers and let go of what they hold (the Redis extension, its connections).
      await hocuspocus.hooks('onDestroy', { instance: hocuspocus });
    },
  };
}

export type PadSync = ReturnType<typeof createPadSync>;
