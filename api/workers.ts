import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../server/config.ts';
import type { Logger } from '../server/db/logger.ts';

/** The environment variable naming a worker's place (1 to WORKERS); a worker started again keeps its place. */
export const WORKER_SLOT = 'DOTPAD_WORKER';
/** A worker that stopped is started again after this long, so one that cannot start does not spin. */
const RESTART_AFTER_MS = 1_000;

/** In a worker of `npm start`: its place, 1 to WORKERS (null outside a cluster). Place 1 runs the rulebook. */
export function workerSlot(): number | null {
  if (!cluster.isWorker) return null;
  const slot = Number(process.env[WORKER_SLOT]);
  return Number.isInteger(slot) && slot > 0 ? slot : null;
}

/**
 * The primary of `npm start` with WORKERS > 1: forks that many workers, which share the port
 * (node:cluster hands each new connection to the next) and serve as instances of one deployment, on
 * one Postgres and one Redis. A worker that stops is started again in its place; SIGTERM or SIGINT
 * stops every worker (each closes as a single server does) and then the primary.
 */
export function runWorkers(config: Config, log: Logger) {
  const places = new Map<Worker, number>();
  let listening = 0;
  let stopping = false;
  const start = (slot: number) => places.set(cluster.fork({ [WORKER_SLOT]: String(slot) }), slot);

  cluster.on('listening', (worker) => {
    if (++listening === config.workers) log.info(`Dotpad is up at ${config.baseUrl}`, { workers: config.workers });
    else log.debug('worker listening', { slot: places.get(worker) });
  });
  cluster.on('exit', (worker, code, signal) => {
    const slot = places.get(worker)!;
    places.delete(worker);
    if (stopping) {
      if (!places.size) process.exit(0);
      return;
    }
    log.error('a worker stopped; starting it again', { slot, code, signal, inMs: RESTART_AFTER_MS });
    setTimeout(() => {
      if (!stopping) start(slot);
    }, RESTART_AFTER_MS);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info('stopping', { signal, workers: places.size });
      if (!places.size) process.exit(0);
      for (const worker of places.keys()) worker.process.kill('SIGTERM');
    });
  }
  for (let slot = 1; slot <= config.workers; slot++) start(slot);
}
