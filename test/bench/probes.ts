/**
 * What a benchmark may ask a server of its own process (the real one in `serverProcess.ts`, the bare
 * Hocuspocus baseline in `baselines.ts`), over the process's IPC channel: whether a pad is loaded
 * there (open, loading or unloading), and the work the process has done so far: the statements it
 * sent to its database and the CPU time it used (every thread's). Counted per cold open, they are the
 * figures that do not move with the load of a shared machine as times do.
 */
import type { ChildProcess } from 'node:child_process';
import type { Hocuspocus } from '@hocuspocus/server';
import pg from 'pg';

export type ProbeRequest = { probe: 'loaded'; padId: string } | { probe: 'work' };
/** Statements sent, and CPU microseconds used (user and system), since the process started counting. */
export type Work = { statements: number; cpuMicros: number };
type ProbeReply = { probe: ProbeRequest['probe']; value: Work | boolean };

let counting = false;
let statements = 0;

/** From now on, every statement this process sends through `pg` (which slonik's driver uses, for either store) is counted. */
export function countStatements() {
  if (counting) return;
  counting = true;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    statements++;
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** In the server's process: answers the parent's probes about this Hocuspocus instance. */
export function answerProbes(hocuspocus: Pick<Hocuspocus, 'documents' | 'loadingDocuments' | 'unloadingDocuments'>) {
  process.on('message', (message: ProbeRequest) => {
    if (typeof message !== 'object' || message === null || !('probe' in message)) return;
    const cpu = process.cpuUsage();
    const value =
      message.probe === 'work'
        ? { statements, cpuMicros: cpu.user + cpu.system }
        : [hocuspocus.documents, hocuspocus.loadingDocuments, hocuspocus.unloadingDocuments].some((held) => held.has(message.padId));
    process.send!({ probe: message.probe, value } satisfies ProbeReply);
  });
}

/** In the benchmark's process: asks `child`, and resolves with its answer. */
export function probe(child: ChildProcess, request: { probe: 'loaded'; padId: string }): Promise<boolean>;
export function probe(child: ChildProcess, request: { probe: 'work' }): Promise<Work>;
export function probe(child: ChildProcess, request: ProbeRequest): Promise<Work | boolean> {
  return new Promise((resolve) => {
    const onMessage = (message: ProbeReply) => {
      if (typeof message !== 'object' || message === null || message.probe !== request.probe) return;
      child.off('message', onMessage);
      resolve(message.value);
    };
    child.on('message', onMessage);
    child.send(request);
  });
}

/** Resolves once the pad is no longer loaded in `child` (its last connection left, and it unloaded). */
export async function whenUnloaded(child: ChildProcess, padId: string, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  while (await probe(child, { probe: 'loaded', padId })) {
    if (performance.now() > deadline) throw new Error(`pad ${padId} still loaded after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
