/**
 * The WAL one database wrote between two LSNs of a shared Postgres server. `pg_current_wal_lsn()` is
 * the whole cluster's: on a server other work uses (tests make and drop databases beside the
 * benchmark), its difference holds that work too. `pg_waldump` over the same range names the
 * relation of every block a record touches and the transaction that wrote it, so the records of
 * this database are counted apart: those touching its relations, and every record of a transaction
 * that touched them (its commit among them). Cluster-wide records (checkpoints, running-transaction
 * snapshots) belong to no database and are left out.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type pg from 'pg';

export type WalRecords = { bytes: number; records: number; byRelation: Map<string, number> };

/** Where `pg_waldump` and the WAL files are, or why they cannot be read from here. */
export async function walSource(client: pg.Client): Promise<{ waldump: string; walDir: string } | { reason: string }> {
  try {
    const { rows } = await client.query<{ bindir: string; datadir: string }>(
      `SELECT (SELECT setting FROM pg_config WHERE name = 'BINDIR') AS bindir, current_setting('data_directory') AS datadir`,
    );
    return { waldump: `${rows[0]!.bindir}/pg_waldump`, walDir: `${rows[0]!.datadir}/pg_wal` };
  } catch (error) {
    return { reason: (error as Error).message };
  }
}

const RECORD = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+), lsn: \S+, prev \S+, desc: (\S+)(.*)$/;
const BLOCK = /rel (\d+)\/(\d+)\/(\d+)/g;

/**
 * This database's records between `start` and `end`, with each record's length rounded up to the
 * 8 bytes it takes in the log (page headers, 24 bytes a page, are left out). `relationName` names a
 * relfilenode of this database; records without a block are named by their kind (a commit).
 */
export async function databaseWal(
  source: { waldump: string; walDir: string },
  range: { start: string; end: string; databaseOid: number },
  relationName: (relfilenode: number) => string,
): Promise<WalRecords> {
  const child = spawn(source.waldump, ['--path', source.walDir, '--start', range.start, '--end', range.end], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve, reject) => {
    child.once('close', resolve);
    child.once('error', reject);
  });
  type Parsed = { length: number; tx: number; name: string; ours: boolean };
  const parsed: Parsed[] = [];
  const ourTransactions = new Set<number>();
  for await (const line of createInterface({ input: child.stdout })) {
    const match = RECORD.exec(line);
    if (!match) continue;
    const [, rmgr, total, tx, kind, rest] = match;
    let ours = false;
    let name = `${rmgr} ${kind}`;
    for (const block of rest!.matchAll(BLOCK)) {
      if (Number(block[2]) !== range.databaseOid) continue;
      ours = true;
      name = relationName(Number(block[3]));
    }
    const record = { length: Math.ceil(Number(total) / 8) * 8, tx: Number(tx), name, ours };
    if (ours && record.tx !== 0) ourTransactions.add(record.tx);
    parsed.push(record);
  }
  const code = await closed;
  if (!parsed.length) throw new Error(`pg_waldump read nothing (exit ${code}): ${stderr.trim()}`);
  const byRelation = new Map<string, number>();
  let bytes = 0;
  let records = 0;
  for (const record of parsed) {
    if (!record.ours && !ourTransactions.has(record.tx)) continue;
    bytes += record.length;
    records++;
    byRelation.set(record.name, (byRelation.get(record.name) ?? 0) + record.length);
  }
  return { bytes, records, byRelation };
}
