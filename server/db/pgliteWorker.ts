import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * The embedded store in its own thread: PGlite runs Postgres as WebAssembly, and every query would
 * otherwise block the event loop that relays live edits. It listens on a Unix socket (a loopback port
 * on Windows), so the main thread's pool reaches it exactly as it reaches Postgres.
 */
const { dataDir, socketPath, maxConnections } = workerData as { dataDir: string | undefined; socketPath: string | null; maxConnections: number };
const pglite = await PGlite.create(dataDir);
const server = new PGLiteSocketServer({ db: pglite, maxConnections, ...(socketPath ? { path: socketPath } : { host: '127.0.0.1', port: 0 }) });
// Every socket reaches the same session: a connection that replaces a broken one starts without
// the statements the old one prepared, so it can prepare them again under the same names.
server.addEventListener('connection', () => void pglite.exec('DEALLOCATE ALL'));
await server.start();
parentPort!.postMessage({ address: server.getServerConn() });
parentPort!.on('message', async (message: { stop?: boolean }) => {
  if (!message.stop) return;
  await server.stop();
  await pglite.close();
  parentPort!.postMessage({ stopped: true });
});
