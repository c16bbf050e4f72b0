import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { modelTools } from '../../api/tools/registry.ts';
import { toolReference, toolReferencePage } from '../../api/toolReference.ts';

describe('the tool reference, docs/tools.md', () => {
  it('is the one the registry makes (run `npm run docs` after changing a tool)', () => {
    const page = readFileSync(fileURLToPath(new URL('../../docs/tools.md', import.meta.url)), 'utf8');
    expect(page).toBe(toolReferencePage(modelTools));
  });

  it('names every model tool and each of its arguments', () => {
    const reference = toolReference(modelTools);
    for (const tool of modelTools) {
      expect(reference).toContain(`## \`${tool.name}\``);
      for (const field of Object.keys(tool.input.shape)) expect(reference).toContain(`| \`${field}\` |`);
    }
  });
});
