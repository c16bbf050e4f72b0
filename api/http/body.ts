import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { AppError } from '../../schema/errors.ts';

/** Size limits of request bodies (SPEC part 8 "Sizes"). */
export const BODY_LIMITS = {
  tools: 512 * 1024,
  mcp: 400_000,
  register: 8 * 1024,
  settings: 16 * 1024,
  small: 2 * 1024,
} as const;

/** The raw body as text, refused with `too_large` past `limit` bytes. */
export async function readText(ctx: Context, limit: number): Promise<string> {
  try {
    // Decoded here rather than by raw-body's iconv-lite decoder, which costs more per request; a
    // leading byte-order mark is dropped as that decoder does.
    const text = (await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined })).toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw new AppError('too_large', `The request body is over ${limit} bytes.`, { limit_bytes: limit });
    throw new AppError('invalid', 'The request body could not be read.');
  }
}

/**
 * A JSON object body. JSON and `text/plain` bodies that hold JSON are read alike; an empty body is `{}`.
 * Form bodies are read when `forms` is set (the sign-in form); any other body is not JSON, `invalid`
 * (SPEC part 7 "Body not JSON").
 */
export async function readJson(ctx: Context, limit: number, options: { forms?: boolean } = {}): Promise<Record<string, unknown>> {
  const form = options.forms === true && ctx.is('application/x-www-form-urlencoded') !== false;
  if (!form && ctx.get('content-type') && !ctx.is('application/json', 'text/plain', '+json')) {
    throw new AppError('invalid', `The request body is not JSON: send a JSON object as application/json (or as text/plain), not ${ctx.get('content-type').split(';')[0]}.`);
  }
  const text = await readText(ctx, limit);
  if (form) return Object.fromEntries(new URLSearchParams(text));
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('invalid', 'The request body is not JSON; send a JSON object of the arguments.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('invalid', 'The request body must be a JSON object of the arguments.');
  }
  return value as Record<string, unknown>;
}
