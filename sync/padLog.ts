import * as Y from 'yjs';

/** Applies a pad's log to `doc` in one transaction that no store hook sees. */
export function applyPadLog(doc: Y.Doc, log: { state: Uint8Array | null; updates: readonly Uint8Array[] }) {
  // Applying the log to a Y.Doc is several times faster here than Y.mergeUpdates.
  Y.transact(doc, () => {
    if (log.state) Y.applyUpdate(doc, log.state);
    for (const update of log.updates) Y.applyUpdate(doc, update);
  }, { source: 'local', skipStoreHooks: true });
}
