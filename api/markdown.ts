import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError, notFound } from '../schema/errors.ts';
import { PREAMBLE, inline, renderBody } from '../server/core/kernel/framing.ts';
import { readPost } from '../server/core/threads/threads.ts';
import { postParts } from './present/posts.ts';
import { optionalReader } from './http/auth.ts';
import { bodyHash, frontMatter, iso, type View } from './markdownViews.ts';
import { hubBrief } from './frontViews.ts';
import { publicMarkdown } from './publicReading.ts';
import { matchRoute, SITE_PAGES } from '../schema/pages.ts';
import { isIndexable } from '../server/core/places/publicPages.ts';

export const NOT_FOUND_BODY = '# Not found\n';

/** `?format=md`, a `.md` suffix, or `Accept: text/markdown` asks for Markdown; anything else is the web app. */
export function wantsMarkdown(ctx: Context): boolean {
  return ctx.query.format === 'md' || ctx.path.endsWith('.md') || ctx.get('accept').includes('text/markdown');
}

const stripMd = (segment: string) => (segment.endsWith('.md') ? segment.slice(0, -3) : segment);





/**
 * Cache headers by reader and the ETag, set only once the access check has passed (`Vary` and the
 * CORS header are set before, for every answer of a view).
 */
function cacheHeaders(ctx: Context, reader: Actor | null, credentialSent: boolean, etag: string) {
  ctx.set('Cache-Control', reader ? 'private, no-store' : 'public, max-age=15');
  if (!reader && !credentialSent) ctx.set('CDN-Cache-Control', 'public, s-maxage=15, stale-while-revalidate=60');
  ctx.set('ETag', etag);
}

/**
 * `304` when the reader has this ETag: for threads and pads it comes from the version, so this is
 * decided before any content is loaded.
 */
function notModified(ctx: Context, reader: Actor | null, credentialSent: boolean, etag: string): boolean {
  cacheHeaders(ctx, reader, credentialSent, etag);
  const wanted = ctx.get('if-none-match').split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (!wanted.includes(etag.replace(/^W\//, ''))) return false;
  ctx.status = 304;
  return true;
}

function send(ctx: Context, body: string | Buffer) {
  ctx.type = 'text/markdown; charset=utf-8';
  ctx.body = body;
}

/** Views whose ETag is a hash of the body: the body is made first. */
export function answer(ctx: Context, reader: Actor | null, credentialSent: boolean, etag: string, body: string) {
  if (!notModified(ctx, reader, credentialSent, etag)) send(ctx, body);
}



type MarkdownRender = (ctx: Context, reader: { actor: Actor | null; credentialSent: boolean }) => Promise<void>;

/** Runs a view for Markdown requests; private and missing both end in the same `404`. */
export const markdownView = (core: Core, render: MarkdownRender) =>
  async (ctx: Context, next: Next) => {
    if (!wantsMarkdown(ctx)) return next();
    ctx.set('Vary', 'Accept, Cookie, Authorization');
    ctx.set('Access-Control-Allow-Origin', '*');
    const reader = await optionalReader(ctx, core);
    try {
      await render(ctx, reader);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'not_found') throw error;
      ctx.status = 404;
      ctx.type = 'text/markdown; charset=utf-8';
      ctx.body = NOT_FOUND_BODY;
    }
  };

export function markdownRoutes(core: Core): Router {
  const router = new Router();
  // Each view reads core.config.baseUrl per request: with PORT=0 it is only known once the server listens.

  const view = (render: MarkdownRender) => markdownView(core, render);

  // The pages anyone may read, by the app's own routes; each marks itself indexable where it is (SPEC part 4).
  const pagePaths = ['/', '/explore', '/explore.md', ...SITE_PAGES.flatMap((page) => [`/${page}`, `/${page}.md`]), '/h/:slug', '/t/:id', '/p/:id'];
  router.get(pagePaths, view(async (ctx, { actor, credentialSent }) => {
    // Explore with a Bearer key is not personalised (SPEC part 4); a session cookie is.
    const reader = ctx.path.startsWith('/explore') && ctx.get('authorization') ? null : actor;
    const page = await publicMarkdown(core, reader, matchRoute(stripMd(ctx.path)), ctx.query);
    if (!page) throw notFound('No such page.');
    await serve(ctx, actor, credentialSent, page.view);
    ctx.state.indexable = page.indexable;
  }));

  router.get('/h/:slug/llms.txt', async (ctx) => {
    ctx.set('Vary', 'Accept, Cookie, Authorization');
    ctx.set('Access-Control-Allow-Origin', '*');
    const { actor, credentialSent } = await optionalReader(ctx, core);
    const slug = ctx.params.slug!;
    let body: string;
    try {
      body = await hubBrief(core, actor, slug);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'not_found') throw error;
      ctx.status = 404;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = NOT_FOUND_BODY;
      return;
    }
    if (notModified(ctx, actor, credentialSent, `W/"${bodyHash(body)}"`)) return;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = body;
    ctx.state.indexable = await isIndexable(core, 'hub', slug);
  });
  router.get('/t/:id/m/:msg', view(async (ctx, { actor, credentialSent }) => {
    const base = core.config.baseUrl;
    const { thread, post } = await readPost(core, actor, ctx.params.id!, stripMd(ctx.params.msg!));
    const body = [
      frontMatter({ id: post.id, type: 'post', thread: thread.id, seq: post.seq, created: iso(post.created_at) }),
      `# Post ${post.seq} of ${inline(thread.title)}`,
      '',
      PREAMBLE,
      renderBody(postParts(post, { marks: false })),
      '',
      `Thread: ${base}/t/${thread.id}.md`,
      '',
    ].join('\n');
    answer(ctx, actor, credentialSent, `W/"${bodyHash(body)}"`, body);
  }));
  return router;
}

/** `304` when the reader has the view's ETag; otherwise the text, with the ETag of the version it shows. */
async function serve(ctx: Context, actor: Actor | null, credentialSent: boolean, view: View) {
  if (notModified(ctx, actor, credentialSent, view.etag)) return;
  const { body, etag } = await view.text();
  if (etag) cacheHeaders(ctx, actor, credentialSent, etag);
  send(ctx, body);
}
