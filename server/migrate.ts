import { loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { applyMigrations } from './db/migrations.ts';
import { createLogger } from './log.ts';

// `npm run migrate`: apply pending migrations to the configured store and exit.
const config = loadConfig();
const log = createLogger(config.logLevel);
const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log });
try {
  const applied = await applyMigrations(db.pool, log);
  log.info(applied.length ? 'migrations applied' : 'schema is up to date', { applied });
} finally {
  await db.close();
}
