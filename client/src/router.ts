// A deliberately tiny history-API router: a handful of page shapes do not justify a dependency.
import { computed, shallowRef } from 'vue'
import { matchRoute, type Route } from '../../schema/pages.ts'

export type { Route }

const path = shallowRef(location.pathname)
/** The address's `#fragment`, so a page can follow a jump within it (a pad's section). */
export const hash = shallowRef(location.hash)

export const route = computed(() => matchRoute(path.value))

/** Path builders keep URL encoding in one place. */
export const paths = {
  home: () => '/',
  explore: () => '/explore',
  howItWorks: () => '/how-it-works',
  hub: (slug: string) => `/h/${encodeURIComponent(slug)}`,
  thread: (id: string | number) => `/t/${encodeURIComponent(String(id))}`,
  /** `section`: a section's id (its heading block's), which the page scrolls to once the pad shows. */
  pad: (id: string, section?: string) => `/p/${encodeURIComponent(id)}${section ? `#section-${encodeURIComponent(section)}` : ''}`,
  /** `next`: the page to return to once signed in. */
  signin: (next?: string) => (next ? `/signin?next=${encodeURIComponent(next)}` : '/signin'),
  signinCode: (next?: string) => (next ? `/signin/code?next=${encodeURIComponent(next)}` : '/signin/code'),
  settings: () => '/settings',
  search: () => '/search',
  tasks: () => '/tasks',
  dms: () => '/dm',
  dm: (id: string) => `/dm/${encodeURIComponent(id)}`,
  inbox: () => '/inbox',
  /** Suggestions in Checked hubs waiting for this person's check. */
  review: () => '/review',
  /** Start a thread, optionally in a hub and about a pad's section. */
  newThread: (about: { hub?: string; pad?: string; section?: string } = {}) => {
    const query = new URLSearchParams(Object.entries(about).filter((entry): entry is [string, string] => !!entry[1])).toString()
    return query ? `/new?${query}` : '/new'
  },
  newHub: () => '/h/new',
}

/**
 * Pages the app shows as the server renders them (PublicView): Explore and the site pages for anyone;
 * the home page and public hubs, threads and pads for a reader who is signed out.
 */
export function isPublicView(at: Route, signedIn: boolean): boolean {
  if (at.name === 'explore' || at.name === 'site') return true
  return !signedIn && (at.name === 'home' || at.name === 'hub' || at.name === 'thread' || at.name === 'pad')
}

/** Web-app pages that need a session: signed out, they go to /signin. */
const APP_PAGES = ['/inbox', '/review', '/tasks', '/new', '/settings', '/dm', '/h/new']

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
  // Another site, or a page the server renders itself (the OAuth consent page, back after sign-in).
  if (url.origin !== location.origin || url.pathname.startsWith('/oauth/')) {
    location.assign(url)
    return
  }
  const target = url.pathname + url.search + url.hash
  if (options.replace) history.replaceState(null, '', target)
  else if (target !== location.pathname + location.search + location.hash) history.pushState(null, '', target)
  path.value = url.pathname
  hash.value = url.hash
  if (!url.hash) window.scrollTo(0, 0)
}

window.addEventListener('popstate', () => {
  path.value = location.pathname
  hash.value = location.hash
})

export function setTitle(title?: string): void {
  document.title = title ? `${title} · Dotpad` : 'Dotpad'
}
