import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../db/logger.ts';
import type { PadSync } from '../../../sync/padSync.ts';
import type { EditorCache } from './editors.ts';
import type { Pace } from './pace.ts';
import type { ReadCache } from './readCache.ts';
import type { WaitRegistry } from './waitRegistry.ts';

/** What every core function is handed: the store, the configuration and a logger. Nothing of HTTP. */
export type Core = {
  db: Db;
  config: Config;
  log: Logger;
  /** The live pad documents. */
  sync: PadSync;
  /** Who may edit which pad, remembered for a few seconds. */
  editors: EditorCache;
  /** Reads kept until the next change (threads and hubs with their readers' seats). */
  reads: ReadCache;
  /** This instance's open wait_for_changes calls, woken by changes made anywhere. */
  waits: WaitRegistry;
  /** The limits' clock and scale, and this instance's agent read counts. */
  pace: Pace;
};
