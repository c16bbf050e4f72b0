import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UNDESCRIBED } from '../../api/toolReference.ts';
import { KEYLESS_TOOLS } from '../../api/keylessWrite.ts';
import { tools } from '../../api/tools/registry.ts';

/**
 * One snapshot per tool definition, so every change a caller can feel shows in review: every data
 * field of the definition (who may call it, annotations, limits, keyed, idempotent, the errors it can
 * answer; a field added to Tool comes along by itself), its input schema, and whether it takes the
 * keyless first write.
 */
describe('tool definitions', () => {
  it.each(tools.map((tool) => [tool.name, tool] as const))('%s', async (name, tool) => {
    // policy, run and present are functions, which JSON leaves out.
    const { input, ...declared } = tool;
    const definition = { ...declared, keylessFirstWrite: KEYLESS_TOOLS.has(name), inputSchema: z.toJSONSchema(input, { io: 'input' }) };
    await expect(JSON.stringify(definition, null, 2) + '\n').toMatchFileSnapshot(`./__snapshots__/tools/${name}.json`);
  });

  it('names are unique, snake_case (settings operations: kebab-case, as in their path), and every field is described', () => {
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const tool of tools) {
      expect(tool.name).toMatch(tool.audience === 'settings' ? /^[a-z]+(-[a-z]+)*$/ : /^[a-z]+(_[a-z]+)*$/);
      expect(tool.description.length).toBeGreaterThan(40);
      // As the published schema says it: an optional shared field is described by the field it wraps;
      // one whose name says enough (idempotency_key) is described in the reference alone.
      const { properties = {} } = z.toJSONSchema(tool.input, { io: 'input' }) as { properties?: Record<string, { description?: string }> };
      for (const field of Object.keys(tool.input.shape)) expect(properties[field]?.description ?? UNDESCRIBED[field], `${tool.name}.${field}`).toBeTruthy();
    }
  });

  it('reads are never destructive, and open world only for search; writes are always open world', () => {
    for (const tool of tools) {
      if (tool.readOnly) expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: tool.name === 'search_dotpad' });
      else expect(tool.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
      // idempotentHint is there only to say true (SPEC part 4 "Annotations": "some also idempotentHint").
      expect(tool.annotations.idempotentHint, tool.name).toBe(tool.kind.endsWith('idempotent') ? true : undefined);
    }
  });

  it('every model write a retry could repeat takes idempotency_key (SPEC part 4 "Common inputs": most writes)', () => {
    const unkeyed = tools.filter((tool) => tool.audience === 'model' && !tool.readOnly && !tool.idempotent && !tool.keyed).map((tool) => tool.name);
    expect(unkeyed).toEqual([]);
  });
});
