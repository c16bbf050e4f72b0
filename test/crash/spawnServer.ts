import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, openSync, closeSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The first start of a checkout without client/dist builds the web app first. */
const READY_WITHIN_MS = 120_000;

export type ServerProcess = {
  url: string;
  pid: number;
  /** Whether the process has not ended. */
  running(): boolean;
  /** SIGKILL: the process ends at once, with whatever it had not written. */
  kill(): Promise<void>;
  /** SIGTERM, the way it is stopped in production; SIGKILL if it has not ended in 15 s. */
  stop(): Promise<void>;
};

/** Every server this process started and has not seen end, so a crashing runner leaves none behind. */
const alive = new Set<number>();
process.on('exit', () => {
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

/** The pids of `pid`'s child processes: the workers of a server started with WORKERS. */
export const childrenOf = (pid: number) =>
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);

/** A port nobody listens on now; the server of one store keeps it across restarts, as a deployment does. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The last lines of a server's log, for a report. */
export function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * `node api/main.ts` as production runs it, on the store `env` names, listening on `port`; its
 * output goes to `logFile`. Resolves once `/healthz` answers 200.
 */
export async function spawnServer(options: { env: Record<string, string>; port: number; logFile: string; label: string }): Promise<ServerProcess> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ['DATABASE_URL', 'SVC_DATA_DIR', 'REDIS_URL', 'SVC_BASE_URL']) delete env[name];
  // The crash test's writers post and edit far faster than one participant's pace allows, on purpose:
  // it tests durability, so the pace numbers are loosened as on the test servers (never turned off).
  Object.assign(env, { PORT: String(options.port), SVC_GUEST_AGENTS: '1', LOG_LEVEL: 'warn', SVC_PACE_SCALE: '100' }, options.env);
  appendFileSync(options.logFile, `--- ${new Date().toISOString()} ${options.label}\n`);
  const log = openSync(options.logFile, 'a');
  const child = spawn(process.execPath, ['api/main.ts'], { cwd: ROOT, env, stdio: ['ignore', log, log] });
  closeSync(log);
  const pid = child.pid!;
  alive.add(pid);
  let exitCode: string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = signal ?? String(code);
      alive.delete(pid);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (exitCode !== null) throw new Error(`the server (${options.label}) exited with ${exitCode} before it answered /healthz:\n${logTail(options.logFile)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server (${options.label}) did not answer /healthz within ${READY_WITHIN_MS / 1000} s:\n${logTail(options.logFile)}`);
    }
    const healthy = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      (reply) => reply.status === 200,
      () => false,
    );
    if (healthy) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid,
    running: () => exitCode === null,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * `npm start` with WORKERS=`workers` on the store and Redis `env` names, on a free port, its output in
 * a log file of its own; resolves once every worker runs (WORKERS=1 is one process, with no cluster).
 */
export async function spawnWorkers(env: Record<string, string>, workers: number): Promise<ServerProcess & { logFile: string }> {
  const logFile = join(mkdtempSync(join(tmpdir(), 'dotpad-workers-')), 'server.log');
  const label = `WORKERS=${workers}`;
  const server = await spawnServer({ env: { ...env, WORKERS: String(workers) }, port: await freePort(), logFile, label });
  for (let waited = 0; workers > 1 && childrenOf(server.pid).length < workers; waited += 100) {
    if (waited > 60_000) {
      await server.stop();
      throw new Error(`${label}: ${childrenOf(server.pid).length} workers after 60 s:\n${logTail(logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ...server, logFile };
}
