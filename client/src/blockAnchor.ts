// A pad's address with `#section-<id>` (a search hit, a task's result) opens the pad at that section.
import { watch } from 'vue'
import { hash, route } from './router'

/** How long a pad may take to sync and draw before the page gives up looking for the section. */
const LOOK_MS = 20_000
const PREFIX = '#section-'

/**
 * Once the pad's editor has drawn the block whose `data-block-id` the fragment names, scrolls it to
 * the top and marks it for a moment. The editor draws after the pad syncs, so this watches the page
 * rather than waiting a fixed time. Runs for the whole app (App.vue), on every move.
 */
export function useBlockAnchor() {
  let stop: (() => void) | null = null
  watch(
    [route, hash],
    ([at, fragment]) => {
      stop?.()
      stop = null
      if (at.name !== 'pad' || !fragment.startsWith(PREFIX)) return
      const id = decodeURIComponent(fragment.slice(PREFIX.length))
      const find = () => document.querySelector<HTMLElement>(`.pad-body [data-block-id="${CSS.escape(id)}"]`)
      const arrive = (block: HTMLElement) => {
        block.scrollIntoView({ block: 'start' })
        block.classList.add('anchored')
        setTimeout(() => block.classList.remove('anchored'), 2_500)
      }
      const now = find()
      if (now) return arrive(now)
      const observer = new MutationObserver(() => {
        const block = find()
        if (!block) return
        stop?.()
        arrive(block)
      })
      observer.observe(document.body, { childList: true, subtree: true })
      const giveUp = setTimeout(() => stop?.(), LOOK_MS)
      stop = () => {
        observer.disconnect()
        clearTimeout(giveUp)
        stop = null
      }
    },
    { immediate: true },
  )
}
