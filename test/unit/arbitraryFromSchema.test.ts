import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tools } from '../../api/tools/registry.ts';
import { resolve, toolInput, type JsonSchema } from '../support/arbitraryFromSchema.ts';
import { conforms } from '../support/conforms.ts';
import { fieldHints, KINDS, type Kind } from '../support/fuzzHints.ts';

const counts = Object.fromEntries(KINDS.map((kind) => [kind, 2])) as Record<Kind, number>;
const fakeId = (ref: { kind: string; index: number }) => (ref.kind === 'block' ? `b10c${ref.index}a0` : `${ref.kind.slice(0, 3)}_${String(ref.index).padStart(20, '0')}`);

/**
 * The fuzz trusts its generator to know which inputs break a tool's schema (it then expects
 * `invalid` from the server): checked here against each tool's own zod schema, with no server.
 */
describe.each(tools.map((tool) => [tool.name, tool] as const))('inputs generated from the schema of %s', (_, tool) => {
  const schema = z.toJSONSchema(tool.input, { io: 'input' }) as JsonSchema;
  const inputs = fc.sample(toolInput(schema, fieldHints(counts)), { numRuns: 400, seed: 42 });

  it('are refused by zod whenever the generator says they break the schema', () => {
    const broken = inputs.filter((input) => input.breaks !== null);
    if (Object.keys(schema.properties ?? {}).length) expect(broken.length).toBeGreaterThan(50);
    for (const input of broken) {
      const parsed = tool.input.safeParse(resolve(input.args, fakeId));
      expect(parsed.success, `${input.breaks}: ${JSON.stringify(input.args).slice(0, 200)}`).toBe(false);
      expect(conforms(schema, resolve(input.args, fakeId))).toBe(false);
    }
  });

  it('keep to the schema often enough to reach past validation', () => {
    const kept = inputs.filter((input) => input.breaks === null);
    const passing = kept.filter((input) => tool.input.safeParse(resolve(input.args, fakeId)).success);
    expect(kept.length).toBeGreaterThan(100);
    expect(passing.length / kept.length).toBeGreaterThan(0.3);
  });
});

describe('conforms', () => {
  it('follows zod on lengths, integers, patterns and unions', () => {
    const version: JsonSchema = { anyOf: [{ type: 'integer', minimum: 0, maximum: 10 }, { type: 'string', pattern: '^\\d+$' }] };
    expect(conforms(version, 3)).toBe(true);
    expect(conforms(version, '12')).toBe(true);
    expect(conforms(version, 1.5)).toBe(false);
    expect(conforms(version, '1.5')).toBe(false);
    expect(conforms(version, 11)).toBe(false);
    expect(conforms({ type: 'string', maxLength: 2 }, '👍')).toBe(true);
    expect(conforms({ type: 'string', maxLength: 1 }, '👍')).toBe(false);
    expect(conforms({ type: 'object', required: ['a'], properties: { a: { type: 'boolean' } } }, JSON.parse('{"__proto__":{"a":true}}'))).toBe(false);
  });
});
