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
 * The README's tool reference, made from the registry so it cannot drift from what the tools take:
 * each tool's description, kind and arguments.
 */
export function toolReference(tools: readonly Tool[]): string {
  const out: string[] = [];
  for (const tool of tools) {
    const schema = z.toJSONSchema(tool.input, { io: 'input' }) as JsonSchema;
    const kind = tool.readOnly ? 'read' : tool.annotations.destructiveHint ? 'write, destructive' : tool.annotations.idempotentHint ? 'write, idempotent' : 'write';
    out.push(`#### \`${tool.name}\` — ${tool.title} (${kind})`, '', tool.description, '');
    const properties = Object.entries(schema.properties ?? {});
    if (!properties.length) {
      out.push('No arguments.', '');
      continue;
    }
    out.push('| Argument | Type | Required | Meaning |', '|---|---|---|---|');
    for (const [name, property] of properties) {
      out.push(`| \`${name}\` | ${cell(typeOf(property))} | ${schema.required?.includes(name) ? 'yes' : 'no'} | ${cell(property.description ?? '')} |`);
    }
    out.push('');
  }
  return out.join('\n').trimEnd() + '\n';
}

export const REFERENCE_START = '<!-- tool reference: made by `npm run docs`, from the tool registry -->';
export const REFERENCE_END = '<!-- end of tool reference -->';

/** The README with its tool reference section replaced by `reference`. */
export function withReference(readme: string, reference: string): string {
  const start = readme.indexOf(REFERENCE_START);
  const end = readme.indexOf(REFERENCE_END);
  if (start < 0 || end < start) throw new Error('README.md has no tool reference markers');
  return `${readme.slice(0, start + REFERENCE_START.length)}\n\n${reference}\n${readme.slice(end)}`;
}
