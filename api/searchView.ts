import Router from '@koa/router';
import type { Context } from 'koa';
import type { Core } from '../server/core/context.ts';
import { AppError } from '../server/core/errors.ts';
import { inline, PREAMBLE, renderBody } from '../server/core/framing.ts';
import { said } from '../server/core/result.ts';
import { search } from '../server/core/search.ts';
import { takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { answer, bodyHash, markdownView } from './markdown.ts';
import { emptyNote, hitLink, hitState } from './present/search.ts';

const TYPE_NAMES = { hub: 'Hub', pad: 'Pad', thread: 'Thread', post: 'Post' } as const;

/**
 * `GET /search?q=` as Markdown (SPEC part 4 "Markdown views"): the best match quoted, then one table
 * row per result, and a `More:` link with the cursor. A session cookie personalises; a Bearer key is
 * checked (a bad one is refused) but searches as signed out, as the spec has it. 120 a minute per network.
 */
export function searchRoutes(core: Core, limits: IpLimits): Router {
  const router = new Router();
  router.get(['/search', '/search.md'], markdownView(core, async (ctx: Context, { actor, credentialSent }) => {
    const base = core.config.baseUrl;
    const reader = ctx.get('authorization') ? null : actor;
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    let page;
    try {
      await takeIpLimit(limits, 'search', ctx);
      page = await search(core, core.db.pool, reader, { q, cursor });
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== 'invalid' && error.code !== 'rate_limited')) throw error;
      ctx.status = error.status;
      if (error.code === 'rate_limited') ctx.set('Retry-After', String(error.details.retry_after_seconds));
      ctx.type = 'text/markdown; charset=utf-8';
      ctx.body = `# Search\n\n${error.message}\n`;
      return;
    }
    const lines = [`# Search: ${inline(page.query.q) || '(everything you can read)'}`, '', PREAMBLE, ''];
    const best = page.hits[0];
    if (!best) lines.push(emptyNote(page), '');
    else {
      lines.push(`Best match: ${TYPE_NAMES[best.type].toLowerCase()} [${inline(best.title)}](${hitLink(base, best)}.md) in ${inline(best.hub_name)}`, '');
      lines.push(renderBody([said(best.snippet ?? best.title)]), '');
      lines.push('| Type | Title | Where | State | Link |', '|---|---|---|---|---|');
      for (const hit of page.hits) {
        lines.push(`| ${TYPE_NAMES[hit.type]} | ${inline(hit.title)} | ${inline(hit.hub_name)} | ${hitState(hit)} | ${hitLink(base, hit)}.md |`);
      }
      lines.push('');
    }
    if (page.nextCursor) lines.push(`More: ${base}/search.md?${new URLSearchParams({ q: page.query.q, cursor: page.nextCursor })}`, '');
    const body = lines.join('\n');
    answer(ctx, reader, credentialSent, `W/"${bodyHash(body)}"`, body);
  }));
  return router;
}
