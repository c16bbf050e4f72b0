import { defineConfig } from 'vitest/config';
import { CONDITION_MS, HEAVY_TEST_MS, TEST_MS } from './test/support/patience.ts';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
    // Bounds that only end a hang, generous enough for a loaded machine (test/support/patience.ts).
    testTimeout: TEST_MS,
    hookTimeout: HEAVY_TEST_MS,
    expect: { poll: { timeout: CONDITION_MS } },
    tags: [
      {
        name: 'heavy',
        description: 'Restarts servers on the embedded store, starts several instances or drives a browser: minutes on a loaded machine.',
        timeout: HEAVY_TEST_MS,
      },
    ],
    // Each integration file starts its own server and databases; two cores run two files at once.
    maxWorkers: 2,
    reporters: ['default', './test/support/summaryReporter.ts'],
  },
});
