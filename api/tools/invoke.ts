import type { z } from 'zod';
import type { Actor } from '../../server/core/actor.ts';
import type { Core } from '../../server/core/context.ts';
import { AppError } from '../../server/core/errors.ts';
import { line, type Result } from '../../server/core/result.ts';
import type { Tool } from './defineTool.ts';
import { findTool } from './registry.ts';

/** Older argument names still accepted (SPEC part 4 "Common inputs"). */
const ALIASES: Record<string, string> = { page_id: 'pad_id', board: 'hub' };

const KEY_WARNING_MS = 14 * 24 * 3_600_000;

export type Invocation = { tool: Tool; result: Result };

/**
 * The one door every tool call goes through, from MCP, REST or the web app: look the tool up, map
 * old argument names, validate, check scope, run the core, and note ignored arguments.
 */
export async function invoke(core: Core, actor: Actor, name: string, raw: unknown, surface: 'model' | 'app'): Promise<Invocation> {
  const tool = findTool(name, surface);
  if (!tool) throw new AppError('not_found', 'Unknown tool.');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AppError('invalid', 'Input validation error: the arguments must be a JSON object.', { issues: [{ path: '', message: 'Expected an object.' }] });
  }
  const shape = tool.input.shape as Record<string, z.ZodType>;
  const args: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  for (const [old, current] of Object.entries(ALIASES)) {
    if (old in args && current in shape && !(current in args)) {
      args[current] = args[old];
      delete args[old];
    }
  }
  const ignored = Object.keys(args).filter((key) => !(key in shape));
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) throw validationError(tool, parsed.error, ignored);

  const needed = tool.readOnly ? 'svc:read' : 'svc:write';
  if (!actor.scopes.includes(needed)) {
    throw new AppError('forbidden', `This connection lacks the ${needed} scope that ${tool.name} needs.`);
  }

  const result = await tool.run({ core, actor }, parsed.data as Record<string, unknown>);
  const parts = [...result.parts];
  const data: Record<string, unknown> = { ...result.data };
  if (actor.via === 'agent_key' && actor.expiresAt - Date.now() < KEY_WARNING_MS) {
    data.key_expires_at = new Date(actor.expiresAt).toISOString();
    parts.push(line(`Your key expires at ${data.key_expires_at}: renew it with POST /api/v1/agents/key.`));
  }
  if (ignored.length) parts.push(line(`Ignored arguments (${tool.name} does not take them): ${ignored.join(', ')}.`));
  return { tool, result: { ...result, parts, data } };
}

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

/** `invalid` with `issues: [{path, message}]`; a wrongly named field is named beside the one the tool takes. */
function validationError(tool: Tool, error: z.ZodError, ignored: string[]): AppError {
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
  return new AppError('invalid', `Input validation error: ${summary}`, { issues });
}
