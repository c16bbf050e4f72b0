import { readFileSync } from 'node:fs';
import type { Context } from 'koa';
import { AppError } from '../schema/errors.ts';
import { matchRoute, SITE_PAGES, type Route, type SitePage } from '../schema/pages.ts';
import { pageFromMarkdown } from '../schema/postMarkdown.ts';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { isIndexable } from '../server/core/places/publicPages.ts';
import { readableHub } from '../server/core/places/hubAccess.ts';
import { readablePad } from '../server/core/pads/pads.ts';
import { readableThread } from '../server/core/threads/threadAccess.ts';
import { optionalReader } from './http/auth.ts';
import { escapeHtml } from './http/escapeHtml.ts';
import { exploreMarkdown, homeMarkdown } from './frontViews.ts';
import { bodyHash, hubView, padView, threadView, type View } from './markdownViews.ts';

/**
 * The pages anyone may read (SPEC part 4): the home page, Explore, the site pages, and what reads as
 * public (hubs, threads, pads). Each is its Markdown view; for people the same Markdown is rendered by
 * the app's one renderer, into the page the server sends, so readers and crawlers without JavaScript
 * get the text, and the app takes over in the browser.
 */

const siteSources = new Map<SitePage, string>(SITE_PAGES.map((page) => [page, readFileSync(new URL(`./site/${page}.md`, import.meta.url), 'utf8')]));

/** A site page's Markdown, its links made absolute on this server. */
export const siteMarkdown = (core: Core, page: SitePage) => siteSources.get(page)!.replaceAll('{base}', core.config.baseUrl);

export type PublicMarkdown = { view: View; indexable: boolean };
type Query = Record<string, string | string[] | undefined>;

const fixed = (body: string): PublicMarkdown => ({ view: { etag: `W/"${bodyHash(body)}"`, text: async () => ({ body }) }, indexable: true });

/**
 * A page's Markdown view for a reader, and whether the page may be indexed (SPEC part 4 "Indexable
 * pages"); null for a path that has none. Private and missing throw the same `not_found`.
 */
export async function publicMarkdown(core: Core, reader: Actor | null, route: Route, query: Query, forPeople = false): Promise<PublicMarkdown | null> {
  switch (route.name) {
    case 'home':
      return fixed(await homeMarkdown(core, forPeople));
    case 'explore':
      return fixed(await exploreMarkdown(core, reader, forPeople));
    case 'site':
      return fixed(siteMarkdown(core, route.page));
    case 'hub':
      return { view: await hubView(core, reader, route.slug, query, forPeople), indexable: await isIndexable(core, 'hub', route.slug) };
    case 'thread':
      return { view: await threadView(core, reader, route.id, query, forPeople), indexable: await isIndexable(core, 'thread', route.id) };
    case 'pad':
      return { view: await padView(core, reader, route.id, query, forPeople), indexable: await isIndexable(core, 'pad', route.id) };
    default:
      return null;
  }
}

/** What the server puts in the web app's page: its status, whether it may be indexed, and for a signed-out reader its text. */
export type AppPage = {
  status: 200 | 404;
  indexable: boolean;
  content?: { title: string; description: string; canonical: string; html: string };
};

const signInLink = (path: string) => `<a href="/signin?next=${encodeURIComponent(path)}">Sign in to take part</a>`;

/** The ways to take part a page offers a signed-out reader, without JavaScript: a guest's jump-in form where the thread takes guests. */
function takePart(front: Record<string, unknown>, path: string): string {
  if (front.type === 'thread' && front.jump_in === true && typeof front.id === 'string') {
    return [
      `<aside class="take-part" data-jump-in="${escapeHtml(front.id)}">`,
      `<form method="post" action="/api/jump-in"><input type="hidden" name="thread" value="${escapeHtml(front.id)}">`,
      '<label>Your name <input name="name" maxlength="80" required autocomplete="nickname"></label> <button type="submit">Jump in</button></form>',
      `<p>This thread takes guests: pick a name nobody here uses, or ${signInLink(path).replace('Sign in to take part', 'sign in')}.</p>`,
      '</aside>',
    ].join('');
  }
  if (front.type === 'thread' || front.type === 'hub' || front.type === 'pad') return `<aside class="take-part"><p>${signInLink(path)}</p></aside>`;
  return '';
}

/** The site's pages every public page links to, so a reader (or a crawler) without JavaScript finds them all. */
export const FOOTER_LINKS: readonly [string, string][] = [
  ['/explore', 'Explore'],
  ['/how-it-works', 'How it works'],
  ['/questions', 'Questions'],
  ['/agents', 'For agents'],
  ['/privacy', 'Privacy'],
  ['/terms', 'Terms'],
  ['/support', 'Support'],
];
/** For a reader without JavaScript (the app draws its own header over it). */
const header = (signedIn: boolean) => `<header class="server-header"><a class="brand" href="/">Dotpad</a>${signedIn ? '' : '<a href="/signin">Sign in</a>'}</header>`;
const footer = `<footer class="site-footer"><nav aria-label="Site">${FOOTER_LINKS.map(([href, label]) => `<a href="${href}">${label}</a>`).join(' ')}</nav></footer>`;

/** The warning before an off-site link (`/out?u=`), for readers without JavaScript. */
function outContent(core: Core, ctx: Context): AppPage['content'] {
  const raw = typeof ctx.query.u === 'string' ? ctx.query.u : '';
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {}
  const safe = url && (url.protocol === 'https:' || url.protocol === 'http:') ? url : null;
  const html = safe
    ? `<h1>You are leaving Dotpad</h1><p>This link goes to <strong>${escapeHtml(safe.host)}</strong>. It was posted by an account Dotpad has not verified yet, so we do not show it as a live link.</p><p class="out-url"><code>${escapeHtml(safe.href)}</code></p><p><a href="${escapeHtml(safe.href)}" rel="noopener nofollow ugc noreferrer">Continue to ${escapeHtml(safe.host)}</a></p>`
    : '<h1>No link to follow</h1><p>This address holds no web link to follow.</p>';
  return { title: 'Leaving Dotpad', description: 'A warning before a link to another site.', canonical: `${core.config.baseUrl}/out`, html: `${header(false)}<div class="public-page">${html}</div>${footer}` };
}

/**
 * The page the web app is asked for: `404` for a path that is no page of the app or a hub, thread or
 * pad the reader may not read (private and missing alike, SPEC part 4: no soft 404s); for a signed-out
 * reader of a public page, its text too. Signed-in people get the app as it was.
 */
export function appPage(core: Core) {
  return async (ctx: Context): Promise<AppPage> => {
    const route = matchRoute(ctx.path);
    if (route.name === 'not-found') return { status: 404, indexable: false };
    if (route.name === 'out') return { status: 200, indexable: false, content: outContent(core, ctx) };
    // A bad credential shows the app, which asks to sign in again; it reads as signed out here.
    const actor = await optionalReader(ctx, core).then((reader) => reader.actor, () => null);
    try {
      // Signed in, hubs, threads, pads and the home page are the app's own; Explore and the site pages read the same for all.
      if (actor && route.name !== 'explore' && route.name !== 'site') return { status: 200, indexable: await signedInCheck(core, actor, route) };
      const page = await publicMarkdown(core, actor, route, ctx.query, true);
      if (!page) return { status: 200, indexable: false };
      const { body } = await page.view.text();
      const base = core.config.baseUrl;
      const { front, title, description, html } = pageFromMarkdown(body.toString(), base);
      const path = ctx.path;
      return {
        status: 200,
        indexable: page.indexable,
        content: { title, description, canonical: `${base}${path === '/' ? '/' : path.replace(/\/+$/, '')}`, html: `${header(actor !== null)}<div class="public-page">${html}${actor ? '' : takePart(front, path)}</div>${footer}` },
      };
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return { status: 404, indexable: false };
      throw error;
    }
  };
}

/** A signed-in reader's page: only whether they may read it (`not_found` if not) and whether it may be indexed. */
async function signedInCheck(core: Core, actor: Actor, route: Route): Promise<boolean> {
  if (route.name === 'hub') await readableHub(core, core.db.pool, route.slug, actor);
  else if (route.name === 'thread') await readableThread(core, core.db.pool, route.id, actor);
  else if (route.name === 'pad') await readablePad(core, core.db.pool, route.id, actor);
  else return route.name === 'home' || route.name === 'explore' || route.name === 'site';
  return isIndexable(core, route.name, route.name === 'hub' ? route.slug : route.id);
}
