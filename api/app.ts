import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { healthRoutes } from './health.ts';
import { adminPauseRoutes } from './adminPauses.ts';
import { hostCheck, requestScope, securityHeaders, servedHostsOf } from './http/middleware.ts';
import { staticClient } from './http/staticClient.ts';
import { markdownRoutes } from './markdown.ts';
import { searchRoutes } from './searchView.ts';
import { signedOutReads } from './signedOutReads.ts';
import { mcpEndpoint } from './mcp.ts';
import { openApiRoutes } from './openapi.ts';
import { restRoutes } from './rest.ts';
import { createIpLimits, ipLimitNamespace } from './http/ipLimits.ts';
import { webRoutes } from './web.ts';
import { exportRoutes } from './export.ts';
import { internalRoutes } from './internal.ts';
import { settingsRoutes } from './settings.ts';
import { signinRoutes } from './signin.ts';
import { inviteRoutes } from './invites.ts';
import { discoveryRoutes } from './discovery.ts';
import { oauthMetadataRoutes } from './oauth/metadataRoutes.ts';
import { oauthTokenRoutes } from './oauth/tokenRoutes.ts';
import { oauthAuthorizeRoutes } from './oauth/authorizeRoutes.ts';
import { appPage } from './publicReading.ts';
import type { Config } from '../server/config.ts';
import type { Core } from '../server/core/kernel/context.ts';
import { openDatabase } from '../server/db/database.ts';
import { applyMigrations } from '../server/db/migrations.ts';
import { padAccessRecheck, syncAuthenticator } from '../server/core/pads/pads.ts';
import { livePadText } from '../server/core/limits/padTextLive.ts';
import { linkForm } from '../server/core/kernel/framing.ts';
import { createEditorCache } from '../server/core/kernel/editors.ts';
import { createReadCache } from '../server/core/kernel/readCache.ts';
import { createWaitRegistry } from '../server/core/kernel/waitRegistry.ts';
import { createPace } from '../server/core/kernel/pace.ts';
import { createPadSync } from '../sync/padSync.ts';
import { startRulebookTimer } from '../server/core/rulebook/rulebook.ts';
import { createLogger } from '../server/log.ts';
import { type Logger } from '../server/db/logger.ts';

export const CLIENT_DIST = fileURLToPath(new URL('../client/dist/', import.meta.url));

export type Running = {
  core: Core;
  server: Server;
  /** The origin the server answers on, e.g. http://127.0.0.1:43121. */
  url: string;
  close(): Promise<void>;
};

/** Opens the store, applies migrations, and serves every way in on one HTTP server. */
/**
 * The server on `config.port`. `rulebook: false` leaves the rulebook's timer to another process of the
 * same instance (one of `npm start`'s workers runs it, api/workers.ts).
 */
export async function startServer(config: Config, options: { log?: Logger; host?: string; rulebook?: boolean } = {}): Promise<Running> {
  const log = options.log ?? createLogger(config.logLevel);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log, writeWaitMs: config.writeWaitMs });
  try {
    await applyMigrations(db.pool, log);
  } catch (error) {
    await db.close();
    throw error;
  }
  const server = createServer();
  let port = config.port;
  const hosts = servedHostsOf(config, () => port);
  // The live layer first, then the core over it, then the live layer's hooks that ask the core.
  const sync = createPadSync({ db, log, redisUrl: config.redisUrl, readForm: linkForm });
  const core: Core = { db, config, log, editors: createEditorCache(), reads: createReadCache(db), waits: createWaitRegistry(db, log, sync.onVersion), sync, pace: createPace(config.paceScale) };
  sync.attach(server, { hosts, authenticate: syncAuthenticator(core), recheck: padAccessRecheck(core), padText: livePadText(core) });

  // The signed-out read limit is a read pace: SVC_PACE_SCALE multiplies it (the other per-IP routes keep their numbers).
  const ipLimits = await createIpLimits(config.redisUrl, log, config.paceScale, ipLimitNamespace(config.databaseUrl));
  const app = new Koa();
  app.proxy = config.production;
  app.silent = true;
  app.use(requestScope(log));
  const canonicalHost = () => new URL(config.baseUrl).host.toLowerCase();
  app.use(securityHeaders(canonicalHost));
  app.use(hostCheck(hosts));
  app.use(signedOutReads(core, ipLimits));
  // The busiest way in first: each router matches every request that reaches it.
  app.use(mcpEndpoint(core));
  for (const router of [healthRoutes(core), restRoutes(core, ipLimits), openApiRoutes(core), markdownRoutes(core), searchRoutes(core, ipLimits), signinRoutes(core, hosts, ipLimits), settingsRoutes(core, hosts), exportRoutes(core), inviteRoutes(core, hosts, ipLimits), oauthMetadataRoutes(core), oauthTokenRoutes(core, ipLimits), oauthAuthorizeRoutes(core, hosts, ipLimits, CLIENT_DIST), internalRoutes(core), adminPauseRoutes(core), discoveryRoutes(core, canonicalHost), webRoutes(core, hosts)]) {
    // No allowedMethods(): a path one router knows for POST (say /signin) may be another's page for GET.
    app.use(router.routes());
  }
  app.use(staticClient(CLIENT_DIST, appPage(core)));
  app.use(async (ctx) => {
    ctx.status = 404;
    ctx.body = { error: 'not_found', message: 'No such route.' };
  });
  server.on('request', app.callback());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, options.host ?? '0.0.0.0', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  if (!config.baseUrlFixed) config.baseUrl = `http://localhost:${port}`;
  log.info('listening', { port, baseUrl: config.baseUrl, store: db.kind });
  // The rulebook's timed rules, run in-process until close (each under its lock: instances never run one at once).
  const rulebook = options.rulebook === false ? { stop: async () => {} } : startRulebookTimer(core);

  let closing: Promise<void> | undefined;
  return {
    core,
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      (closing ??= (async () => {
        const rulesStopped = rulebook.stop();
        server.closeIdleConnections();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Every acknowledged edit and every live update reaches the database before the store closes.
        await core.sync.close();
        server.closeAllConnections();
        await closed;
        await ipLimits.close();
        await rulesStopped;
        await db.close();
      })()),
  };
}

/** On SIGTERM or SIGINT: stop taking requests, save everything acknowledged, then exit. */
export function stopOnSignals(running: Running, log: Logger) {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info('stopping', { signal });
      running.close().then(
        () => process.exit(0),
        (error) => {
          log.error('stop failed', { error });
          process.exit(1);
        },
      );
    });
  }
}
