// A thread page's live updates: long-polls wait_for_changes with the version it shows, reads again on a change.
import { onUnmounted, type Ref } from 'vue'
import { callTool, toApiError } from './api'
import { me, sessionEnding } from './session'
import { sharedWait } from './sharedWait'

/** What the server allows for one wait (WAIT_MAX_S); it answers at once when the thread is already newer. */
const WAIT_S = 25
const RETRY_MS = { first: 1_000, most: 30_000 }
/** How often the page reads the thread itself while the server refuses it a wait. */
const READ_MS = 3_000
const READS_BETWEEN_ASKS = 4

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Runs while the page is mounted: one `wait_for_changes` at a time (a person has 4 at most), then
 * `refresh()` when the version moved, shared with the browser's other tabs on the thread. Refused a
 * wait, it reads the thread every 3 seconds instead; other failures back off, doubling up to 30
 * seconds. The loop ends when the page goes.
 */
export function useLiveThread(threadId: string, version: Ref<string | null>, refresh: () => Promise<void>) {
  let stopped = false
  let failures = 0
  // A wait still open when the page goes would hold one of the browser's few connections to the server.
  const leaving = new AbortController()
  const shared = sharedWait(`thread:${threadId}`)
  /** Reads the thread again, and tells the other tabs when that moved it. */
  async function reread() {
    const before = version.value
    await refresh()
    if (version.value !== null && version.value !== before) shared.tell(version.value)
  }
  // Another tab's wait saw the thread move past what this one shows.
  shared.onTold((told) => {
    if (!stopped && told !== version.value) void refresh()
  })

  async function loop() {
    while (!stopped) {
      const have = version.value
      // Waiting takes a session; a visitor who signs in or jumps in as a guest is followed from then.
      if (have === null || !me.value) {
        await pause(RETRY_MS.first)
        continue
      }
      try {
        const { data } = await callTool(
          'wait_for_changes',
          { thread_id: threadId, version: have, timeout_seconds: WAIT_S },
          AbortSignal.any([leaving.signal, sessionEnding()]),
        )
        failures = 0
        if (!stopped && data.changed && version.value === have) await reread()
      } catch (err) {
        if (stopped) return
        if (toApiError(err).status === 429) {
          // All four of the person's waits are taken (other tabs, or pages just left, whose waits the
          // server keeps until they time out): read the thread every few seconds, then ask again.
          for (let read = 0; read < READS_BETWEEN_ASKS && !stopped; read++) {
            await pause(READ_MS)
            if (!stopped) await reread()
          }
          continue
        }
        // Offline, the server restarting or the session ended: try again later, less and less often.
        failures++
        await pause(Math.min(RETRY_MS.most, RETRY_MS.first * 2 ** failures))
      }
    }
  }

  void shared.lead(leaving.signal, loop)
  onUnmounted(() => {
    stopped = true
    leaving.abort()
    shared.close()
  })
}
