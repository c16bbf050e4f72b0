import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Cruise = {
  modules: { source: string; dependencies: { resolved: string; dependencyTypes: string[] }[] }[];
  summary: { totalCruised: number; violations: { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }[] };
};

/** The house's rules (.dependency-cruiser.cjs): api -> core -> sync -> db -> schema, no cycle, the client on schema/. */
describe('the layers', () => {
  const cruise = (): Cruise => {
    const out = execFileSync(process.execPath, ['node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', 'server', 'sync', 'api', 'schema', 'client/src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(out) as Cruise;
  };
  const result = cruise();

  it('reads the TypeScript sources, type-only imports included', () => {
    expect(result.summary.totalCruised).toBeGreaterThan(200);
    const policies = result.modules.find((m) => m.source === 'server/core/policies/policies.ts');
    expect(policies?.dependencies.some((d) => d.resolved === 'server/core/kernel/policy.ts' && d.dependencyTypes.includes('type-only'))).toBe(true);
  });

  it('has no import cycle and no import against the direction', () => {
    const broken = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
    expect(broken).toEqual([]);
  });
});
