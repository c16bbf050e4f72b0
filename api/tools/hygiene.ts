import { AppError } from '../../schema/errors.ts';

/** A NUL, or half of a surrogate pair without its other half: no text store takes either. */
const UNFIT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Input hygiene for every string a caller sends, keys included, at any depth: refused as `invalid`
 * naming the field, before any tool sees it. One walk over the parsed arguments, so a new tool or a
 * new field cannot forget it.
 */
export function requireCleanText(value: unknown, what = 'argument'): void {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      if (UNFIT.test(item)) throw unfit(path, what, item);
    } else if (Array.isArray(item)) {
      item.forEach((child, index) => stack.push([child, path ? `${path}.${index}` : String(index)]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        const at = path ? `${path}.${key}` : key;
        if (UNFIT.test(key)) throw unfit(at, what, key);
        stack.push([child, at]);
      }
    }
  }
}

function unfit(path: string, what: string, text: string): AppError {
  const problem = text.includes('\u0000') ? 'a NUL character (\\u0000)' : 'half of a UTF-16 surrogate pair';
  const field = path || what;
  return new AppError('invalid', `Input validation error: ${field} holds ${problem}; send text without it.`, {
    issues: [{ path, message: `Holds ${problem}.` }],
  });
}
