import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaValidationError, sql } from 'slonik';
import { z } from 'zod';
import { openDatabase, socketDirPrefix, type Db } from '../../server/db/database.ts';
import { createLogger } from '../../server/log.ts';
import { stores } from '../support/server.ts';

/** The database edge itself: what every query of the service goes through, on both stores. */
describe.each(stores())('the database edge on %s', (store) => {
  let db: Db;
  beforeAll(async () => {
    db = await openDatabase({
      dataDir: 'memory://',
      log: createLogger('silent'),
      ...(store === 'postgres' ? { databaseUrl: process.env.TEST_DATABASE_URL! } : {}),
    });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('checks every typed row against its schema, and refuses one that does not fit', async () => {
    const Row = z.object({ n: z.number(), label: z.string() });
    expect(await db.pool.one(sql.type(Row)`SELECT 2::int8 AS n, 'two' AS label`)).toEqual({ n: 2, label: 'two' });
    await expect(db.pool.one(sql.type(Row)`SELECT 'two' AS n, 2 AS label`)).rejects.toBeInstanceOf(SchemaValidationError);
  });

  it('runs a prepared statement again and again on its connection', async () => {
    const squared = (n: number) => db.pool.oneFirst(sql.prepared('dotpad_test_square', z.object({ square: z.number() }))`SELECT ${n}::int * ${n}::int AS square`);
    const answers = [];
    for (let n = 1; n <= 8; n++) answers.push(await squared(n));
    expect(answers).toEqual([1, 4, 9, 16, 25, 36, 49, 64]);
  });
});

describe.skipIf(process.platform === 'win32')("the embedded store's socket directory", () => {
  it('is removed when its server is gone without removing it, and only then', async () => {
    const make = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
    // A process that has exited: its directory was left behind, as by a server killed with SIGKILL.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const stale = make(socketDirPrefix(gone));
    const live = make(socketDirPrefix(process.pid));
    const otherHost = make(`dotpad-db-00000000-${gone}-`);
    const unnamed = make('dotpad-db-');
    const db = await openDatabase({ dataDir: 'memory://', log: createLogger('silent') });
    try {
      expect(existsSync(stale)).toBe(false);
      for (const kept of [live, otherHost, unnamed]) expect(existsSync(kept)).toBe(true);
      expect(await db.pool.oneFirst(sql.type(z.object({ one: z.number() }))`SELECT 1 AS one`)).toBe(1);
    } finally {
      await db.close();
      for (const dir of [live, otherHost, unnamed]) rmSync(dir, { recursive: true, force: true });
    }
  });
});
