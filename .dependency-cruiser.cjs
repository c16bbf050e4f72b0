/**
 * The house's dependency rules, checked by `npm test` (test/unit/layers.test.ts runs depcruise):
 * api -> server core -> sync -> server/db -> schema, no import cycle anywhere, and the client on schema/ alone.
 * The composition root (api/app.ts, api/main.ts) is in api/, which may import every layer.
 */
const core = '^server/core/';
const sync = '^sync/';
const db = '^server/db/';
const schema = '^schema/';
const api = '^api/';
const client = '^client/';
const config = '^server/(config|log)\\.ts$';

module.exports = {
  forbidden: [
    { name: 'no-cycle', severity: 'error', comment: 'Facts sit below flows: no two modules may import each other, directly or round a loop.', from: {}, to: { circular: true } },
    { name: 'schema-imports-nothing-of-ours', severity: 'error', from: { path: schema }, to: { path: '^(server|sync|api|client|test)/' } },
    { name: 'db-below-sync-and-core', severity: 'error', from: { path: db }, to: { path: '^(server/(core|config|log)|sync|api|client|test)' } },
    { name: 'sync-below-core', severity: 'error', comment: 'sync may import schema/ and server/db only; its logger is handed to it.', from: { path: sync }, to: { path: '^(server/(core|config|log|migrate)|api|client|test)' } },
    {
      name: 'kernel-is-the-ground',
      severity: 'error',
      comment: 'Every domain of the core stands on the kernel; the kernel stands on no domain.',
      from: { path: '^server/core/kernel/' },
      to: { path: '^server/core/', pathNot: '^server/core/kernel/' },
    },
    { name: 'core-below-api', severity: 'error', from: { path: core }, to: { path: '^(api|client|test)/' } },
    {
      name: 'shells-go-through-the-core',
      severity: 'error',
      comment: 'api/ reaches the store through the core; only the composition root opens it. The logger and the PlannedWrite hook are types every layer shares.',
      from: { path: api, pathNot: '^api/(app|main)\\.ts$' },
      to: { path: '^server/db/', pathNot: '^server/db/(logger|plannedWrite)\\.ts$' },
    },
    { name: 'config-is-a-leaf', severity: 'error', from: { path: config }, to: { path: '^(server/core|sync|api|client|test)/' } },
    { name: 'client-on-schema-only', severity: 'error', from: { path: client }, to: { path: '^(server|sync|api|test)/' } },
    { name: 'nothing-imports-tests', severity: 'error', from: { pathNot: '^test/' }, to: { path: '^test/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|client/dist|data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.vue'] },
  },
};
