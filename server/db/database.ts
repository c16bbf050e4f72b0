import { hash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  createPool,
  createTypeParserPreset,
  SchemaValidationError,
  type CommonQueryMethods,
  type DatabasePool,
  type DatabaseTransactionConnection,
  type Interceptor,
  type QueryResultRow,
} from 'slonik';
import type { Logger } from './logger.ts';
import { AppError } from '../../schema/errors.ts';
import { listenForChanges, CREDENTIALS_CHANNEL, READ_CHANGES_CHANNEL, WAITS_CHANNEL, type ChangeFeed, type ChangeListener } from './changeFeed.ts';
import { collecting, type Announcement } from './afterCommit.ts';

export type { Announcement } from './afterCommit.ts';

export type Db = {
  pool: DatabasePool;
  kind: 'postgres' | 'pglite';
  /**
   * Runs `handler` in one transaction; tracked so /healthz can tell when writes stall. What the
   * handler says to announce (`afterCommit` on its connection) is announced once it has committed.
   */
  write<T>(handler: (tx: DatabaseTransactionConnection) => Promise<T>): Promise<T>;
  /**
   * A write that is a single statement, atomic on its own: no BEGIN and COMMIT round trips around
   * it. Tracked and announced like `write`.
   */
  writeStatement<T>(handler: (conn: CommonQueryMethods) => Promise<T>): Promise<T>;
  /**
   * A write of a caller who can come back later (a tool call): as `write`, but turned away with
   * `busy` when it gets no connection within the bound (SPEC part 7 `busy`), or on Postgres when a
   * statement of it waits on another's lock past the same bound (rolled back). A write turned away
   * never runs, even when a connection frees up later, so a retry has one effect. Reads, and writes
   * nobody could retry (saving live pad edits), wait instead.
   */
  writeOrBusy<T>(handler: (tx: DatabaseTransactionConnection) => Promise<T>): Promise<T>;
  /**
   * A write of such a caller that is a single statement, atomic on its own (no BEGIN and COMMIT round
   * trips): turned away with `busy` as `writeOrBusy` is. Tracked like `write`.
   */
  statementOrBusy<T>(handler: (conn: CommonQueryMethods) => Promise<T>): Promise<T>;
  /**
   * The reads a write of such a caller makes before its transaction (a live pad edit's policy and
   * limits, looked at before the change goes live), on one connection taken at their first
   * statement (none when all they need is kept), turned away with `busy` as `writeOrBusy` is when no
   * connection comes within the bound.
   */
  readOrBusy<T>(handler: (conn: CommonQueryMethods) => Promise<T>): Promise<T>;
  /**
   * Milliseconds the oldest unfinished write has waited, or 0. A write turned away as busy counts
   * until its place in the line for a connection comes up, so a pool that lets no write through
   * reads as stalled.
   */
  oldestWriteMs(): number;
  /**
   * Tells `listener` of changes to what reads keep: after every `write` and `writeStatement` of
   * this process (committed or not), and, on Postgres, of every change another instance commits
   * (`changeFeed.ts`). The embedded store is one process's alone, so it hears everything at once.
   * On Postgres `credentialEnded` hears every credential that ends, and `woke` every key waiters
   * wait on, this instance's own included (as it announces them, after their commit); the embedded
   * store tells neither.
   */
  watchChanges(listener: ChangeListener): void;
  /**
   * Tells every instance, once the caller's change has committed, that `key` moved (`pad:<id>` wakes
   * the waits on it; `reads` with a table name drops kept reads; `credentialEnded` drops credential
   * caches): on Postgres over the change feed, outside any write's transaction (`changeFeed.ts`); the
   * embedded store has no other instance. A write says it from inside with `afterCommit`.
   */
  announce(what: Announcement): void;
  close(): Promise<void>;
};

/**
 * slonik's `sql.type(schema)` only declares a row type; this interceptor makes every typed query
 * really validate (and coerce) its rows, so a schema drift fails loudly at the database edge.
 * Row schemas are synchronous (no async refinements), so this is slonik's synchronous row hook: its
 * asynchronous one builds a queue and a promise per row of every query.
 */
const resultParser: Interceptor = {
  name: 'result-parser',
  transformRow: (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const checked = parser['~standard'].validate(row);
    if (checked instanceof Promise) throw new TypeError(`The row schema of this query is asynchronous; row schemas must not be: ${query.sql}`);
    if (checked.issues) throw new SchemaValidationError(query, row, checked.issues);
    return checked.value as QueryResultRow;
  },
};

/** int8 counts fit a double here; the service never stores values past 2^53. */
const typeParsers = [
  ...createTypeParserPreset().filter((parser) => parser.name !== 'int8'),
  { name: 'int8', parse: (value: string) => Number(value) },
];

async function openPool(url: string, maxPoolSize: number, log: Logger, embedded = false): Promise<DatabasePool> {
  const pool = await createPool(url, {
    interceptors: [resultParser],
    typeParsers,
    maxPoolSize,
    // The embedded store's one connection lives as long as the process, and its prepared statements
    // with it.
    ...(embedded ? { idleTimeout: 'DISABLE_TIMEOUT' as const } : {}),
    connectionTimeout: 10_000,
    statementTimeout: 30_000,
    // Nothing of ours keeps session state, so the default DISCARD ALL after every query is waste.
    resetConnection: async () => {},
  });
  // Without a listener an idle client's error would crash the process; queries report their own.
  pool.on('error', (error) => log.warn('database pool error', { message: error.message }));
  return pool;
}

/**
 * PGlite is a single database session, whatever number of sockets reach it: two connections would
 * share its unnamed and prepared statements, and one's Parse could land between another's Parse and
 * Bind. One connection, on which pg queues queries in order; PGlite answers one at a time anyway.
 */
const PGLITE_POOL_SIZE = 1;
const POSTGRES_POOL_SIZE = 10;
/** How long a tool's write waits for a connection before it is turned away as busy (SVC_WRITE_WAIT_MS). */
export const WRITE_WAIT_MS = 2_000;

/** A write turned away as busy reached a connection after all: it stops before doing anything. */
class TurnedAway extends Error {}

/** Postgres' lock_not_available: a statement waited on a lock past the transaction's lock_timeout. */
const lockTimedOut = (error: unknown) => (error as { code?: unknown } | null)?.code === '55P03';

/**
 * The database URL with every session's lock_timeout set to the write bound (an `options` parameter
 * of the connection, kept beside any the URL already has): a statement held up by another's lock (a
 * table locked for maintenance, a row held long) fails after the bound, and a tool's write is turned
 * away as busy, with no statement of its own to set it. What must wait longer says so in its own
 * transaction (the migrations' lock).
 */
export function withLockTimeout(url: string, ms: number): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get('options');
  parsed.searchParams.set('options', `${options ? `${options} ` : ''}-c lock_timeout=${ms}`);
  return parsed.toString();
}

/** Whether a process with this id is running here (it may belong to another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The start of the name of a socket directory made by process `pid` on this host. The host is in
 * it because a process id means something only where it was taken: containers sharing a temporary
 * directory each see their own processes (the hash keeps the socket's path short).
 */
export function socketDirPrefix(pid: number = process.pid): string {
  return `dotpad-db-${hostTag()}-${pid}-`;
}

const hostTag = () => hash('sha256', hostname(), 'hex').slice(0, 8);

/**
 * A new private directory for the embedded store's socket, named after its host and process. The
 * server removes its directory when it stops; one killed outright cannot, so this host's directories
 * whose process is gone, and that this user owns, are removed before a new one is made. Others are
 * left alone, as are directories of another host or named another way.
 */
function socketDirectory(log: Logger): string {
  const host = hostTag();
  const uid = process.getuid?.();
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch (error) {
    // Tidying up is never a reason not to start.
    log.warn('could not list the temporary directory for old socket directories', { error });
  }
  for (const name of names) {
    const match = /^dotpad-db-([0-9a-f]{8})-(\d+)-/.exec(name);
    if (!match || match[1] !== host || running(Number(match[2]))) continue;
    const dir = join(tmpdir(), name);
    try {
      const stat = lstatSync(dir);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      rmSync(dir, { recursive: true, force: true });
      log.info('removed the socket directory of an embedded store whose server is gone', { dir });
    } catch (error) {
      log.warn('could not remove an old socket directory', { dir, error });
    }
  }
  return mkdtempSync(join(tmpdir(), socketDirPrefix()));
}

/**
 * Postgres when a URL is given; otherwise PGlite in `dataDir` (or in memory for 'memory://'), served
 * over a local socket so that the very same slonik and SQL run against both stores.
 */
export async function openDatabase(options: { databaseUrl?: string; dataDir: string; log: Logger; writeWaitMs?: number }): Promise<Db> {
  const { log } = options;
  const bound = { writeWaitMs: options.writeWaitMs ?? WRITE_WAIT_MS };
  if (options.databaseUrl) {
    const pool = await openPool(withLockTimeout(options.databaseUrl, bound.writeWaitMs), POSTGRES_POOL_SIZE, log);
    const url = options.databaseUrl;
    return wrap(pool, 'postgres', { ...bound, size: POSTGRES_POOL_SIZE }, () => pool.end(), (listener) => listenForChanges(url, log, listener));
  }
  const memory = options.dataDir === 'memory://';
  if (!memory) mkdirSync(options.dataDir, { recursive: true });
  // A Unix socket in a directory only this user can enter: no other local user or process reaches
  // the embedded store (a loopback port is open to every process on the machine, and PGlite asks
  // for no password). Windows keeps a loopback port.
  const socketDir = process.platform === 'win32' ? null : socketDirectory(log);
  const worker = new Worker(new URL('./pgliteWorker.ts', import.meta.url), {
    workerData: {
      dataDir: memory ? undefined : options.dataDir,
      // pg looks for the socket of a directory "host" under this name.
      socketPath: socketDir && join(socketDir, '.s.PGSQL.5432'),
      // Headroom above the pool so a connection being replaced is never turned away.
      maxConnections: PGLITE_POOL_SIZE + 1,
    },
  });
  const reply = (key: 'address' | 'stopped') =>
    new Promise<Record<string, string>>((resolve, reject) => {
      const onMessage = (message: Record<string, string>) => {
        if (!(key in message)) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(message);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const { address } = await reply('address');
  worker.on('error', (error) => log.error('embedded database thread failed', { error }));
  const host = socketDir ? encodeURIComponent(socketDir) : address;
  const pool = await openPool(`postgres://postgres@${host}/postgres`, PGLITE_POOL_SIZE, log, true);
  return wrap(pool, 'pglite', { ...bound, size: PGLITE_POOL_SIZE }, async () => {
    await pool.end();
    const stopped = reply('stopped');
    worker.postMessage({ stop: true });
    await stopped;
    await worker.terminate();
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
  });
}

/**
 * The pool with its writes tracked and its changes told. `hearOthers` listens for other instances'
 * changes; without it (the embedded store) there are no other instances.
 */
function wrap(
  pool: DatabasePool,
  kind: Db['kind'],
  bound: { writeWaitMs: number; size: number },
  end: () => Promise<void>,
  hearOthers?: (listener: ChangeListener) => ChangeFeed,
): Db {
  const started = new Map<symbol, number>();
  let closed = false;
  const listeners: ChangeListener[] = [];
  let hearing = !hearOthers;
  const told: ChangeListener = {
    changed: () => {
      for (const listener of listeners) listener.changed();
    },
    hearing: (on) => {
      hearing = on;
      for (const listener of listeners) listener.hearing(on);
    },
    credentialEnded: (id) => {
      for (const listener of listeners) listener.credentialEnded?.(id);
    },
    woke: (key) => {
      for (const listener of listeners) listener.woke?.(key);
    },
  };
  const feed = hearOthers?.(told);
  async function tracked<T>(run: () => Promise<T>): Promise<T> {
    const token = Symbol('write');
    started.set(token, performance.now());
    try {
      return await run();
    } finally {
      started.delete(token);
      told.changed();
    }
  }
  /**
   * Tells the other instances over the feed, and this one's listeners at once: its kept reads were
   * dropped when the write finished (`tracked`), its waits and credential lookups hear it here.
   */
  function announce(what: Announcement) {
    if (!feed) return;
    if ('wake' in what) {
      feed.announce(WAITS_CHANNEL, what.wake);
      told.woke?.(what.wake);
    } else if ('reads' in what) {
      feed.announce(READ_CHANGES_CHANNEL, what.reads);
    } else {
      feed.announce(CREDENTIALS_CHANNEL, what.credentialEnded);
      told.credentialEnded?.(what.credentialEnded);
    }
  }
  /**
   * Runs `transact`, which hands its connection and the write's handler to `collect`; once it has
   * committed, what the handler said to announce goes out. Nothing goes out of a write that failed.
   */
  async function announcing<T>(transact: (collect: <C extends CommonQueryMethods>(conn: C, handler: (conn: C) => Promise<T>) => Promise<T>) => Promise<T>): Promise<T> {
    let announcements: Announcement[] = [];
    const value = await transact(async (conn, handler) => {
      const out = await collecting(conn, handler);
      announcements = out.announcements;
      return out.value;
    });
    for (const what of announcements) announce(what);
    return value;
  }
  /** `busy` with a wait that grows with the line for connections: a second per pool's worth waiting, 1 to 30. */
  const busy = () => {
    const seconds = Math.min(30, Math.max(1, Math.ceil(pool.state().waitingClients / bound.size)));
    return new AppError('busy', `The database is crowded and your write was not made. Send the same call again in ${seconds} s; with the same idempotency_key it is made once.`, {
      retry_after_seconds: seconds,
      retryAfterSeconds: seconds,
    });
  };
  /**
   * Runs `start` (which calls `enter` once it holds a connection), or answers `busy` when it has not
   * entered within the bound; `enter` then throws, so what was turned away never runs.
   */
  function bounded<T>(start: (enter: () => void) => Promise<T>): Promise<T> {
    let entered = false;
    let turnedAway = false;
    const done = start(() => {
      if (turnedAway) throw new TurnedAway();
      entered = true;
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (entered) return;
        turnedAway = true;
        reject(busy());
      }, bound.writeWaitMs);
      done.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (!turnedAway) reject(lockTimedOut(error) ? busy() : error);
        },
      );
    });
  }
  /** `handler` on a connection of the pool, once `enter` let it in. */
  const onConnection = <T>(enter: () => void, handler: (conn: CommonQueryMethods) => Promise<T>) =>
    pool.connect(async (conn) => {
      enter();
      return handler(conn);
    });
  /**
   * `handler` on a connection of the pool taken at its first statement (turned away as busy as
   * `bounded` has it) and held until it is done: reads that find all they need kept (a warm edit's
   * look at its pad and limits) take none, and a pool connection costs ~50 µs of the process's time
   * even for no statement.
   */
  async function onFirstStatement<T>(handler: (conn: CommonQueryMethods) => Promise<T>): Promise<T> {
    let taken: Promise<CommonQueryMethods> | undefined;
    let finished = false;
    let release = () => {};
    const take = () =>
      (taken ??= new Promise<CommonQueryMethods>((resolve, reject) => {
        bounded((enter) =>
          onConnection(enter, (conn) =>
            new Promise<void>((done) => {
              // Granted after the handler gave up (a statement of it failed first): given back at once.
              if (finished) return done();
              release = done;
              resolve(conn);
            }),
          ),
        ).catch(reject);
      }));
    const methods = ['any', 'anyFirst', 'exists', 'many', 'manyFirst', 'maybeOne', 'maybeOneFirst', 'one', 'oneFirst', 'query', 'record', 'stream', 'transaction'] as const;
    const conn = Object.fromEntries(
      methods.map((method) => [method, (...args: unknown[]) => take().then((held) => (held[method] as (...a: unknown[]) => unknown)(...args))]),
    ) as unknown as CommonQueryMethods;
    try {
      return await handler(conn);
    } finally {
      finished = true;
      release();
    }
  }
  return {
    pool,
    kind,
    write: (handler) => tracked(() => announcing((collect) => pool.transaction((tx) => collect(tx, handler)))),
    // A connection of its own per write (the pool's methods, which need no `this`), for its announcements.
    writeStatement: (handler) => tracked(() => announcing((collect) => collect({ ...pool }, handler))),
    writeOrBusy: (handler) =>
      bounded((enter) =>
        tracked(() =>
          announcing((collect) => pool.transaction(async (tx) => {
            enter();
            // On Postgres a write held up by another's lock past the same bound fails (every session's
            // lock_timeout, `withLockTimeout`) and is turned away; the embedded store has one session,
            // so no other holds a lock there.
            return collect(tx, handler);
          })),
        ),
      ),
    statementOrBusy: (handler) => bounded((enter) => tracked(() => announcing((collect) => onConnection(enter, (conn) => collect(conn, handler))))),
    readOrBusy: onFirstStatement,
    oldestWriteMs() {
      let oldest = Infinity;
      for (const at of started.values()) oldest = Math.min(oldest, at);
      return oldest === Infinity ? 0 : Math.round(performance.now() - oldest);
    },
    watchChanges(listener) {
      listeners.push(listener);
      listener.hearing(hearing);
    },
    announce,
    async close() {
      if (closed) return;
      closed = true;
      await feed?.close();
      await end();
    },
  };
}
