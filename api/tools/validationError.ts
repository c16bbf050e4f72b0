import type { z } from 'zod';
import { AppError, overMaximum } from '../../schema/errors.ts';
import type { Tool } from './defineTool.ts';
import { sizes } from '../../schema/tools/fields.ts';

const squash = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Whether `given` looks like a misspelling or near-name of `expected` (thread vs thread_id, hubid vs hub). */
function resembles(given: string, expected: string): boolean {
  const a = squash(given);
  const b = squash(expected);
  if (!a || !b) return false;
  if (a === b || a.startsWith(b) || b.startsWith(a)) return true;
  return editDistance(a, b) <= 2;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * `invalid` with `issues: [{path, message}]`, or `too_large` when each issue is a size over its maximum;
 * a wrongly named field is named beside the one the tool takes.
 */
export function validationError(tool: Tool, error: z.ZodError, ignored: string[]): AppError {
  const issues = error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = String(issue.path[0] ?? '');
    const lookalike = issue.code === 'invalid_type' && issue.input === undefined ? ignored.find((key) => resembles(key, field)) : undefined;
    const message = lookalike
      ? `Required. You sent "${lookalike}", which ${tool.name} does not take; it takes "${field}".`
      : issue.input === undefined && issue.code === 'invalid_type'
        ? 'Required.'
        : issue.message;
    return { path, message };
  });
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join(' ');
  // Over a size of SPEC part 8 is `too_large`: a text or a list, or a number the tool marks as a size.
  const sized = (issue: z.core.$ZodIssue) => overMaximum(issue) || (issue.code === 'too_big' && issue.path.length === 1 && sizes.has(fieldOf(tool, String(issue.path[0]))));
  return new AppError(error.issues.every(sized) ? 'too_large' : 'invalid', `Input validation error: ${summary}`, { issues });
}

/** The schema of a top-level field, under its optional and default wrappers. */
function fieldOf(tool: Tool, name: string): z.core.$ZodType {
  let field = (tool.input.shape as Record<string, z.core.$ZodType>)[name]!;
  while (field && 'innerType' in field._zod.def) field = field._zod.def.innerType as z.core.$ZodType;
  return field;
}
