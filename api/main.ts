import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_DIST, startServer, stopOnSignals } from './app.ts';
import { loadConfig } from '../server/config.ts';
import { VIEW_BUILT } from './mcpApps.ts';
import { createLogger } from '../server/log.ts';
import { runWorkers, workerSlot } from './workers.ts';

const config = loadConfig();
const log = createLogger(config.logLevel);

// The web app, and the MCP Apps view assistant hosts show (api/mcpApps.ts), built on the first start
// (by the primary, before any worker starts).
const builds = [
  [join(CLIENT_DIST, 'index.html'), '../client/vite.config.ts'],
  [VIEW_BUILT, '../client/view/vite.config.ts'],
] as const;
for (const [built, config] of cluster.isPrimary ? builds : []) {
  if (existsSync(built)) continue;
  log.info(`building ${config.includes('view') ? 'the assistant view' : 'the web app'} (first start)`);
  const { build } = await import('vite');
  await build({ configFile: new URL(config, import.meta.url).pathname, logLevel: 'warn' });
}

if (cluster.isPrimary && config.workers > 1) {
  // WORKERS processes on the port, each an instance on the same Postgres and Redis (api/workers.ts).
  runWorkers(config, log);
} else {
  // One process, or one of the workers: place 1 runs the rulebook's timer for all of them.
  const slot = workerSlot();
  const running = await startServer(config, { log, rulebook: slot === null || slot === 1 });
  if (slot === null) log.info(`Dotpad is up at ${config.baseUrl}`);
  stopOnSignals(running, log);
}
