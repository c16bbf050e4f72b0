import Router from '@koa/router';
import type { Context } from 'koa';
import type { Actor } from '../server/core/kernel/actor.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError } from '../schema/errors.ts';
import { inline, PREAMBLE, renderBody } from '../server/core/kernel/framing.ts';
import { said } from '../server/core/kernel/result.ts';
import { search, type SearchPage, type SearchType } from '../server/core/search/search.ts';
import { browseLane, LANES, parseLane, type LanePage } from '../server/core/search/searchLanes.ts';
import { takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { answer, markdownView } from './markdown.ts';
import { bodyHash } from './markdownViews.ts';
import { emptyNote, hitLink, hitState, hitWhere } from './present/search.ts';

const TYPE_NAMES: Record<SearchType, string> = { hub: 'Hub', pad: 'Pad', section: 'Section', thread: 'Thread', task: 'Task', post: 'Post' };
const TABLE = ['| Type | Title | Where | State | Link |', '|---|---|---|---|---|'];
const query = (ctx: Context, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : undefined);

/**
 * `GET /search?q=` as Markdown (SPEC part 4 "Markdown views"): the best match quoted, then one table
 * row per result, and a `More:` link with the cursor; `lane=` browses one lane instead. A session
 * cookie personalises; a Bearer key is checked (a bad one is refused) but searches as signed out, as
 * the spec has it. 120 a minute per network.
 */
export function searchRoutes(core: Core, limits: IpLimits): Router {
  const router = new Router();
  router.get(['/search', '/search.md'], markdownView(core, async (ctx: Context, { actor, credentialSent }) => {
    const reader = ctx.get('authorization') ? null : actor;
    const lane = query(ctx, 'lane');
    const cursor = query(ctx, 'cursor');
    let body: string;
    try {
      await takeIpLimit(limits, 'search', ctx);
      body = lane === undefined
        ? searchMarkdown(core.config.baseUrl, await search(core, core.db.pool, reader, { q: query(ctx, 'q') ?? '', cursor }))
        : laneMarkdown(core.config.baseUrl, await browseLane(core, core.db.pool, reader, parseLane(lane), cursor), reader);
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== 'invalid' && error.code !== 'rate_limited')) throw error;
      ctx.status = error.status;
      if (error.code === 'rate_limited') ctx.set('Retry-After', String(error.details.retry_after_seconds));
      ctx.type = 'text/markdown; charset=utf-8';
      ctx.body = `# Search\n\n${error.message}\n`;
      return;
    }
    answer(ctx, reader, credentialSent, `W/"${bodyHash(body)}"`, body);
  }));
  return router;
}

const lanesLine = (base: string) => `Browse: ${LANES.map((lane) => `[${lane}](${base}/search.md?lane=${lane})`).join(' · ')} (guests: threads a new ID can post in).`;

function searchMarkdown(base: string, page: SearchPage): string {
  const lines = [`# Search: ${inline(page.query.q) || '(everything you can read)'}`, '', PREAMBLE, ''];
  const best = page.hits[0];
  if (!best) lines.push(emptyNote(page), '');
  else {
    lines.push(`Best match: ${TYPE_NAMES[best.type].toLowerCase()} [${inline(best.title)}](${hitLink(base, best, true)}) in ${hitWhere(best)}`, '');
    lines.push(renderBody([said(best.snippet ?? best.title)]), '');
    lines.push(...TABLE);
    for (const hit of page.hits) lines.push(`| ${TYPE_NAMES[hit.type]} | ${inline(hit.title)} | ${hitWhere(hit)} | ${hitState(hit)} | ${hitLink(base, hit, true)} |`);
    lines.push('');
  }
  if (page.nextCursor) lines.push(`More: ${base}/search.md?${new URLSearchParams({ q: page.query.q, cursor: page.nextCursor })}`, '');
  if (!page.query.q.trim()) lines.push(lanesLine(base), '');
  return lines.join('\n');
}

const LANE_TITLES = { pads: 'pads and their sections', open: 'open threads', new: 'newest threads', guests: 'threads a new ID can post in' } as const;

/** One lane as the search table: pads each followed by its section map (indented by level), or threads. */
function laneMarkdown(base: string, page: LanePage, reader: Actor | null): string {
  const lines = [`# Search: ${LANE_TITLES[page.lane]}`, '', PREAMBLE, '', ...TABLE];
  if (page.lane === 'pads') {
    for (const pad of page.pads) {
      const where = inline(pad.hub_name);
      lines.push(`| Pad | ${inline(pad.title)} | ${where} | version ${pad.version} | ${base}/p/${pad.id}.md |`);
      for (const section of pad.sections) {
        const indent = '  '.repeat(Math.max(0, section.level - 1));
        lines.push(`| Section | ${indent}${inline(section.title)} | ${inline(pad.title)} · ${where} | settled | ${base}/p/${pad.id}.md?section=${encodeURIComponent(section.id)} |`);
      }
      if (pad.hidden) lines.push(`| Section | (+${pad.hidden} deeper) | ${inline(pad.title)} · ${where} | | ${base}/p/${pad.id}.md?outline=1 |`);
    }
  } else {
    for (const thread of page.threads) {
      lines.push(`| Thread | ${inline(thread.title)} | ${inline(thread.hub_name)} | ${thread.status} · ${thread.posts} posts | ${base}/t/${thread.id}.md |`);
    }
  }
  const empty = page.lane === 'pads' ? !page.pads.length : !page.threads.length;
  if (empty) {
    lines.splice(lines.length - TABLE.length, TABLE.length);
    if (page.lane === 'guests' && !page.guestsOpen) lines.push('New IDs post nowhere on this server: it takes no guests.');
    else lines.push(`Nothing ${reader ? 'you can read ' : ''}is in this lane yet.`);
  }
  lines.push('');
  if (page.nextCursor) lines.push(`More: ${base}/search.md?${new URLSearchParams({ lane: page.lane, cursor: page.nextCursor })}`, '');
  lines.push(lanesLine(base), '');
  return lines.join('\n');
}
