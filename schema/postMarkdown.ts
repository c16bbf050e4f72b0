// Posts and public pages as HTML: Markdown with raw HTML off, links by the author's reach (SPEC part 4
// "Escaping"). The web app renders posts with it, and the server and the app render the Markdown views
// of public pages with it for people, so a page reads the same with JavaScript and without.
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import type StateCore from 'markdown-it/lib/rules_core/state_core.mjs';
import { MENTION } from './mentions.ts';

/** What one rendering needs to know: whether the author reads verified, and which origin is ours. */
export type PostEnv = { reach: boolean; origin: string };

/**
 * A Markdown view rendered as a page (`renderPage`): the service's own lines, where only links into
 * this site are live, and participant text in `~~~markdown` fences, rendered as Markdown in its turn.
 */
type PageEnv = PostEnv & { page: 'view' | 'said' };
type Env = PostEnv | PageEnv;
const pageOf = (env: Env) => ('page' in env ? env.page : undefined);

export const LINK_REL = 'noopener nofollow ugc';

// html: false escapes any tag a writer sends; breaks: true keeps a chat post's single line breaks.
const md = new MarkdownIt('default', { html: false, breaks: true, linkify: true, typographer: false });
// Only links written with a scheme: "see example.com" stays text rather than becoming a guessed link.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

function text(state: StateCore, content: string): Token {
  const token = new state.Token('text', '', 0);
  token.content = content;
  return token;
}

/**
 * Images never load from elsewhere (a picture from another site tells it who reads the thread): an
 * image becomes a link labelled with its alt text, which then follows the link rules below.
 */
function imageAsLink(state: StateCore, image: Token): Token[] {
  const open = new state.Token('link_open', 'a', 1);
  open.attrs = [['href', image.attrGet('src') ?? '']];
  const close = new state.Token('link_close', 'a', -1);
  return [open, text(state, `image: ${image.content || 'no description'}`), close];
}

function resolve(href: string, origin: string): URL | null {
  try {
    return new URL(href, origin);
  } catch {
    return null;
  }
}

/** A link into this site as a page shows it: a path, the Markdown form (`.md`, `format=md`) made the page's. */
function pagePath(url: URL): string {
  const path = url.pathname.endsWith('.md') ? url.pathname.slice(0, -3) : url.pathname;
  url.searchParams.delete('format');
  return `${path}${url.search}${url.hash}`;
}

/** Where the app sends a reader who follows a link it does not show live: a page that warns first. */
export const outPath = (url: string) => `/out?${new URLSearchParams({ u: url })}`;

/**
 * The marker `[link to <host>]` for a link shown as text; in a post in the app it leads to the warning
 * page (`/out?u=`), so the reader may still follow it knowingly. A page's text no longer holds the
 * address (the Markdown view dropped it), so there it stays text.
 */
function outLink(state: StateCore, url: URL, warn: boolean): Token[] {
  const marker = text(state, `[link to ${url.host}]`);
  if (!warn || (url.protocol !== 'https:' && url.protocol !== 'http:')) return [marker];
  const open = new state.Token('link_open', 'a', 1);
  open.attrs = [['href', outPath(url.href)], ['rel', LINK_REL], ['class', 'out-link']];
  return [open, marker, new state.Token('link_close', 'a', -1)];
}

/**
 * A link stays live when it points into this site or its author has reach; then it opens with
 * rel="noopener nofollow ugc" (and in a new tab when it leaves the site). Otherwise it reads as text:
 * a written link keeps its label followed by `[link to <host>]` (`outLink`), a bare or <autolink> only the marker.
 * On a page's own lines (titles, names) a bare address to elsewhere is never live and stays as written.
 */
function linksByReach(children: Token[], state: StateCore, env: Env): Token[] {
  const out: Token[] = [];
  const page = pageOf(env);
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!;
    if (token.type === 'image') {
      children.splice(i, 1, ...imageAsLink(state, token));
      i--;
      continue;
    }
    if (token.type !== 'link_open') {
      out.push(token);
      continue;
    }
    const url = resolve(token.attrGet('href') ?? '', env.origin);
    const ours = url?.origin === env.origin;
    if (url && (ours || (env.reach && page !== 'view'))) {
      if (ours && page) token.attrSet('href', pagePath(url));
      else token.attrSet('rel', LINK_REL);
      if (!ours) token.attrSet('target', '_blank');
      out.push(token);
      continue;
    }
    let end = i + 1;
    while (end < children.length && children[end]!.type !== 'link_close') end++;
    const label = children.slice(i + 1, end);
    const bare = token.info === 'auto';
    if (page === 'view' && bare) out.push(...label);
    else {
      if (!bare) out.push(...label);
      if (url?.host) {
        if (!bare) out.push(text(state, ' '));
        out.push(...outLink(state, url, page === undefined));
      } else if (bare) out.push(...label);
    }
    i = end;
  }
  return out;
}

md.core.ruler.push('links_by_reach', (state) => {
  const env = state.env as Env;
  for (const token of state.tokens) {
    if (token.type === 'inline' && token.children) token.children = linksByReach(token.children, state, env);
  }
});

/** Where a mention leads: a message to the person it names (the DM page starts one with them). */
export const mentionHref = (handle: string) => `/dm?with=${encodeURIComponent(handle)}`;

/**
 * `@handle` in the text (not inside a link or code) becomes a link to the person, read as the server
 * reads mentions (schema/mentions.ts). It points into this site, so the reach rule leaves it live.
 */
function mentionLinks(children: Token[], state: StateCore): Token[] {
  const out: Token[] = [];
  let inLink = 0;
  for (const token of children) {
    if (token.type === 'link_open') inLink++;
    if (token.type === 'link_close') inLink--;
    if (token.type !== 'text' || inLink > 0) {
      out.push(token);
      continue;
    }
    let last = 0;
    for (const match of token.content.matchAll(MENTION)) {
      const handle = match[0];
      if (match.index > last) out.push(text(state, token.content.slice(last, match.index)));
      const open = new state.Token('link_open', 'a', 1);
      open.attrs = [['href', mentionHref(handle.toLowerCase())], ['class', 'mention']];
      out.push(open, text(state, handle), new state.Token('link_close', 'a', -1));
      last = match.index + handle.length;
    }
    if (last === 0) out.push(token);
    else if (last < token.content.length) out.push(text(state, token.content.slice(last)));
  }
  return out;
}

// Mentions are links in what participants write (posts, and their text on a page), not in a page's own lines.
md.core.ruler.push('mentions', (state) => {
  if (pageOf(state.env as Env) === 'view') return;
  for (const token of state.tokens) {
    if (token.type === 'inline' && token.children) token.children = mentionLinks(token.children, state);
  }
});

// A post's headings sit under the page's h1 (the thread) and h2 (its parts), so they start at h3; a
// page's own headings stay as the view wrote them.
md.renderer.rules.heading_open = (tokens, idx, options, env: Env, self) => {
  const token = tokens[idx]!;
  if (pageOf(env) !== 'view') token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 2)}`;
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.heading_close = md.renderer.rules.heading_open;

// A chat post keeps its single line breaks; a page's own text (a site page's wrapped prose) does not.
md.renderer.rules.softbreak = (_tokens, _idx, options, env: Env) => (options.breaks && pageOf(env) !== 'view' ? '<br>\n' : '\n');

// On a page, participant text (a `~~~markdown` fence) is rendered as Markdown in its own box. Its
// links already have the form its author's reach allows (the view made them so), so they stay as written.
const codeFence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, idx, options, env: Env, self) => {
  const token = tokens[idx]!;
  if (pageOf(env) !== 'view' || token.info.trim() !== 'markdown') return codeFence(tokens, idx, options, env, self);
  return `<div class="said">${md.render(token.content, { reach: true, origin: env.origin, page: 'said' } satisfies PageEnv)}</div>\n`;
};

/**
 * The post's Markdown as safe HTML for v-html: no tag of the writer's survives, no image loads.
 * `inline`: one line's worth (a link, a title) with no paragraph around it, for use within a sentence.
 */
export function renderPost(body: string, env: PostEnv, inline = false): string {
  return inline ? md.renderInline(body, env) : md.render(body, env);
}

/** A Markdown view as a page for people: what `pageFromMarkdown` gives. */
export type MarkdownPage = {
  /** The view's front matter (`type`, `id`, `accepts_guests`, …), values as the view wrote them. */
  front: Record<string, unknown>;
  title: string;
  /** The page's text, from after its title, on one line and at most 160 characters. */
  description: string;
  html: string;
};

const FRONT_MATTER = /^---\n([\s\S]*?)\n---\n/;
function parseFront(yaml: string): Record<string, unknown> {
  const front: Record<string, unknown> = {};
  for (const line of yaml.split('\n')) {
    const at = line.indexOf(': ');
    if (at < 1) continue;
    try {
      front[line.slice(0, at)] = JSON.parse(line.slice(at + 2));
    } catch {
      front[line.slice(0, at)] = line.slice(at + 2);
    }
  }
  return front;
}

const plain = (html: string) =>
  html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!)
    .replace(/\s+/g, ' ')
    .trim();

/**
 * A Markdown view (SPEC part 4), as made for people (without the lines only agents read), rendered
 * through the one renderer: the front matter read off, participant text in boxes.
 */
export function pageFromMarkdown(markdown: string, origin: string): MarkdownPage {
  const matter = FRONT_MATTER.exec(markdown);
  const front = matter ? parseFront(matter[1]!) : {};
  const body = matter ? markdown.slice(matter[0].length) : markdown;
  const html = md.render(body, { reach: false, origin, page: 'view' } satisfies PageEnv);
  const h1 = /<h1>([\s\S]*?)<\/h1>/.exec(html);
  const title = h1 ? plain(h1[1]!) : 'Dotpad';
  const after = plain(h1 ? html.slice(h1.index + h1[0].length) : html);
  const description = after.length > 160 ? `${after.slice(0, 159).replace(/\s+\S*$/, '')}…` : after;
  return { front, title, description, html };
}
