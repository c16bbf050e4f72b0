import { Worker } from 'node:worker_threads';
import type { FoldReply, FoldRequest } from './foldWorker.ts';

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, { resolve(value: { state: Uint8Array; vector: Uint8Array }): void; reject(error: Error): void }>();

/**
 * The process's folding thread, started once (by `startFolding`, or else on first use); it keeps the
 * process alive only while it has work.
 */
function folder(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL('./foldWorker.ts', import.meta.url));
  started.on('message', (reply: FoldReply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) started.unref();
    if (!waiting) return;
    if ('error' in reply) waiting.reject(new Error(`folding the pad log failed: ${reply.error}`));
    else waiting.resolve({ state: reply.state, vector: reply.vector });
  });
  started.on('error', (error) => {
    // A thread that died fails what it held; the next fold starts a new one.
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
    if (worker === started) worker = null;
  });
  started.on('exit', () => {
    if (worker === started) worker = null;
  });
  // After the listeners: adding a 'message' listener refs the thread again.
  started.unref();
  return (worker = started);
}

/**
 * Starts the folding thread now, so the ~200 ms of CPU it takes to start (a thread, its isolate, Yjs)
 * is spent when the server starts, not in the middle of serving pads at the first compaction.
 */
export function startFolding() {
  folder();
}

/**
 * A pad's snapshot (if any) and the updates after it, folded into one state and its state vector,
 * off the event loop. The inputs are copied to the thread; the caller keeps its buffers.
 */
export function foldLog(state: Uint8Array | null, updates: readonly Uint8Array[]): Promise<{ state: Uint8Array; vector: Uint8Array }> {
  const thread = folder();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    thread.ref();
    thread.postMessage({ id, state, updates: [...updates] } satisfies FoldRequest);
  });
}
