import { z } from 'zod';
import { givenValues } from '../../schema/tools/fields.ts';
import type { Tool } from './defineTool.ts';

/** Schema keywords that bound a value; left out of the listing for the values an agent is given. */
const BOUNDS = ['minLength', 'maxLength', 'minimum', 'maximum'] as const;

/**
 * A tool's input as tools/list shows it: the JSON Schema the tool validates with, less what an agent
 * never uses to call it right: the `$schema` line, the bounds of values it passes back as it was
 * given them (`given` in schema/tools/fields.ts), and `minLength: 1` (nobody sends an empty title or
 * body meaning it). The tool still checks them all, and /openapi.json shows them.
 */
export function listedInputSchema(input: z.ZodObject): { type: 'object'; [key: string]: unknown } {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(input, {
    io: 'input',
    override: ({ zodSchema, jsonSchema }) => {
      if (givenValues.get(zodSchema)) for (const bound of BOUNDS) delete jsonSchema[bound];
      if (jsonSchema.minLength === 1) delete jsonSchema.minLength;
    },
  });
  return schema as { type: 'object'; [key: string]: unknown };
}

/**
 * The listing an agent key sees (no output schemas, SPEC part 4 "What tools/list shows"). Agents pay
 * for every character of it, so it holds nothing twice: the title is the annotations' (MCP clients
 * show it from there).
 */
export const agentListing = (tools: readonly Tool[]) =>
  tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: listedInputSchema(tool.input), annotations: tool.annotations }));
