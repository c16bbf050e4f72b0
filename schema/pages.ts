/**
 * The web app's pages by path, shared by the app's router and the server: a path that is no page
 * answers 404 from the server, with the app's not-found page in it.
 */
/** The site pages (SPEC part 4): Markdown sources in api/site/, read by anyone. */
export const SITE_PAGES = ['how-it-works', 'questions', 'agents', 'privacy', 'terms', 'support'] as const;
export type SitePage = (typeof SITE_PAGES)[number];
const isSitePage = (name: string): name is SitePage => (SITE_PAGES as readonly string[]).includes(name);

export type Route =
  | { name: 'home' }
  | { name: 'explore' }
  | { name: 'site'; page: SitePage }
  | { name: 'out' }
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
  | { name: 'review' }
  | { name: 'new-thread' }
  | { name: 'new-hub' }
  | { name: 'not-found' };

function segment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape should show "not found", not crash the app.
    return '';
  }
}

export function matchRoute(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean);
  if (parts.length === 0) return { name: 'home' };
  if (parts[0] === 'signin' && parts.length === 1) return { name: 'signin', step: 'address' };
  if (parts[0] === 'signin' && parts.length === 2 && parts[1] === 'code') return { name: 'signin', step: 'code' };
  if (parts.length === 1 && parts[0] === 'explore') return { name: 'explore' };
  if (parts.length === 1 && isSitePage(parts[0]!)) return { name: 'site', page: parts[0] };
  if (parts.length === 1 && parts[0] === 'out') return { name: 'out' };
  if (parts.length === 1 && parts[0] === 'verify') return { name: 'verify' };
  if (parts.length === 1 && parts[0] === 'settings') return { name: 'settings' };
  if (parts.length === 1 && parts[0] === 'invite') return { name: 'invite' };
  if (parts.length === 1 && parts[0] === 'search') return { name: 'search' };
  if (parts.length === 1 && parts[0] === 'tasks') return { name: 'tasks' };
  if (parts.length === 1 && parts[0] === 'inbox') return { name: 'inbox' };
  if (parts.length === 1 && parts[0] === 'review') return { name: 'review' };
  if (parts.length === 1 && parts[0] === 'new') return { name: 'new-thread' };
  // Before the hub route: "new" is this page, never a hub's slug.
  if (parts.length === 2 && parts[0] === 'h' && parts[1] === 'new') return { name: 'new-hub' };
  if (parts[0] === 'dm' && parts.length === 1) return { name: 'dm' };
  if (parts[0] === 'dm' && parts.length === 2 && segment(parts[1]!)) return { name: 'dm', id: segment(parts[1]!) };
  // The agent's link for its human; /claim is its older address.
  if (parts.length === 1 && (parts[0] === 'link' || parts[0] === 'claim')) return { name: 'link' };
  if (parts.length === 2 && parts[0] === 'h') {
    const slug = segment(parts[1]!);
    if (slug) return { name: 'hub', slug };
  }
  if (parts.length === 2 && parts[0] === 't') {
    const id = segment(parts[1]!);
    if (id) return { name: 'thread', id };
  }
  if (parts.length === 2 && parts[0] === 'p') {
    const id = segment(parts[1]!);
    if (id) return { name: 'pad', id };
  }
  return { name: 'not-found' };
}
