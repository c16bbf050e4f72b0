// `vue-tsc --noEmit` for the client, run on TypeScript 6's compiler: the project's `typescript` is 7,
// the native compiler, which has no JavaScript API for vue-tsc to load. `@typescript/typescript6` is
// TypeScript's own package for keeping 6 beside 7; vue-tsc's documented `run(tscPath)` takes its tsc.
// Arguments pass through as to tsc: `node client/typecheck.cjs --noEmit -p client/tsconfig.json`.
require('vue-tsc').run(require.resolve('@typescript/typescript6/lib/tsc'))
