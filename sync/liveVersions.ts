import * as Y from 'yjs';
import type { afterLoadDocumentPayload, beforeUnloadDocumentPayload, Document, Extension, Hocuspocus } from '@hocuspocus/server';
import { PAD_FRAGMENT } from '../schema/pad.ts';
import type { Db } from '../server/db/database.ts';
import type { Logger } from '../server/db/logger.ts';
import { ensureBlockIds, readBlocks } from './blocks.ts';
import type { Persistence } from './extensions/persistence.ts';
import type { LiveDocs } from './liveDocs.ts';
import type { PadVersions, Written } from './padVersions.ts';
import { appendUpdate } from './store.ts';
import type { SyncContext } from './syncContext.ts';
import { StaleVersion, type Author } from './versions.ts';

/** Live typing becomes a version at most this often. */
export const LIVE_VERSION_MS = 2_000;

/** Typing on this instance not versioned yet: the top-level elements it changed, the blocks it removed, the last typist. */
type Typing = { author: Author; elements: Set<Y.XmlElement>; removed: Set<string> };

/** A top-level element's id, also once it is deleted (read in an observer, before garbage collection). */
function idOf(element: Y.XmlElement): string | undefined {
  const id = element.getAttribute('id') ?? element._map.get('id')?.content.getContent()[0];
  return typeof id === 'string' ? id : undefined;
}

/**
 * Live typing turned into versions, attributed to its typist: every LIVE_VERSION_MS, before an API
 * edit of the pad, and before the pad unloads. Only what the connections of this instance typed is
 * versioned here (other instances version their own), so a version never takes in another
 * instance's change that may still be taken back.
 */
export class LiveVersions implements Extension<SyncContext> {
  extensionName = 'dotpad-live-versions';
  private readonly typing = new Map<string, Typing>();
  private readonly timer: NodeJS.Timeout;

  private readonly instance: Hocuspocus<SyncContext>;
  private readonly db: Db;
  private readonly log: Logger;
  private readonly versions: PadVersions;
  private readonly persistence: Persistence;
  private readonly live: () => LiveDocs;

  constructor(instance: Hocuspocus<SyncContext>, db: Db, log: Logger, versions: PadVersions, persistence: Persistence, live: () => LiveDocs) {
    this.instance = instance;
    this.db = db;
    this.log = log;
    this.versions = versions;
    this.persistence = persistence;
    this.live = live;
    this.timer = setInterval(() => void this.versionAll(), LIVE_VERSION_MS);
  }

  async afterLoadDocument({ document, documentName }: afterLoadDocumentPayload<SyncContext>) {
    const fragment = document.getXmlFragment(PAD_FRAGMENT);
    fragment.observeDeep((events, transaction) => {
      const origin = transaction.origin as { source?: string; connection?: { context?: SyncContext } } | null;
      if (origin?.source !== 'connection') return;
      let typing = this.typing.get(documentName);
      if (!typing) this.typing.set(documentName, (typing = { author: null, elements: new Set(), removed: new Set() }));
      typing.author = origin.connection?.context?.author ?? null;
      for (const event of events) {
        if (event.target === fragment) {
          for (const item of event.changes.added) if (item.content instanceof Y.ContentType && item.content.type instanceof Y.XmlElement) typing.elements.add(item.content.type);
          for (const item of event.changes.deleted) {
            const id = item.content instanceof Y.ContentType && item.content.type instanceof Y.XmlElement ? idOf(item.content.type) : undefined;
            if (id) typing.removed.add(id);
          }
          continue;
        }
        let top: Y.AbstractType<unknown> = event.target;
        while (top.parent && top.parent !== fragment) top = top.parent as Y.AbstractType<unknown>;
        if (top instanceof Y.XmlElement) typing.elements.add(top);
      }
    });
  }

  /** A pad whose last client left is versioned while its live copy is still there. */
  async beforeUnloadDocument({ documentName }: beforeUnloadDocumentPayload) {
    if (this.typing.has(documentName)) await this.versions.exclusive(documentName, () => this.settle(documentName));
  }

  /**
   * Turns the pad's pending typing into a version: ids for new blocks, then a version of the blocks
   * it changed, with the queued updates appended by the same statement. Call within `exclusive`.
   */
  async settle(padId: string): Promise<void> {
    const typing = this.typing.get(padId);
    const document = this.instance.documents.get(padId);
    if (!typing || !document) return;
    this.typing.delete(padId);
    const fragment = document.getXmlFragment(PAD_FRAGMENT);
    document.transact(() => ensureBlockIds(fragment), { source: 'local', context: { system: true } });
    const mine = new Set(typing.removed);
    for (const element of typing.elements) {
      const id = element.parent === fragment && !element._item?.deleted ? idOf(element) : undefined;
      if (id) mine.add(id);
    }
    const update = this.persistence.take(padId);
    try {
      const written = await this.write(document, padId, typing.author, mine, update);
      // No block changed (nothing to version): the updates still go to the log.
      if (!written && update) await appendUpdate(this.db.pool, padId, update);
      if (update) this.persistence.appended(padId);
      if (written) this.versions.advance(written);
    } catch (error) {
      this.log.error('live version not recorded', { padId, error });
      if (update) this.persistence.queue(padId, update);
      // Typed since is kept with it: the next try versions both.
      const again = this.typing.get(padId);
      if (!again) this.typing.set(padId, typing);
      else {
        for (const element of typing.elements) again.elements.add(element);
        for (const id of typing.removed) again.removed.add(id);
      }
    }
  }

  private async write(document: Document, padId: string, author: Author, mine: Set<string>, update: Uint8Array | null): Promise<Written | null> {
    const change = () => ({ kind: 'live' as const, author, live: readBlocks(document.getXmlFragment(PAD_FRAGMENT)), mine, update });
    if (!this.versions.isContended(padId)) {
      try {
        const state = await this.versions.current(padId);
        return await this.db.writeStatement((conn) => this.versions.write(conn, padId, state, change()));
      } catch (error) {
        if (!(error instanceof StaleVersion)) throw error;
      }
    }
    // Another instance wrote first: on the database's latest, its row locked, the live copy caught up.
    return this.db.write(async (tx) => {
      const state = await this.versions.locked(tx, padId);
      await this.live().catchUp(document, tx);
      return this.versions.write(tx, padId, state, change());
    });
  }

  /** Versions the typing of every pad that has some. */
  async versionAll() {
    await Promise.all([...this.typing.keys()].map((padId) => this.versions.exclusive(padId, () => this.settle(padId))));
  }

  async onDestroy() {
    clearInterval(this.timer);
  }
}
