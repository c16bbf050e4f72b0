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
  if (a === b) return true;
  // Two letters resemble too much to tell anything.
  if (Math.min(a.length, b.length) < 3) return false;
  if (a.startsWith(b) || b.startsWith(a)) return true;
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
 * Names callers use for one another's fields (`text` for post_reply's `body`, `to` for start_dm's
 * `with`): a missing field is told apart from a sent one of these, as from a misspelling.
 */
const SYNONYMS: readonly (readonly string[])[] = [
  ['body', 'text', 'content', 'message', 'markdown'],
  ['with', 'to', 'recipient', 'user', 'participant', 'who'],
  ['title', 'name', 'subject'],
  ['q', 'query', 'search', 'text'],
  ['reaction', 'emoji'],
  ['assignee', 'assign_to', 'owner'],
  ['action', 'op', 'operation'],
  ['reason', 'why'],
];

const synonyms = (given: string, expected: string) => SYNONYMS.some((group) => group.includes(given.toLowerCase()) && group.includes(expected));

/** The field of the tool a key it does not take stands for, when one can be told (`text` for `body`), or undefined. */
export function meantField(tool: Tool, key: string, sent: Record<string, unknown>): string | undefined {
  const fields = Object.keys(tool.input.shape).filter((field) => !Object.hasOwn(sent, field));
  return fields.find((field) => synonyms(key, field)) ?? fields.find((field) => resembles(key, field));
}

/** What was sent at an issue's path, or undefined when nothing was. */
function sentAt(args: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let value: unknown = args;
  for (const step of path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[step] : undefined;
  return value;
}

const article = (expected: string) => (expected === 'int' ? 'an integer' : /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`);
const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : article(typeof value));

/**
 * `invalid` with `issues: [{path, message}]`, or `too_large` when each issue is a size over its maximum.
 * A missing field is "Required.", naming beside it a field sent under another name the tool does not
 * take; a field of the wrong type says which type it must be.
 */
export function validationError(tool: Tool, error: z.ZodError, args: Record<string, unknown>, ignored: string[]): AppError {
  const issues = error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    if (issue.code !== 'invalid_type') return { path, message: issue.message };
    const sent = sentAt(args, issue.path);
    if (sent !== undefined) return { path, message: `${path || 'The arguments'} must be ${article(issue.expected)}, not ${kindOf(sent)}.` };
    const field = String(issue.path[0] ?? '');
    const lookalike = issue.path.length === 1 ? ignored.find((key) => meantField(tool, key, args) === field) : undefined;
    return { path, message: lookalike ? `Required. You sent "${lookalike}", which ${tool.name} does not take; it takes "${field}".` : 'Required.' };
  });
  // A wrong type's message names its field already.
  const summary = issues.map((issue) => (issue.path && !issue.message.startsWith(`${issue.path} `) ? `${issue.path}: ${issue.message}` : issue.message)).join(' ');
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
