import { z } from 'zod';
import { CallerData, LimitReachedData } from '../../schema/tools/callerData.ts';
import { toolContracts } from '../../schema/tools/contract.ts';
import type { Tool } from './defineTool.ts';

const declaredData = toolContracts as Record<string, { data?: z.ZodType }>;

/** A tool's own data with what every reply may say of its caller (its allowance, its key's end, its link). */
function withCallerData(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodUnion) return z.union((schema.options as z.ZodType[]).map(withCallerData));
  if (!(schema instanceof z.ZodObject)) return schema;
  // A field the tool answers itself (rotate_key's key_expires_at, link's linked_to) keeps its own schema.
  return schema.extend(Object.fromEntries(Object.entries(CallerData).filter(([field]) => !(field in schema.shape))));
}

/**
 * A tool's structured content (`data` over REST, `structuredContent` over MCP), from the schema its
 * contract declares (schema/tools/contract.ts): a counted write may answer the daily limit instead.
 * Every model tool declares one (test/unit/contract.test.ts); one that did not would read as any object.
 */
export function toolDataSchema(tool: Tool): z.ZodType {
  const answered = withCallerData(declaredData[tool.name]?.data ?? z.looseObject({}));
  return tool.limits.includes('write') ? z.union([answered, LimitReachedData]) : answered;
}

export function jsonSchemaOf(schema: z.ZodType): object {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'output' });
  return json;
}
