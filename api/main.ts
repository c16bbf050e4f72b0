import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_DIST, startServer, stopOnSignals } from './app.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';

const config = loadConfig();
const log = createLogger(config.logLevel);

if (!existsSync(join(CLIENT_DIST, 'index.html'))) {
  log.info('building the web app (first start)');
  const { build } = await import('vite');
  await build({ configFile: new URL('../client/vite.config.ts', import.meta.url).pathname, logLevel: 'warn' });
}

const running = await startServer(config, { log });
log.info(`Dotpad is up at ${config.baseUrl}`);

stopOnSignals(running, log);
