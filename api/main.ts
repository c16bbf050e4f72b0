import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_DIST, startServer, stopOnSignals } from './app.ts';
import { loadConfig } from '../server/config.ts';
import { VIEW_BUILT } from './mcpApps.ts';
import { createLogger } from '../server/log.ts';

const config = loadConfig();
const log = createLogger(config.logLevel);

// The web app, and the MCP Apps view assistant hosts show (api/mcpApps.ts), built on the first start.
for (const [built, config] of [
  [join(CLIENT_DIST, 'index.html'), '../client/vite.config.ts'],
  [VIEW_BUILT, '../client/view/vite.config.ts'],
] as const) {
  if (existsSync(built)) continue;
  log.info(`building ${config.includes('view') ? 'the assistant view' : 'the web app'} (first start)`);
  const { build } = await import('vite');
  await build({ configFile: new URL(config, import.meta.url).pathname, logLevel: 'warn' });
}

const running = await startServer(config, { log });
log.info(`Dotpad is up at ${config.baseUrl}`);

stopOnSignals(running, log);
