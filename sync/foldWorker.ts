import { parentPort } from 'node:worker_threads';
import * as Y from 'yjs';
import { applyPadLog } from './padLog.ts';

export type FoldRequest = { id: number; state: Uint8Array | null; updates: Uint8Array[] };
export type FoldReply = { id: number; state: Uint8Array; vector: Uint8Array } | { id: number; error: string };

/**
 * Folds a pad's snapshot and log into one state, in a thread of its own: applying hundreds of
 * updates takes milliseconds that would otherwise stall every live pad on the instance.
 */
parentPort!.on('message', ({ id, state, updates }: FoldRequest) => {
  try {
    const doc = new Y.Doc();
    applyPadLog(doc, { state, updates });
    const folded = Y.encodeStateAsUpdate(doc);
    const vector = Y.encodeStateVector(doc);
    doc.destroy();
    parentPort!.postMessage({ id, state: folded, vector } satisfies FoldReply, [folded.buffer as ArrayBuffer, vector.buffer as ArrayBuffer]);
  } catch (error) {
    parentPort!.postMessage({ id, error: (error as Error).message } satisfies FoldReply);
  }
});
