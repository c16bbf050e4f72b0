// Dotpad's service worker: only so that a pad opened before opens again with no network. Online,
// every request goes to the network as if this worker were not here. Offline, a page load gets the
// app's kept page and its files (kept by the pad page, client/src/offline.ts); the pad's text itself
// comes from the browser's IndexedDB copy, and the WebSocket syncs it once the network is back.
const SHELL_CACHE = 'dotpad-shell-v1'

self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()))

self.addEventListener('fetch', (event) => {
  const request = event.request
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return
  if (request.mode === 'navigate') {
    event.respondWith(
      fetch(request).catch(async () => (await caches.match('/index.html', { cacheName: SHELL_CACHE })) ?? Response.error()),
    )
    return
  }
  // Files under /assets/ are named by their content: a kept one is never stale.
  if (new URL(request.url).pathname.startsWith('/assets/')) {
    event.respondWith(
      caches.match(request, { cacheName: SHELL_CACHE }).then((kept) => kept ?? fetch(request)),
    )
  }
})
