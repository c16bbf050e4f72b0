import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Config } from '../../server/config.ts';
import { AppError, toAppError } from '../../schema/errors.ts';
import type { Logger } from '../../server/db/logger.ts';

/** A request id, one log line per request, and the one place errors become responses. */
/**
 * Aborts when the caller goes away before its answer is sent (the connection closed), so a long-poll
 * stops holding one of the caller's waits for a browser tab that is gone.
 */
export function requestGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function requestScope(log: Logger) {
  return async (ctx: Context, next: Next) => {
    const requestId = randomUUID();
    const started = performance.now();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } catch (error) {
      const appError = toAppError(error);
      if (appError.code === 'internal') log.error('request failed', { requestId, error });
      ctx.status = appError.status;
      ctx.body = appError.toBody();
      if (appError.details.retry_after_seconds !== undefined) ctx.set('Retry-After', String(appError.details.retry_after_seconds));
    } finally {
      // The path only: queries may carry cursors, and headers may carry credentials; neither is logged.
      log.info('request', {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.res.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
    }
  };
}

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** SPEC part 4 "Headers on every response"; routes may set their own Cache-Control after this. */
export function securityHeaders(canonicalHost: () => string) {
  return async (ctx: Context, next: Next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Robots-Tag', 'noindex, nofollow');
    if (ctx.path !== '/mcp' && !ctx.path.startsWith('/mcp/')) {
      ctx.set('X-Frame-Options', 'DENY');
      ctx.set('Content-Security-Policy', CSP);
    }
    await next();
    // What a route marks indexable (SPEC part 4 "Indexable pages") may be indexed, on the canonical host only.
    if (ctx.state.indexable === true && ctx.status === 200 && ctx.host.toLowerCase() === canonicalHost()) ctx.remove('X-Robots-Tag');
  };
}

/**
 * Only the hosts this server serves: the host of SVC_BASE_URL, and in development `localhost` and
 * `127.0.0.1` on the listening port. Anything else is refused before any route runs.
 */
export function hostCheck(hosts: () => Set<string>) {
  return async (ctx: Context, next: Next) => {
    const host = (ctx.get('host') || '').toLowerCase();
    if (!hosts().has(host)) {
      throw new AppError('forbidden', 'This server does not serve that host.', { error: 'forbidden_host' });
    }
    await next();
  };
}

/**
 * `servedHosts` for every request and connection, worked out again only when the base URL or the
 * port changes (both settle when the server starts listening).
 */
export function servedHostsOf(config: Config, listeningPort: () => number): () => Set<string> {
  let key = '';
  let hosts = new Set<string>();
  return () => {
    const port = listeningPort();
    if (key !== `${config.baseUrl} ${port}`) {
      key = `${config.baseUrl} ${port}`;
      hosts = servedHosts(config, port);
    }
    return hosts;
  };
}

export function servedHosts(config: Config, port: number): Set<string> {
  const hosts = new Set([new URL(config.baseUrl).host.toLowerCase()]);
  if (!config.production) {
    hosts.add(`localhost:${port}`);
    hosts.add(`127.0.0.1:${port}`);
  }
  return hosts;
}

/** CORS for routes any origin may call (REST for agents, MCP, discovery, Markdown). */
export function openCors(options: { methods: string; allowHeaders: string; exposeHeaders: string }) {
  return async (ctx: Context, next: Next) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', options.exposeHeaders);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', options.methods);
      ctx.set('Access-Control-Allow-Headers', ctx.get('access-control-request-headers') || options.allowHeaders);
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
