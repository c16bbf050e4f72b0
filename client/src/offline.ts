// The pad's copy on this device: its Yjs document in IndexedDB (y-indexeddb), the pad page's last
// view (so the page opens with no network; session.ts keeps who was signed in), a count of changes made here
// that the server has not acknowledged, and the app's own files kept by a service worker so that a
// reload with no network still finds the page.
import * as Y from 'yjs'
import { IndexeddbPersistence } from 'y-indexeddb'
import type { PadView } from './api'
import { PAD_FRAGMENT, padSchema } from '../../schema/pad.ts'
import { readJson, writeJson } from './localJson'

const PREFIX = 'dotpad'

/** One copy per person and pad, so two accounts in one browser never share a pad's text. */
const copyName = (userId: string, padId: string) => `${PREFIX}:${userId}:${padId}`

/** The pad's document kept in IndexedDB; `whenSynced` resolves once the kept updates are in `doc`. */
export function openLocalCopy(userId: string, padId: string, doc: Y.Doc): IndexeddbPersistence {
  return new IndexeddbPersistence(copyName(userId, padId), doc)
}

/**
 * Resolves once every change handed to the copy so far is written to IndexedDB: a read of its
 * update store waits for the writes begun before it (IndexedDB runs transactions over the same store
 * in the order they were made).
 */
export function writtenToDevice(copy: IndexeddbPersistence): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(() => {
      if (!copy.db) return resolve()
      const read = copy.db.transaction(['updates'], 'readonly')
      read.oncomplete = read.onerror = read.onabort = () => resolve()
      read.objectStore('updates').count()
    }, 0)
  })
}

/** The pad page's view as last read from the server, for opening the pad offline. */
export const keepView = (userId: string, view: PadView) => writeJson(`${PREFIX}:view:${userId}:${view.pad.id}`, view)
export const keptView = (userId: string, padId: string) => readJson<PadView>(`${PREFIX}:view:${userId}:${padId}`)

/**
 * The pad version the copy on this device was last in step with (all its changes acknowledged). Changes
 * made after it, offline, that come back to a pad the person may no longer edit directly are sent as a
 * suggestion against this version, never merged into the accepted text.
 */
export const keepBaseVersion = (userId: string, padId: string, version: number) => writeJson(`${PREFIX}:base:${userId}:${padId}`, version)
export const keptBaseVersion = (userId: string, padId: string) => readJson<number>(`${PREFIX}:base:${userId}:${padId}`)

/**
 * Changes made on this device that the server has not acknowledged, counted across reloads: every
 * local change of the document adds one; the server's acknowledgement of everything sent clears them.
 */
export class PendingChanges {
  private readonly key: string
  count: number

  constructor(userId: string, padId: string) {
    this.key = `${PREFIX}:pending:${userId}:${padId}`
    this.count = Number(localStorage.getItem(this.key)) || 0
  }

  add() {
    this.count++
    this.store()
  }

  clear() {
    if (!this.count) return
    this.count = 0
    this.store()
  }

  private store() {
    try {
      if (this.count) localStorage.setItem(this.key, String(this.count))
      else localStorage.removeItem(this.key)
    } catch {
      // As above.
    }
  }
}

const SHELL_CACHE = 'dotpad-shell-v1'

/**
 * Keeps the app's page and the files this page loaded (scripts, styles: all under /assets/, named by
 * their content) in the cache the service worker answers from when the network is gone. Resolves
 * once both are in place; false where the browser offers neither (then only the live page works).
 */
export async function keepAppShell(): Promise<boolean> {
  if (!('serviceWorker' in navigator) || !('caches' in window)) return false
  try {
    await navigator.serviceWorker.register('/sw.js', { scope: '/' })
    await navigator.serviceWorker.ready
    const cache = await caches.open(SHELL_CACHE)
    const page = await fetch(location.pathname, { headers: { Accept: 'text/html' }, credentials: 'same-origin' })
    if (page.ok && page.headers.get('content-type')?.startsWith('text/html')) await cache.put('/index.html', page)
    const assets = new Set<string>()
    for (const entry of performance.getEntriesByType('resource')) {
      const url = new URL(entry.name)
      if (url.origin === location.origin && url.pathname.startsWith('/assets/')) assets.add(url.pathname)
    }
    for (const element of document.querySelectorAll<HTMLScriptElement | HTMLLinkElement>('script[src], link[href]')) {
      const url = new URL('src' in element ? element.src : element.href, location.href)
      if (url.origin === location.origin && url.pathname.startsWith('/assets/')) assets.add(url.pathname)
    }
    const missing = []
    for (const asset of assets) if (!(await cache.match(asset))) missing.push(asset)
    await cache.addAll(missing)
    // Files of earlier builds are no longer asked for by the kept page.
    for (const kept of await cache.keys()) {
      const path = new URL(kept.url).pathname
      if (path.startsWith('/assets/') && !assets.has(path)) await cache.delete(kept)
    }
    return true
  } catch {
    return false
  }
}

/** The kept document as Markdown as it is at the call, through the pad schema (converted from a copy: the conversion may drop what it does not know). */
export async function documentMarkdown(doc: Y.Doc): Promise<string> {
  // The document as it is at the call: whatever arrives while the converters load is not in it.
  const state = Y.encodeStateAsUpdate(doc)
  const [{ yXmlFragmentToProseMirrorRootNode }, { serializeMarkdown }] = await Promise.all([import('@tiptap/y-tiptap'), import('../../schema/markdown.ts')])
  const copy = new Y.Doc()
  Y.applyUpdate(copy, state)
  const text = serializeMarkdown(yXmlFragmentToProseMirrorRootNode(copy.getXmlFragment(PAD_FRAGMENT), padSchema))
  copy.destroy()
  return text
}

/** Hands `text` to the browser as a file download. */
export function download(filename: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/markdown;charset=utf-8' }))
  const link = document.createElement('a')
  link.href = url
  link.download = filename
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
