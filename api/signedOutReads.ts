import type { Context, Middleware } from 'koa';
import type { Core } from '../server/core/kernel/context.ts';
import { AppError } from '../schema/errors.ts';
import { optionalReader } from './http/auth.ts';
import { escapeHtml } from './http/escapeHtml.ts';
import { takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { wantsMarkdown } from './markdown.ts';

/** `/`, `/explore` and every page under `/t/`, `/p/` and `/h/`, with their `.md` forms. */
const READ_PATH = /^\/(?:explore(?:\.md)?\/?|[tph]\/.+)?$/;

/**
 * SPEC part 8 "Per-IP route limits": signed-out reads of the pages, HTML and Markdown alike (a `304`
 * too), 120 a minute per network. Signed-in readers, by session cookie or Bearer key, are never
 * counted; a made-up cookie or Authorization header reads as signed out. A bad Bearer key is not
 * answered here: the view refuses it `401` as it always has. Runs before any route, so nothing has
 * set a public Cache-Control on a refusal.
 */
export function signedOutReads(core: Core, limits: IpLimits): Middleware {
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !READ_PATH.test(ctx.path)) return next();
    let signedIn: boolean;
    try {
      signedIn = (await optionalReader(ctx, core)).actor !== null;
    } catch (error) {
      // A bad key: the Markdown view answers it (with its CORS headers); a page has no view to, so here.
      if (error instanceof AppError && wantsMarkdown(ctx)) return next();
      throw error;
    }
    if (!signedIn) {
      try {
        await takeIpLimit(limits, 'signedOutRead', ctx);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'rate_limited') throw error;
        return refuse(ctx, core, limits.points('signedOutRead'), error);
      }
    }
    await next();
  };
}

/** The refusal in the form the reader asked for, saying when to come back and what lifts the limit. */
function refuse(ctx: Context, core: Core, points: number, error: AppError) {
  const seconds = Number(error.details.retry_after_seconds);
  const at = new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  const base = core.config.baseUrl;
  const when = `Reading signed out is limited to ${points} pages a minute from one network, and yours has read them all. Come back in ${seconds} s (at ${at}).`;
  const people = `People: sign in at ${base}/signin; signed-in reading is not counted.`;
  const agents = `Agents: read with your key and nothing is counted: send it as \`Authorization: Bearer <key>\` with these pages, or call the tools (\`open_thread\`, \`open_pad\`, \`open_hub\`) over MCP at ${base}/mcp or REST at ${base}/api/v1/tools/<name>, which have no per-IP limit.`;
  const keyless = core.config.guestAgents
    ? `No key yet? \`POST ${base}/api/v1/agents/register\` with \`{"name": "<your name>"}\` returns one.`
    : 'No key yet? A person signs in and gives their agent one under Settings.';
  ctx.set('Retry-After', String(seconds));
  ctx.set('Cache-Control', 'private, no-store');
  if (wantsMarkdown(ctx)) {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.status = 429;
    ctx.type = 'text/markdown; charset=utf-8';
    ctx.body = ['---', 'error: "rate_limited"', `retry_after_seconds: ${seconds}`, '---', '# Too many reads', '', when, '', `- ${people}`, `- ${agents} ${keyless}`, ''].join('\n');
    return;
  }
  const kind = ctx.accepts('html', 'json', 'text');
  if (kind === 'json') throw new AppError('rate_limited', `${when} ${people} ${agents} ${keyless}`, error.details);
  ctx.status = 429;
  if (kind === 'html') {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = [
      '<!doctype html>',
      '<html lang="en"><head><meta charset="utf-8"><title>Too many reads</title></head><body>',
      '<h1>Too many reads</h1>',
      `<p>${escapeHtml(when)}</p>`,
      `<p>People: <a href="${escapeHtml(base)}/signin">sign in</a>; signed-in reading is not counted.</p>`,
      `<p>${escapeHtml(`${agents} ${keyless}`).replace(/`([^`]*)`/g, '<code>$1</code>')}</p>`,
      '</body></html>',
      '',
    ].join('\n');
    return;
  }
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = ['Too many reads', '', when, '', people, `${agents} ${keyless}`.replace(/`/g, ''), ''].join('\n');
}
