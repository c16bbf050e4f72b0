import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import { foldLog } from '../../sync/fold.ts';
import { CONDITION_MS } from '../support/patience.ts';

/** A document's updates as the log holds them: one per transaction. */
function typed(texts: string[]) {
  const doc = new Y.Doc();
  const updates: Uint8Array[] = [];
  doc.on('update', (update: Uint8Array) => updates.push(update));
  for (const text of texts) doc.getText('t').insert(doc.getText('t').length, text);
  return { doc, updates };
}

describe('folding a pad log in its thread', () => {
  it('keeps no process alive while it waits, started early or after a fold', () => {
    const fold = fileURLToPath(new URL('../../sync/fold.ts', import.meta.url));
    const yjs = import.meta.resolve('yjs');
    const started = `const { startFolding } = await import(${JSON.stringify(fold)}); startFolding();`;
    const folded = `
      const { foldLog } = await import(${JSON.stringify(fold)});
      const Y = await import(${JSON.stringify(yjs)});
      const doc = new Y.Doc();
      doc.getText('t').insert(0, 'x');
      await foldLog(null, [Y.encodeStateAsUpdate(doc)]);`;
    for (const script of [started, folded]) {
      // The process ends by itself; a thread that held it open would be killed at the timeout.
      const run = spawnSync(process.execPath, ['-e', script], { timeout: CONDITION_MS, encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.signal).toBeNull();
      expect(run.status).toBe(0);
    }
  });

  it('gives the state and state vector of snapshot plus updates', async () => {
    const { doc, updates } = typed(['one ', 'two ', 'three']);
    const snapshot = Y.mergeUpdates(updates.slice(0, 2));
    const folded = await foldLog(snapshot, updates.slice(2));
    const loaded = new Y.Doc();
    Y.applyUpdate(loaded, folded.state);
    expect(loaded.getText('t').toString()).toBe('one two three');
    expect(folded.vector).toEqual(Y.encodeStateVector(doc));
  });

  it('fails a fold of bytes that are no update, and folds the next one', async () => {
    await expect(foldLog(null, [new Uint8Array([0xff, 0xff, 0xff])])).rejects.toThrow(/folding the pad log failed/);
    const { updates } = typed(['still ', 'works']);
    const folded = await foldLog(null, updates);
    const loaded = new Y.Doc();
    Y.applyUpdate(loaded, folded.state);
    expect(loaded.getText('t').toString()).toBe('still works');
  });

  it('keeps concurrent folds apart', async () => {
    const logs = Array.from({ length: 8 }, (_, i) => typed([`pad ${i}: `, 'a', 'b']).updates);
    const folded = await Promise.all(logs.map((updates) => foldLog(null, updates)));
    folded.forEach(({ state }, i) => {
      const loaded = new Y.Doc();
      Y.applyUpdate(loaded, state);
      expect(loaded.getText('t').toString()).toBe(`pad ${i}: ab`);
    });
  });
});
