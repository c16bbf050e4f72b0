import { startServer, stopOnSignals } from '../../api/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/log.ts';

// A server in a child process, for tests that kill it: prints its URL once it listens.
const config = loadConfig();
const log = createLogger(config.logLevel);
const running = await startServer(config, { host: '127.0.0.1', log });
stopOnSignals(running, log);
process.stdout.write(`READY ${running.url}\n`);
