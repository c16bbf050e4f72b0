import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each integration file starts its own server and databases; two cores run two files at once.
    maxWorkers: 2,
    reporters: ['default', './test/support/summaryReporter.ts'],
  },
});
