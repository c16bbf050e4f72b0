/**
 * The one error type of the service. Codes and statuses are those of SPEC part 7; every shell renders
 * an AppError the same way: REST as `{error, message, ...details}`, MCP as an `isError` tool result.
 */
export const errorStatus = {
  unauthenticated: 401,
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  locked: 423,
  rate_limited: 429,
  registration_not_open: 403,
  claim_required: 402,
  paused: 503,
  busy: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;
export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  /** The body every way in shows: `{error, message, ...details}`. */
  toBody(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details };
  }
}

export const notFound = (what = 'Not found.') => new AppError('not_found', what);
export const forbidden = (message: string, details?: ErrorDetails) => new AppError('forbidden', message, details);
export const invalid = (message: string, details?: ErrorDetails) => new AppError('invalid', message, details);

type InputIssue = { path: readonly PropertyKey[]; message: string; code?: string; origin?: string };

/** A text or a list over its maximum: a size (SPEC part 8 "Sizes"), answered `too_large` rather than `invalid`. */
export const overMaximum = (issue: InputIssue) => issue.code === 'too_big' && (issue.origin === 'string' || issue.origin === 'array');

/** `invalid` with `issues: [{path, message}]` from a failed zod parse; `too_large` (413) when every issue is a size over its maximum. */
export function invalidInput(error: { issues: readonly InputIssue[] }, message?: string): AppError {
  const issues = error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
  const code = error.issues.length > 0 && error.issues.every(overMaximum) ? 'too_large' : 'invalid';
  return new AppError(code, message ?? `Input validation error: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join(' ')}`, { issues });
}

/** Anything that is not an AppError is reported as `internal`, with nothing of its own text. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError('internal', 'Something went wrong on our side; nothing was changed.');
}
