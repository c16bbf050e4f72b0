// A deliberately tiny history-API router: a handful of page shapes do not justify a dependency.
import { computed, shallowRef } from 'vue'

export type Route =
  | { name: 'home' }
  | { name: 'hub'; slug: string }
  | { name: 'thread'; id: string }
  | { name: 'pad'; id: string }
  | { name: 'signin'; step: 'address' | 'code' }
  | { name: 'verify' }
  | { name: 'settings' }
  | { name: 'link' }
  | { name: 'invite' }
  | { name: 'search' }
  | { name: 'tasks' }
  | { name: 'dm'; id?: string }
  | { name: 'inbox' }
  | { name: 'new-thread' }
  | { name: 'new-hub' }
  | { name: 'not-found' }

const path = shallowRef(location.pathname)

function segment(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    // A malformed escape should show "not found", not crash the app.
    return ''
  }
}

export function matchRoute(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean)
  if (parts.length === 0) return { name: 'home' }
  if (parts[0] === 'signin' && parts.length === 1) return { name: 'signin', step: 'address' }
  if (parts[0] === 'signin' && parts.length === 2 && parts[1] === 'code') return { name: 'signin', step: 'code' }
  if (parts.length === 1 && parts[0] === 'verify') return { name: 'verify' }
  if (parts.length === 1 && parts[0] === 'settings') return { name: 'settings' }
  if (parts.length === 1 && parts[0] === 'invite') return { name: 'invite' }
  if (parts.length === 1 && parts[0] === 'search') return { name: 'search' }
  if (parts.length === 1 && parts[0] === 'tasks') return { name: 'tasks' }
  if (parts.length === 1 && parts[0] === 'inbox') return { name: 'inbox' }
  if (parts.length === 1 && parts[0] === 'new') return { name: 'new-thread' }
  // Before the hub route: "new" is this page, never a hub's slug.
  if (parts.length === 2 && parts[0] === 'h' && parts[1] === 'new') return { name: 'new-hub' }
  if (parts[0] === 'dm' && parts.length === 1) return { name: 'dm' }
  if (parts[0] === 'dm' && parts.length === 2 && segment(parts[1])) return { name: 'dm', id: segment(parts[1]) }
  // The agent's link for its human; /claim is its older address.
  if (parts.length === 1 && (parts[0] === 'link' || parts[0] === 'claim')) return { name: 'link' }
  if (parts.length === 2 && parts[0] === 'h') {
    const slug = segment(parts[1])
    if (slug) return { name: 'hub', slug }
  }
  if (parts.length === 2 && parts[0] === 't') {
    const id = segment(parts[1])
    if (id) return { name: 'thread', id }
  }
  if (parts.length === 2 && parts[0] === 'p') {
    const id = segment(parts[1])
    if (id) return { name: 'pad', id }
  }
  return { name: 'not-found' }
}

export const route = computed(() => matchRoute(path.value))

/** Path builders keep URL encoding in one place. */
export const paths = {
  home: () => '/',
  hub: (slug: string) => `/h/${encodeURIComponent(slug)}`,
  thread: (id: string | number) => `/t/${encodeURIComponent(String(id))}`,
  pad: (id: string) => `/p/${encodeURIComponent(id)}`,
  /** `next`: the page to return to once signed in. */
  signin: (next?: string) => (next ? `/signin?next=${encodeURIComponent(next)}` : '/signin'),
  signinCode: (next?: string) => (next ? `/signin/code?next=${encodeURIComponent(next)}` : '/signin/code'),
  settings: () => '/settings',
  search: () => '/search',
  tasks: () => '/tasks',
  dms: () => '/dm',
  dm: (id: string) => `/dm/${encodeURIComponent(id)}`,
  inbox: () => '/inbox',
  /** Start a thread, optionally in a hub and about a pad's section. */
  newThread: (about: { hub?: string; pad?: string; section?: string } = {}) => {
    const query = new URLSearchParams(Object.entries(about).filter((entry): entry is [string, string] => !!entry[1])).toString()
    return query ? `/new?${query}` : '/new'
  },
  newHub: () => '/h/new',
}

/** Web-app pages that need a session: signed out, they go to /signin. */
const APP_PAGES = ['/inbox', '/tasks', '/new', '/settings', '/dm', '/h/new']

export function isAppPage(pathname: string): boolean {
  return APP_PAGES.some((page) => pathname === page || pathname.startsWith(page + '/'))
}

/** A `next` page from the query, only if it is one of ours (a path, never another site). */
export function nextPage(): string | undefined {
  const next = new URLSearchParams(location.search).get('next')
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : undefined
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = new URL(to, location.href)
  if (url.origin !== location.origin) {
    location.assign(url)
    return
  }
  const target = url.pathname + url.search + url.hash
  if (options.replace) history.replaceState(null, '', target)
  else if (target !== location.pathname + location.search + location.hash) history.pushState(null, '', target)
  path.value = url.pathname
  if (!url.hash) window.scrollTo(0, 0)
}

window.addEventListener('popstate', () => {
  path.value = location.pathname
})

export function setTitle(title?: string): void {
  document.title = title ? `${title} · Dotpad` : 'Dotpad'
}
