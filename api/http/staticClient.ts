import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type { Context, Next } from 'koa';
import type { AppPage } from '../publicReading.ts';
import { escapeHtml } from './escapeHtml.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

/** Routes that belong to the server, never to the web app's page fallback. */
const SERVER_PREFIXES = ['/api/', '/mcp', '/.well-known/', '/oauth/', '/internal/', '/healthz', '/openapi.json'];

/**
 * The app's page with what the server knows of it: for a signed-out reader of a public page its title,
 * description, canonical address and text, in the mount element the app then takes over.
 */
function withContent(index: string, content: NonNullable<AppPage['content']>): string {
  const head = [
    `<title>${escapeHtml(content.title)} · Dotpad</title>`,
    `<meta name="description" content="${escapeHtml(content.description)}">`,
    `<link rel="canonical" href="${escapeHtml(content.canonical)}">`,
  ].join('\n    ');
  return index.replace('<title>Dotpad</title>', () => head).replace('<div id="app"></div>', () => `<div id="app"><div id="server-page">${content.html}</div></div>`);
}

/**
 * Serves the built web app. Files are indexed once at start, so only files that exist in the build
 * are ever read (no path from a request reaches the file system). Other GETs that want HTML get
 * index.html, and the app's own router shows the page: `404` with it when the path is no page of the
 * app, or one that shows nothing there, so a mistyped address is never a soft 404. `page` says which,
 * whether the page may be indexed, and gives a public page's text to put in it.
 */
export function staticClient(distDir: string, page: (ctx: Context) => Promise<AppPage>) {
  const files = new Map<string, { body: Buffer; type: string }>();
  if (existsSync(join(distDir, 'index.html'))) {
    for (const path of listFiles(distDir)) {
      const url = '/' + relative(distDir, path).split('\\').join('/');
      files.set(url, { body: readFileSync(path), type: TYPES[extname(path)] ?? 'application/octet-stream' });
    }
  }
  const index = files.get('/index.html');
  const indexText = index?.body.toString('utf8');
  return async (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const file = files.get(ctx.path);
    if (file && ctx.path !== '/index.html') {
      ctx.set('Cache-Control', ctx.path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
      ctx.type = file.type;
      ctx.body = file.body;
      return;
    }
    if (SERVER_PREFIXES.some((prefix) => ctx.path.startsWith(prefix)) || !ctx.accepts('html')) return next();
    const shown = await page(ctx);
    if (!index || !indexText) {
      if (shown.status === 404) {
        ctx.status = 404;
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = '<!doctype html><title>Not found</title><p>No such page.</p>';
        return;
      }
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.body = 'The web app is not built: run `npm run build` (npm start builds it when missing).';
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    // The page differs by who reads it: signed out it carries the text.
    ctx.set('Vary', 'Cookie');
    ctx.status = shown.status;
    ctx.state.indexable = shown.indexable;
    ctx.type = index.type;
    ctx.body = shown.content ? withContent(indexText, shown.content) : index.body;
  };
}
