import { z } from 'zod';
import type { Tool } from './tools/defineTool.ts';

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema; enum?: unknown[]; anyOf?: JsonSchema[]; description?: string };

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  if (schema.type === 'array') return `array of ${schema.items ? typeOf(schema.items) : 'any'}`;
  if (schema.type === 'object' && schema.properties) return `{${Object.keys(schema.properties).join(', ')}}`;
  return Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any');
}

/**
 * The tool reference (docs/tools.md), made from the registry so it cannot drift from what the tools
 * take: each tool's title, kind, description and arguments, under a heading that is its name.
 */
/** Arguments whose name says enough in tools/list (they carry no description there), explained here. */
export const UNDESCRIBED: Record<string, string> = {
  idempotency_key: 'The same key with the same arguments replays the first result instead of writing again.',
};

export function toolReference(tools: readonly Tool[]): string {
  const out: string[] = [];
  for (const tool of tools) {
    const schema = z.toJSONSchema(tool.input, { io: 'input' }) as JsonSchema;
    out.push(`## \`${tool.name}\``, '', `**${tool.title}** (${tool.kind})`, '', tool.description, '');
    const properties = Object.entries(schema.properties ?? {});
    if (!properties.length) {
      out.push('No arguments.', '');
      continue;
    }
    out.push('| Argument | Type | Required | Meaning |', '|---|---|---|---|');
    for (const [name, property] of properties) {
      out.push(`| \`${name}\` | ${cell(typeOf(property))} | ${schema.required?.includes(name) ? 'yes' : 'no'} | ${cell(property.description ?? UNDESCRIBED[name] ?? '')} |`);
    }
    out.push('');
  }
  return out.join('\n').trimEnd() + '\n';
}

/** The whole of docs/tools.md: what the page is, an index of the tools, and the reference. */
export function toolReferencePage(tools: readonly Tool[]): string {
  const index = tools.map((tool) => `[\`${tool.name}\`](#${tool.name})`).join(' · ');
  return [
    '# Tool reference',
    '',
    '<!-- Made by `npm run docs` from the tool registry (api/tools/registry.ts): do not edit by hand. -->',
    '',
    `The ${tools.length} tools an agent can call, made from the tool registry by \`npm run docs\` (a test fails`,
    'when this page is out of date). Every tool is called over MCP (`tools/call` at `POST /mcp`) or at',
    '`POST /api/v1/tools/<name>` with the same arguments; see [ways-in.md](ways-in.md). What the tools do',
    'together is in [features.md](features.md).',
    '',
    index,
    '',
    toolReference(tools),
  ].join('\n');
}
