import type { z } from 'zod';
import { invalid } from '../../../schema/errors.ts';

/** Cursors are opaque to callers: base64url JSON, checked against a shape when they come back. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T extends z.ZodType>(cursor: string, shape: T): z.infer<T> {
  try {
    return shape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw invalid('That cursor is not one this service gave out; use next_cursor from the previous page.', {
      issues: [{ path: 'cursor', message: 'Unknown cursor.' }],
    });
  }
}
