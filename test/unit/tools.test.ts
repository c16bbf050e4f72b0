import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tools } from '../../api/tools/registry.ts';

/** One snapshot per tool definition, so every change to what agents see shows in review. */
describe('tool definitions', () => {
  it.each(tools.map((tool) => [tool.name, tool] as const))('%s', async (name, tool) => {
    const definition = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      audience: tool.audience,
      annotations: tool.annotations,
      inputSchema: z.toJSONSchema(tool.input, { io: 'input' }),
    };
    await expect(JSON.stringify(definition, null, 2) + '\n').toMatchFileSnapshot(`./__snapshots__/tools/${name}.json`);
  });

  it('names are unique, snake_case (settings operations: kebab-case, as in their path), and every field is described', () => {
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const tool of tools) {
      expect(tool.name).toMatch(tool.audience === 'settings' ? /^[a-z]+(-[a-z]+)*$/ : /^[a-z]+(_[a-z]+)*$/);
      expect(tool.description.length).toBeGreaterThan(40);
      for (const [field, schema] of Object.entries(tool.input.shape)) {
        expect((schema as z.ZodType).description, `${tool.name}.${field}`).toBeTruthy();
      }
    }
  });

  it('reads are never destructive, and open world only for search; writes are always open world', () => {
    for (const tool of tools) {
      if (tool.readOnly) expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: tool.name === 'search_dotpad' });
      else expect(tool.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    }
  });
});
