import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Logger } from './logger.ts';

const MigrationRow = z.object({ version: z.string() });

const migrationsDir = fileURLToPath(new URL('../../schema/migrations/', import.meta.url));

type Migration = { version: string; name: string; text: string };

/** `schema/migrations/NNNN_name.sql`, in order. */
export function listMigrations(): Migration[] {
  return readdirSync(migrationsDir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: file.slice(0, 4),
      name: file.slice(5, -4),
      text: readFileSync(migrationsDir + file, 'utf8'),
    }));
}

/**
 * Splits a migration into statements (slonik refuses several in one query): on semicolons outside
 * quotes, dollar-quoted bodies and comments.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    if (rest.startsWith('--')) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end + 1;
    } else if (rest.startsWith('/*')) {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (text[i] === "'" || text[i] === '"') {
      const end = text.indexOf(text[i]!, i + 1);
      i = end === -1 ? text.length : end + 1;
    } else if (/^\$[A-Za-z_]*\$/.test(rest)) {
      const tag = /^\$[A-Za-z_]*\$/.exec(rest)![0];
      const end = text.indexOf(tag, i + tag.length);
      i = end === -1 ? text.length : end + tag.length;
    } else if (text[i] === ';') {
      statements.push(text.slice(start, i));
      start = ++i;
    } else {
      i++;
    }
  }
  statements.push(text.slice(start));
  return statements.filter((statement) => statement.replace(/--[^\n]*/g, '').trim() !== '');
}

/** One statement from a file as a query: slonik only builds queries from templates, so make one. */
function rawQuery(text: string) {
  const strings = Object.assign([text], { raw: Object.freeze([text]) });
  return sql.unsafe(strings as unknown as TemplateStringsArray);
}

// Any constant works; it only keeps two instances from migrating at once.
const MIGRATION_LOCK = 727_001;

async function ensureLedger(pool: DatabasePool) {
  await pool.query(sql.unsafe`
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
}

/** Applies each pending migration in its own transaction, recording it in the same transaction. */
export async function applyMigrations(pool: DatabasePool, log: Logger): Promise<string[]> {
  await ensureLedger(pool);
  const applied: string[] = [];
  for (const migration of listMigrations()) {
    const done = await pool.transaction(async (tx) => {
      // Instances starting together wait their turn, and a migration may wait on a busy table, past
      // the sessions' lock_timeout (database.ts `withLockTimeout`).
      await tx.query(sql.unsafe`SELECT set_config('lock_timeout', '0', true)`);
      await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      const exists = await tx.exists(
        sql.type(MigrationRow)`SELECT version FROM schema_migrations WHERE version = ${migration.version}`,
      );
      if (exists) return false;
      for (const statement of splitStatements(migration.text)) await tx.query(rawQuery(statement));
      await tx.query(sql.unsafe`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`);
      return true;
    });
    if (done) {
      applied.push(migration.version);
      log.info('migration applied', { version: migration.version, name: migration.name });
    }
  }
  return applied;
}

/** How many known migrations this database has not had yet. */
export async function pendingMigrations(pool: DatabasePool): Promise<number> {
  const versions = await pool.anyFirst(
    sql.type(MigrationRow)`
      SELECT version FROM schema_migrations`,
  );
  const have = new Set(versions);
  return listMigrations().filter((migration) => !have.has(migration.version)).length;
}
