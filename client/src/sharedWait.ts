// One long-poll shared by the browser's tabs (a person holds 4 waits at most, SPEC part 8).

/**
 * Tabs of one browser waiting on the same thing share one wait: the tab holding the Web Lock `name`
 * waits and tells the others on a BroadcastChannel when something moved, so ten tabs take one wait
 * and all stay live; when that tab goes, another takes the lock. Where the browser has neither (an
 * insecure origin), each tab waits alone.
 */
export function sharedWait(name: string) {
  const key = `svc-wait:${name}`
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(key) : null
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined
  return {
    /** Runs `lead` while this tab holds the wait; resolves when it ends, or when `signal` gives up waiting for it. */
    lead: (signal: AbortSignal, lead: () => Promise<void>): Promise<void> =>
      locks ? locks.request(key, { signal }, lead).catch(() => undefined) : lead(),
    tell: (news: string) => channel?.postMessage(news),
    onTold: (heard: (news: string) => void) => channel?.addEventListener('message', (event: MessageEvent<string>) => heard(event.data)),
    close: () => channel?.close(),
  }
}
