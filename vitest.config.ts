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
    // The embedded store is WebAssembly in a worker thread, started and stopped many times a file. V8
    // (Node 24) has aborted a test process now and then while freeing wasm code it had tiered up
    // ("Check failed: jit_page_->allocations_.erase(addr) == 1" in UnregisterWasmAllocation); without
    // the collection of wasm code that path runs only when a store closes.
    execArgv: ['--no-wasm-code-gc'],
    reporters: ['default', './test/support/summaryReporter.ts'],
  },
});
