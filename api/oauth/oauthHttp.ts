import type { Context, Next } from 'koa';
import { toAppError } from '../../schema/errors.ts';
import { OAuthError } from '../../server/core/identity/oauthError.ts';
import { readText } from '../http/body.ts';

/** SPEC part 8 "Sizes": every body sent to `/oauth/*`. */
export const OAUTH_BODY_LIMIT = 20 * 1024;

/**
 * The OAuth endpoints' answers (SPEC part 7 "Shape"): OAuth's `{error, error_description}`, never
 * cached. The service's own refusals met on the way (a per-IP limit, a body too large) keep their
 * status and Retry-After, in the same shape.
 */
export async function oauthAnswers(ctx: Context, next: Next) {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  try {
    await next();
  } catch (error) {
    if (error instanceof OAuthError) {
      ctx.status = error.status;
      ctx.body = error.toResponseObject();
      return;
    }
    const appError = toAppError(error);
    if (appError.code === 'internal') throw error;
    const { retry_after_seconds: retry, retryAfterSeconds: _older, ...details } = appError.details;
    if (retry !== undefined) ctx.set('Retry-After', String(retry));
    ctx.status = appError.status;
    const code = appError.code === 'too_large' || appError.code === 'invalid' ? 'invalid_request' : appError.code;
    ctx.body = { error: code, error_description: appError.message, ...details, ...(retry !== undefined ? { retry_after_seconds: retry } : {}) };
  }
}

export type Params = Record<string, string>;

/**
 * Request parameters, each at most once (RFC 6749 section 3.1): a repeated one is `invalid_request`.
 * From a query, or a body that is a form or (for `/oauth/token`) a JSON object of strings.
 */
export function singleParams(entries: Iterable<[string, string]>): Params {
  const params: Params = {};
  for (const [key, value] of entries) {
    if (Object.hasOwn(params, key)) throw new OAuthError('invalid_request', `The parameter ${key} is sent more than once.`);
    params[key] = value;
  }
  return params;
}

export async function readParams(ctx: Context, options: { json: boolean }): Promise<Params> {
  const text = await readText(ctx, OAUTH_BODY_LIMIT);
  if (options.json && ctx.is('application/json', '+json')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new OAuthError('invalid_request', 'The body is not JSON.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OAuthError('invalid_request', 'The body must be a JSON object.');
    const entries = Object.entries(value as Record<string, unknown>);
    const bad = entries.find(([, v]) => typeof v !== 'string');
    if (bad) throw new OAuthError('invalid_request', `The parameter ${bad[0]} must be a string.`);
    return singleParams(entries as [string, string][]);
  }
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', `Send the parameters as application/x-www-form-urlencoded${options.json ? ' or a JSON object' : ''}.`);
  }
  return singleParams(new URLSearchParams(text));
}

/** The query of a GET, each parameter once. */
export const queryParams = (ctx: Context): Params => singleParams(new URLSearchParams(ctx.querystring));
