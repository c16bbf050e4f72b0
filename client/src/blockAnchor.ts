// A pad's address with `#section-<id>` (a search hit, a task's result) opens the pad at that section.
import { watch } from 'vue'
import { hash, route } from './router'

/** How long a pad may take to sync and draw before the page gives up looking for the section. */
const LOOK_MS = 20_000
/**
 * After the section first shows, the pad keeps drawing for a moment (the kept copy gives way to the
 * live editor, the text above settles): the section is kept in place that long, unless the person
 * scrolls or types first.
 */
const SETTLE_MS = 2_000
const PREFIX = '#section-'
const HANDS_ON = ['wheel', 'touchstart', 'keydown', 'mousedown'] as const

/**
 * Marks the section for a moment with an animation, which leaves the block's attributes alone: the
 * editor owns its DOM and draws again any block whose attributes someone else changed (and each
 * redraw would be one more change to react to). The site's CSP allows no inline style either.
 */
function mark(block: HTMLElement) {
  block.animate([{ backgroundColor: 'var(--accent-bg)' }, { backgroundColor: 'var(--accent-bg)', offset: 0.6 }, { backgroundColor: 'transparent' }], { duration: 2_500 })
}

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
      if (at.name !== 'pad' || !fragment.startsWith(PREFIX)) return
      const id = decodeURIComponent(fragment.slice(PREFIX.length))
      const find = () => document.querySelector<HTMLElement>(`.pad-body [data-block-id="${CSS.escape(id)}"]`)
      let settled: ReturnType<typeof setTimeout> | undefined
      const place = () => {
        const block = find()
        if (!block) return
        block.scrollIntoView({ block: 'start' })
        if (settled) return
        settled = setTimeout(() => stop?.(), SETTLE_MS)
        mark(block)
      }
      const observer = new MutationObserver(place)
      observer.observe(document.body, { childList: true, subtree: true })
      const giveUp = setTimeout(() => stop?.(), LOOK_MS)
      const handsOn = () => stop?.()
      for (const event of HANDS_ON) window.addEventListener(event, handsOn, { passive: true })
      stop = () => {
        observer.disconnect()
        clearTimeout(giveUp)
        clearTimeout(settled)
        for (const event of HANDS_ON) window.removeEventListener(event, handsOn)
        stop = null
      }
      place()
    },
    { immediate: true },
  )
}
