import { describe, expect, it } from 'vitest';
import { modelTools, tools } from '../../api/tools/registry.ts';
import { toolContracts, type ToolName } from '../../schema/tools/contract.ts';

const isContracted = (name: string): name is ToolName => Object.hasOwn(toolContracts, name);

/**
 * The registry parses exactly the inputs that schema/tools declares, so the client is typed from what the
 * server takes. The settings operations (audience `settings`, the web app's own door) are not in the
 * contract yet.
 */
const contracted = tools.filter((tool) => tool.audience !== 'settings');

describe('the tool contract', () => {
  it('has one entry per tool of the registry', () => {
    expect(Object.keys(toolContracts).sort()).toEqual(contracted.map((tool) => tool.name).sort());
  });

  it('declares the structured content of every model tool, which /openapi.json publishes', () => {
    for (const tool of modelTools) expect(isContracted(tool.name) && 'data' in toolContracts[tool.name], tool.name).toBe(true);
  });

  it.each(contracted.map((tool) => [tool.name, tool] as const))('%s parses the input of its contract', (name, tool) => {
    if (!isContracted(name)) throw new Error(`${name} has no contract`);
    const declared = toolContracts[name].input;
    if (!tool.keyed && !tool.texts) {
      expect(tool.input).toBe(declared);
      return;
    }
    // A keyed tool takes idempotency_key too, and one with text confirm_sensitive, added by the
    // registry's door alike for all of them.
    const added = [...(tool.keyed ? ['idempotency_key'] : []), ...(tool.texts ? ['confirm_sensitive'] : [])];
    expect(Object.keys(tool.input.shape)).toEqual([...Object.keys(declared.shape), ...added]);
    for (const [field, schema] of Object.entries(declared.shape)) expect(tool.input.shape[field]).toBe(schema);
  });
});
