// Who is where in a pad: each person's colour, their caret and selection, and the presence list.
// The CSP forbids `style` attributes, so colours travel as hex in awareness (what other Tiptap
// clients expect) but are drawn through one class per palette entry (see editor.css).
import { Extension, type Editor } from '@tiptap/core'
import { Plugin, PluginKey } from '@tiptap/pm/state'
import { Decoration, DecorationSet, type DecorationAttrs } from '@tiptap/pm/view'
import { callerNote } from '../../schema/callers.ts'
import type { PadHistoryView } from './api'

/** Caret colours; editor.css defines `.caret-color-<index>` for each, in this order. */
export const PALETTE = ['#d1453b', '#2f7d32', '#2f5bd3', '#9c3fb5', '#c26a00', '#00838f', '#c2185b', '#5d6b00'] as const

export interface CaretUser {
  id?: string
  name?: string
  color?: string
  kind?: 'human' | 'agent'
}

/** The same person gets the same colour in every tab and on every visit. */
export function colorFor(participantId: string): string {
  // FNV-1a: tiny, stable, and spreads short ids well enough over eight colours.
  let hash = 0x811c9dc5
  for (let i = 0; i < participantId.length; i++) {
    hash ^= participantId.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return PALETTE[(hash >>> 0) % PALETTE.length]!
}

/** The class that draws a colour; colours outside the palette (other clients) get a neutral one. */
export function colorClass(color: unknown): string {
  const index = PALETTE.indexOf(String(color).toLowerCase() as (typeof PALETTE)[number])
  return index === -1 ? 'caret-color-other' : `caret-color-${index}`
}

function displayName(user: CaretUser): string {
  return typeof user.name === 'string' && user.name.trim() ? user.name.trim() : 'Someone'
}

/** Another person's caret with their name above it, for the collaboration-caret extension. */
export function renderCaret(user: CaretUser): HTMLElement {
  const caret = document.createElement('span')
  caret.className = `collaboration-carets__caret ${colorClass(user.color)}`
  const label = document.createElement('div')
  label.className = 'collaboration-carets__label'
  label.textContent = displayName(user)
  // Word joiners keep the caret from breaking the line it sits in.
  caret.append('\u2060', label, '\u2060')
  return caret
}

/** Another person's selection: a class instead of y-prosemirror's default inline style. */
export function renderSelection(user: CaretUser): DecorationAttrs {
  return { class: `collaboration-carets__selection ${colorClass(user.color)}` }
}

export interface Present {
  key: string
  name: string
  colorClass: string
  self: boolean
  /** An agent connected to the pad (a Yjs client on its own key). */
  agent: boolean
}

/** Everyone connected to the pad, one entry per person even with several tabs open, you first. */
export function presentPeople(states: Map<number, Record<string, unknown>>, selfClientId: number): Present[] {
  const people = new Map<string, Present>()
  for (const [clientId, state] of states) {
    const user = state.user as CaretUser | undefined
    if (!user || typeof user !== 'object') continue
    const key = typeof user.id === 'string' && user.id ? user.id : `client:${clientId}`
    const self = clientId === selfClientId
    const known = people.get(key)
    if (known) {
      known.self ||= self
      continue
    }
    people.set(key, { key, name: displayName(user), colorClass: colorClass(user.color), self, agent: user.kind === 'agent' })
  }
  return [...people.values()].sort((a, b) => Number(b.self) - Number(a.self) || a.name.localeCompare(b.name))
}

/** A writer's name and whether a person or an agent, as the pad page shows them. */
export const writerLabel = (writer: Pick<CaretUser, 'name' | 'kind'> & { caller?: string | undefined }) =>
  `${displayName(writer)} (${writer.kind === 'agent' ? 'agent' : 'person'}${callerNote(writer.caller) ? `, ${callerNote(writer.caller)}` : ''})`

/** A block's last writer, as the history tool names them. */
export type BlockAuthor = PadHistoryView['authors'][string]

const authorsKey = new PluginKey<Record<string, BlockAuthor> | null>('authorColours')

/**
 * Author colours: each top-level block whose last writer is known gets that writer's colour (the
 * same one as their caret) as a bar at its side, and their name in `data-author` and its title.
 */
export const AuthorColours = Extension.create({
  name: 'authorColours',
  addProseMirrorPlugins() {
    return [
      new Plugin<Record<string, BlockAuthor> | null>({
        key: authorsKey,
        state: {
          init: () => null,
          apply: (tr, value) => {
            const next = tr.getMeta(authorsKey) as Record<string, BlockAuthor> | null | undefined
            return next === undefined ? value : next
          },
        },
        props: {
          decorations(state) {
            const authors = authorsKey.getState(state)
            if (!authors) return null
            const decorations: Decoration[] = []
            state.doc.forEach((node, offset) => {
              const author = typeof node.attrs.id === 'string' ? authors[node.attrs.id] : undefined
              if (!author) return
              const label = writerLabel(author)
              decorations.push(
                Decoration.node(offset, offset + node.nodeSize, {
                  class: `author-mark ${colorClass(colorFor(author.id))}`,
                  'data-author': label,
                  title: `Last written by ${label}`,
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

/** Shows these authors' colours in the editor, or none. */
export function showAuthors(editor: Editor, authors: Record<string, BlockAuthor> | null) {
  editor.view.dispatch(editor.state.tr.setMeta(authorsKey, authors).setMeta('addToHistory', false))
}
