import * as Y from 'yjs';
import type { afterLoadDocumentPayload, beforeUnloadDocumentPayload, Document, Extension, Hocuspocus } from '@hocuspocus/server';
import { PAD_FRAGMENT } from '../schema/pad.ts';
import type { Db } from '../server/db/database.ts';
import type { Logger } from '../server/db/logger.ts';
import { ensureBlockIds, readBlocks } from './blocks.ts';
import type { Persistence } from './extensions/persistence.ts';
import type { LiveDocs } from './liveDocs.ts';
import { createLiveVersionBatch, type LiveVersionBatch } from './liveVersionBatch.ts';
import type { PadVersions, Written } from './padVersions.ts';
import { appendUpdate } from './store.ts';
import type { SyncContext } from './syncContext.ts';
import { StaleVersion, type Author } from './versions.ts';

/** Live typing on a pad becomes a version this long after its first change not versioned yet: at most this often. */
export const LIVE_VERSION_MS = 2_000;
/**
 * Typing on this instance not versioned yet: the top-level elements it changed and the blocks it
 * removed, each with who last did so. Two people typing at once in different blocks are each
 * credited with their own.
 */
type Typing = { elements: Map<Y.XmlElement, Author>; removed: Map<string, Author>; due: NodeJS.Timeout };

const authorKey = (author: Author) => author?.id ?? '';

/** A top-level element's id, also once it is deleted (read in an observer, before garbage collection). */
function idOf(element: Y.XmlElement): string | undefined {
  const id = element.getAttribute('id') ?? element._map.get('id')?.content.getContent()[0];
  return typeof id === 'string' ? id : undefined;
}

/**
 * Live typing turned into versions, attributed to its typist: LIVE_VERSION_MS after the pad's first
 * change not versioned yet, before an API edit of the pad, and before the pad unloads. Only what
 * the connections of this instance typed is versioned here (other instances version their own), so
 * a version never takes in another instance's change that may still be taken back.
 */
export class LiveVersions implements Extension<SyncContext> {
  extensionName = 'dotpad-live-versions';
  private readonly typing = new Map<string, Typing>();

  private readonly instance: Hocuspocus<SyncContext>;
  private readonly db: Db;
  private readonly log: Logger;
  private readonly versions: PadVersions;
  private readonly persistence: Persistence;
  private readonly live: () => LiveDocs;
  private readonly batch: LiveVersionBatch;

  constructor(instance: Hocuspocus<SyncContext>, db: Db, log: Logger, versions: PadVersions, persistence: Persistence, live: () => LiveDocs) {
    this.instance = instance;
    this.db = db;
    this.log = log;
    this.versions = versions;
    this.persistence = persistence;
    this.live = live;
    this.batch = createLiveVersionBatch(db, versions);
  }

  /**
   * The pad's typing not versioned yet, begun now if there is none: it is versioned LIVE_VERSION_MS
   * later, each pad by a timer of its own. With hundreds of pads typed at once, a tick that looked
   * at every pad versioned a few dozen in one turn of the event loop (their blocks read, their
   * statements sent), and the keystrokes that arrived meanwhile waited behind them.
   */
  private typingOf(padId: string): Typing {
    let typing = this.typing.get(padId);
    if (!typing) {
      const due = setTimeout(() => void this.versionPads([padId]), LIVE_VERSION_MS);
      this.typing.set(padId, (typing = { elements: new Map(), removed: new Map(), due }));
    }
    return typing;
  }

  async afterLoadDocument({ document, documentName }: afterLoadDocumentPayload<SyncContext>) {
    const fragment = document.getXmlFragment(PAD_FRAGMENT);
    fragment.observeDeep((events, transaction) => {
      const origin = transaction.origin as { source?: string; connection?: { context?: SyncContext } } | null;
      if (origin?.source !== 'connection') return;
      const typing = this.typingOf(documentName);
      const author = origin.connection?.context?.author ?? null;
      const touched = (element: Y.XmlElement) => typing.elements.set(element, author);
      for (const event of events) {
        if (event.target === fragment) {
          for (const item of event.changes.added) if (item.content instanceof Y.ContentType && item.content.type instanceof Y.XmlElement) touched(item.content.type);
          for (const item of event.changes.deleted) {
            const id = item.content instanceof Y.ContentType && item.content.type instanceof Y.XmlElement ? idOf(item.content.type) : undefined;
            if (id) typing.removed.set(id, author);
          }
          continue;
        }
        let top: Y.AbstractType<unknown> = event.target;
        while (top.parent && top.parent !== fragment) top = top.parent as Y.AbstractType<unknown>;
        if (top instanceof Y.XmlElement) touched(top);
      }
    });
  }

  /** A pad whose last client left is versioned while its live copy is still there. */
  async beforeUnloadDocument({ documentName }: beforeUnloadDocumentPayload) {
    if (this.typing.has(documentName)) await this.versions.exclusive(documentName, () => this.settle(documentName));
  }

  /**
   * Turns the pad's pending typing into versions, one per typist (each with the blocks they last
   * touched), after giving new blocks their ids; the queued updates are appended by the first
   * version's statement. Call within `exclusive`.
   */
  async settle(padId: string): Promise<void> {
    const typing = this.typing.get(padId);
    const document = this.instance.documents.get(padId);
    if (!typing) return;
    this.typing.delete(padId);
    clearTimeout(typing.due);
    // Typed in a copy that has unloaded since (its unload versioned what it could): nothing to version.
    if (!document) return;
    const fragment = document.getXmlFragment(PAD_FRAGMENT);
    document.transact(() => ensureBlockIds(fragment), { source: 'local', context: { system: true } });
    const byAuthor = new Map<string, { author: Author; mine: Set<string> }>();
    const credit = (id: string, author: Author) => {
      const key = authorKey(author);
      let group = byAuthor.get(key);
      if (!group) byAuthor.set(key, (group = { author, mine: new Set() }));
      group.mine.add(id);
    };
    for (const [id, author] of typing.removed) credit(id, author);
    for (const [element, author] of typing.elements) {
      const id = element.parent === fragment && !element._item?.deleted ? idOf(element) : undefined;
      if (id) credit(id, author);
    }
    let update = this.persistence.take(padId);
    const groups = [...byAuthor.values()];
    try {
      while (groups.length) {
        const { author, mine } = groups[0]!;
        const written = await this.write(document, padId, author, mine, update);
        groups.shift();
        if (!written) continue;
        if (update) this.persistence.appended(padId);
        update = null;
        this.versions.advance(written);
      }
      // No block changed (nothing to version): the updates still go to the log.
      if (update) {
        await appendUpdate(this.db.pool, padId, update);
        this.persistence.appended(padId);
      }
    } catch (error) {
      this.log.error('live version not recorded', { padId, error });
      if (update) this.persistence.queue(padId, update);
      // What is not versioned yet is kept with what was typed since: the next try, when that is due, versions both.
      const again = this.typingOf(padId);
      for (const { author, mine } of groups) {
        for (const [element, by] of typing.elements) if (authorKey(by) === authorKey(author) && !again.elements.has(element)) again.elements.set(element, by);
        for (const id of mine) if (typing.removed.has(id) && !again.removed.has(id)) again.removed.set(id, author);
      }
    }
  }

  private async write(document: Document, padId: string, author: Author, mine: Set<string>, update: Uint8Array | null): Promise<Written | null> {
    const change = () => ({ kind: 'live' as const, author, live: readBlocks(document.getXmlFragment(PAD_FRAGMENT)), mine, update });
    if (!this.versions.isContended(padId)) {
      try {
        const state = await this.versions.current(padId);
        // Written with other pads' versions planned about now, by one statement.
        const plan = this.versions.plan(padId, state, change());
        return plan && (await this.batch.record(plan));
      } catch (error) {
        if (!(error instanceof StaleVersion)) throw error;
        this.versions.contend(padId);
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
    await this.versionPads([...this.typing.keys()]);
  }

  private async versionPads(padIds: string[]) {
    await Promise.all(padIds.map((padId) => this.versions.exclusive(padId, () => this.settle(padId))));
  }

  async onDestroy() {
    for (const typing of this.typing.values()) clearTimeout(typing.due);
  }
}
