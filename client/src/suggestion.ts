// A person's suggestion to a pad they may not edit directly (a Checked hub, SPEC part 2): their own
// copy of the pad, forked from the accepted document at one version and never synced to it, kept in
// IndexedDB like the pad's copy; the version it was forked at and the blocks as they were then (to
// show what the suggestion changes) beside it in localStorage. Sending it is `edit_pad` with the whole
// text and that version, which the server keeps as a suggestion until someone checks it.
import * as Y from 'yjs'
import { IndexeddbPersistence } from 'y-indexeddb'
import { Extension, type Editor } from '@tiptap/core'
import { Plugin, PluginKey } from '@tiptap/pm/state'
import { Decoration, DecorationSet } from '@tiptap/pm/view'
import type { Node as PMNode } from '@tiptap/pm/model'
import { PAD_FRAGMENT, padSchema } from '../../schema/pad.ts'
import { readJson, writeJson } from './localJson'

const PREFIX = 'dotpad'

/** Each block of the version a suggestion started from, by id: the block as JSON, to compare. */
export type BaseBlocks = Record<string, string>
export type SuggestionBase = { version: number; blocks: BaseBlocks }

const blockJson = (node: PMNode) => JSON.stringify(node.toJSON())

/** The top-level blocks of a pad document, by id, as the editor's schema reads them. */
export async function blocksOf(doc: Y.Doc): Promise<BaseBlocks> {
  const { yXmlFragmentToProseMirrorRootNode } = await import('@tiptap/y-tiptap')
  const blocks: BaseBlocks = {}
  yXmlFragmentToProseMirrorRootNode(doc.getXmlFragment(PAD_FRAGMENT), padSchema).forEach((node) => {
    if (typeof node.attrs.id === 'string') blocks[node.attrs.id] = blockJson(node)
  })
  return blocks
}

/**
 * The draft of one person's suggestion to one pad. `base` is null until `fork` (no draft yet); a
 * draft kept from an earlier visit comes back with its base once `whenLoaded` resolves.
 */
export class SuggestionDraft {
  readonly doc = new Y.Doc()
  base: SuggestionBase | null
  private readonly key: string
  private readonly copy: IndexeddbPersistence
  readonly whenLoaded: Promise<unknown>

  constructor(userId: string, padId: string) {
    this.key = `${PREFIX}:suggestion:${userId}:${padId}`
    this.base = readJson<SuggestionBase>(this.key)
    this.copy = new IndexeddbPersistence(`${PREFIX}:suggestion-doc:${userId}:${padId}`, this.doc)
    this.whenLoaded = this.copy.whenSynced
  }

  /** Starts a draft from the accepted document as it is now, at `version`. */
  async fork(accepted: Y.Doc, version: number) {
    await this.whenLoaded
    this.base = { version, blocks: await blocksOf(accepted) }
    Y.applyUpdate(this.doc, Y.encodeStateAsUpdate(accepted))
    writeJson(this.key, this.base)
  }

  /** Forgets the draft: its document here and on the device. The object is done with after this. */
  async discard() {
    writeJson(this.key, null)
    await this.copy.clearData()
    this.doc.destroy()
  }

  /** Lets go of the draft without forgetting it (the page closes). */
  close() {
    void this.copy.destroy()
    this.doc.destroy()
  }
}

/** What a draft changes against its base: block ids changed or added, and how many blocks it removed. */
export async function draftChanges(draft: Y.Doc, base: BaseBlocks) {
  const now = await blocksOf(draft)
  const changed = Object.keys(now).filter((id) => now[id] !== base[id])
  const removed = Object.keys(base).filter((id) => !(id in now)).length
  return { changed, removed }
}

// ---- Showing a suggestion's changes in the editor --------------------------------------------------

export type SentSuggestion = { id: string; base_version: number; sent_at: string }

/** The suggestions this person sent to this pad from this device, to follow until they are checked. */
export const sentSuggestions = (userId: string, padId: string) => readJson<SentSuggestion[]>(`${PREFIX}:sent:${userId}:${padId}`) ?? []
export const keepSentSuggestions = (userId: string, padId: string, sent: SentSuggestion[]) =>
  writeJson(`${PREFIX}:sent:${userId}:${padId}`, sent.length ? sent : null)

const suggestedKey = new PluginKey<BaseBlocks | null>('suggestedChanges')

/**
 * Marks each block that differs from the suggestion's base (changed or new) with a class, so the
 * person sees what their suggestion would change. The base is given by `showSuggestedChanges`.
 */
export const SuggestedChanges = Extension.create({
  name: 'suggestedChanges',
  addProseMirrorPlugins() {
    return [
      new Plugin<BaseBlocks | null>({
        key: suggestedKey,
        state: {
          init: () => null,
          apply: (tr, value) => {
            const next = tr.getMeta(suggestedKey) as BaseBlocks | null | undefined
            return next === undefined ? value : next
          },
        },
        props: {
          decorations(state) {
            const base = suggestedKey.getState(state)
            if (!base) return null
            const decorations: Decoration[] = []
            state.doc.forEach((node, offset) => {
              const id = typeof node.attrs.id === 'string' ? node.attrs.id : null
              if (id && base[id] === blockJson(node)) return
              const added = !id || !(id in base)
              decorations.push(
                Decoration.node(offset, offset + node.nodeSize, {
                  class: added ? 'suggested-block suggested-added' : 'suggested-block',
                  title: added ? 'Added in your suggestion' : 'Changed in your suggestion',
                }),
              )
            })
            return DecorationSet.create(state.doc, decorations)
          },
        },
      }),
    ]
  },
})

/** Marks the blocks that differ from `base`, or none. */
export function showSuggestedChanges(editor: Editor, base: BaseBlocks | null) {
  editor.view.dispatch(editor.state.tr.setMeta(suggestedKey, base).setMeta('addToHistory', false))
}
