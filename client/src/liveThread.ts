// A thread page's live updates: long-polls wait_for_changes with the version it shows, reads again on a change.
import { onUnmounted, type Ref } from 'vue'
import { callTool } from './api'
import { me } from './session'

/** What the server allows for one wait (WAIT_MAX_S); it answers at once when the thread is already newer. */
const WAIT_S = 25
const RETRY_MS = { first: 1_000, most: 30_000 }

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Runs while the page is mounted: one `wait_for_changes` at a time (a person has 4 at most), then
 * `refresh()` when the version moved. Failures back off, doubling up to 30 seconds; the loop ends
 * when the page goes.
 */
export function useLiveThread(threadId: string, version: Ref<string | null>, refresh: () => Promise<void>) {
  let stopped = false
  let failures = 0

  async function loop() {
    while (!stopped) {
      const have = version.value
      // Waiting takes a session; a visitor who signs in or jumps in as a guest is followed from then.
      if (have === null || !me.value) {
        await pause(RETRY_MS.first)
        continue
      }
      try {
        const { data } = await callTool('wait_for_changes', { thread_id: threadId, version: have, timeout_seconds: WAIT_S })
        failures = 0
        if (!stopped && data.changed && version.value === have) await refresh()
      } catch {
        // Offline, the server restarting, the session ended, or the person's four waits taken by other
        // tabs: try again later.
        failures++
        await pause(Math.min(RETRY_MS.most, RETRY_MS.first * 2 ** failures))
      }
    }
  }

  void loop()
  onUnmounted(() => {
    stopped = true
  })
}
