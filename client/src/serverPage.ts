// The page the server sent for a public page carries its text (api/publicReading.ts); the app takes
// it over once, for the address it was sent for, rather than asking for it again.
const sent = document.getElementById('server-page')
let first: { path: string; html: string } | null = sent ? { path: location.pathname + location.search, html: sent.innerHTML } : null

/** The server's text for `path` if this is the page it was sent with; after the first page, none. */
export function takeServerPage(path: string): string | null {
  const page = first?.path === path ? first.html : null
  first = null
  return page
}
