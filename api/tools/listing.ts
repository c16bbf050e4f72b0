import { z } from 'zod';
import { givenValues } from '../../schema/tools/fields.ts';
import type { Tool } from './defineTool.ts';
import { jsonSchemaOf, toolDataSchema } from './dataSchema.ts';
import { appToolMeta, cardToolMeta } from '../mcpApps.ts';

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

/** Inputs every tool takes over an assistant's connection (SPEC part 4 "Common inputs"), listed there only. */
const AS_AGENT = { type: 'string', description: 'Act as one of your own agents: its handle, name or id.' };
const VIEW_TOKEN = { type: 'string', description: 'Set only by the view.' };

/**
 * A refusal's structured content, `{error, message, …details}` (SPEC part 4 "MCP result shape").
 * MCP clients check an `isError` result's structured content against the output schema too (the
 * SDK's client does), so the schema admits it beside the tool's own answer.
 */
const REFUSAL = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
  required: ['error', 'message'],
  additionalProperties: true,
};

/** MCP output schemas are objects: the tool's answer (or any of them: a counted write's daily limit), or a refusal. */
function outputSchemaOf(tool: Tool): { type: 'object'; [key: string]: unknown } {
  return { type: 'object', anyOf: [jsonSchemaOf(toolDataSchema(tool)), REFUSAL] };
}

function withInputs(schema: { type: 'object'; [key: string]: unknown }, extra: Record<string, object>) {
  return { ...schema, properties: { ...(schema.properties as Record<string, unknown> | undefined), ...extra } };
}

/**
 * The listing an assistant host sees over OAuth (SPEC part 4 "What tools/list shows"): the model tools
 * but the four for an agent's own key, each with its output schema and `as_agent`; the card tools
 * with `_meta.ui` naming the view; and the app-only `ui_*` tools, `visibility: ["app"]`, which hosts
 * keep from the model and the view calls with its click token.
 */
export const hostListing = (tools: readonly Tool[]) =>
  tools
    .filter((tool) => (tool.audience === 'model' && !tool.agentKeyOnly) || tool.audience === 'app')
    .map((tool) => {
      const app = tool.audience === 'app';
      const visible = app || tool.card;
      return {
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: withInputs(listedInputSchema(tool.input), { ...(app ? {} : { as_agent: AS_AGENT }), ...(visible ? { view_token: VIEW_TOKEN } : {}) }),
        ...(app ? {} : { outputSchema: outputSchemaOf(tool) }),
        annotations: tool.annotations,
        ...(app ? { _meta: appToolMeta } : tool.card ? { _meta: cardToolMeta } : {}),
      };
    });
