// Section marks in the pad page (SPEC part 2 "Section marks"): a small badge above each marked
// section's first block, its mark's whole text as the badge's title. A widget decoration, so the badge
// is no part of the pad's text and the editor never sends it.
import { Extension, type Editor } from '@tiptap/core'
import { Plugin, PluginKey } from '@tiptap/pm/state'
import { Decoration, DecorationSet } from '@tiptap/pm/view'

/** Each marked section's mark as open_pad words it, by section id (its first block's id). */
export type Marks = Record<string, string>

/** A mark's short label and its tone, from the words open_pad gives it. */
export function badgeOf(mark: string): { label: string; tone: 'war' | 'checked' | 'plain' } {
  if (mark.startsWith('proposals only')) return { label: 'Suggestions only: edit war', tone: 'war' }
  // `checked by <name>: "<note>"`: the name shows, the note is in the title.
  if (mark.startsWith('checked by')) return { label: `C${mark.slice(1, mark.lastIndexOf(': "'))}`, tone: 'checked' }
  if (mark.startsWith('changed since check')) return { label: 'Changed since check', tone: 'plain' }
  return { label: 'Unchecked', tone: 'plain' }
}

const marksKey = new PluginKey<Marks | null>('sectionMarks')

function badge(mark: string): HTMLElement {
  const { label, tone } = badgeOf(mark)
  const element = document.createElement('div')
  element.className = `section-mark section-mark-${tone}`
  element.contentEditable = 'false'
  element.title = mark
  element.setAttribute('role', 'note')
  element.setAttribute('aria-label', `Section mark: ${mark}`)
  element.textContent = label
  return element
}

export const SectionMarks = Extension.create({
  name: 'sectionMarks',
  addProseMirrorPlugins() {
    return [
      new Plugin<Marks | null>({
        key: marksKey,
        state: {
          init: () => null,
          apply: (tr, value) => {
            const next = tr.getMeta(marksKey) as Marks | null | undefined
            return next === undefined ? value : next
          },
        },
        props: {
          decorations(state) {
            const marks = marksKey.getState(state)
            if (!marks || !Object.keys(marks).length) return null
            const decorations: Decoration[] = []
            state.doc.forEach((node, offset) => {
              const mark = typeof node.attrs.id === 'string' ? marks[node.attrs.id] : undefined
              if (mark) decorations.push(Decoration.widget(offset, () => badge(mark), { side: -1, key: `${node.attrs.id}:${mark}`, ignoreSelection: true }))
            })
            return DecorationSet.create(state.doc, decorations)
          },
        },
      }),
    ]
  },
})

/** Shows these marks in the editor, or none. */
export function showMarks(editor: Editor, marks: Marks | null) {
  editor.view.dispatch(editor.state.tr.setMeta(marksKey, marks).setMeta('addToHistory', false))
}
