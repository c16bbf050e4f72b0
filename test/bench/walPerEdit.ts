import pg from 'pg';
import type { Benchmark, StoreTarget } from './benchmark.ts';
import { freshDatabase, makePad, restOk, startServerProcess } from './setup.ts';
import { spreadEditors } from './spread.ts';
import type { BareEdit } from './serverProcess.ts';
import { bytes, int, progress, table, verdict } from './stats.ts';
import { databaseWal, walSource, type WalRecords } from './walRecords.ts';

type Options = { edits: number; warmup: number; targetBytes: number; editors: number };

/** One way of editing, measured: the cluster's LSN difference, and this database's own records when pg_waldump could read them. */
type WalFigures = { edits: number; clusterBytes: number; database: WalRecords | null };
type Figures = { editPad: WalFigures; bare: WalFigures; relationNote: string | null };

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');
/** The edited paragraph's new text: a word of an ordinary sentence changes each time. */
const revision = (i: number) => `Paragraph 4 of the benchmark pad, revised for the ${i + 1}th time, a sentence of ordinary length.`;

/**
 * WAL written per paragraph edit on Postgres: `edit_pad` through REST, beside the bare append of one
 * update (a direct connection's transaction and one INSERT of its update into the pad log).
 */
export function walPerEdit(options: Options): Benchmark {
  return {
    name: 'reads: WAL per paragraph edit',
    async measure(targets) {
      const postgres = targets.find((t) => t.store === 'postgres');
      if (!postgres) return report(null, options, 'Postgres did not answer, so nothing was measured.');
      return report(await measure(postgres, options), options);
    },
  };
}

async function measure({ label }: StoreTarget, options: Options): Promise<Figures> {
  const database = await freshDatabase('postgres');
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  try {
    const server = await startServerProcess(database.env);
    try {
      await client.connect();
      const oid = Number((await client.query<{ oid: string }>('SELECT oid FROM pg_database WHERE datname = current_database()')).rows[0]!.oid);
      const source = await walSource(client);
      // Spread over agents and pads as in the live edit benchmark: 60 writes a minute per participant and per pad.
      const world = await spreadEditors(server, options.editors, 'Edited through REST', PAD_TEXT);
      const pads: { key: string; padId: string; version: number; blockId: string }[] = [];
      for (const pad of world.pads) {
        const full = await restOk(server, pad.agent.key, 'open_pad', { pad_id: pad.padId, mode: 'full' });
        pads.push({ key: pad.agent.key, padId: pad.padId, version: pad.version, blockId: String(full.blocks[3]) });
      }
      const bare = await makePad(server, world.agents[0]!.key, world.hubSlug, 'Bare appends', PAD_TEXT);
      const editPad = async (i: number) => {
        const pad = pads[i % pads.length]!;
        const data = await restOk(server, pad.key, 'edit_pad', { pad_id: pad.padId, base_version: pad.version, edits: [{ block_id: pad.blockId, text: revision(i) }] });
        if (data.conflicts?.length || !(data.version > pad.version)) throw new Error(`edit_pad ${i} did not apply: ${JSON.stringify(data)}`);
        pad.version = data.version;
      };
      const bareEdit = async (i: number) => {
        const reply = await fetch(server.bareUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ padId: bare.padId, text: revision(i) } satisfies BareEdit) });
        if (reply.status !== 200) throw new Error(`the bare endpoint answered ${reply.status} ${await reply.text()}`);
      };
      const relations = async () => {
        const { rows } = await client.query<{ relfilenode: string; relname: string }>('SELECT relfilenode, relname FROM pg_class WHERE relfilenode <> 0');
        const names = new Map(rows.map((row) => [Number(row.relfilenode), row.relname]));
        return (relfilenode: number) => names.get(relfilenode) ?? `relation ${relfilenode}`;
      };
      progress(`${label}: WAL per edit, ${options.edits} edit_pad calls through REST and ${options.edits} bare appends`);
      let relationNote: string | null = null;
      const run = async (edit: (i: number) => Promise<void>): Promise<WalFigures> => {
        for (let i = 0; i < options.warmup; i++) await edit(i);
        const start = await lsn(client);
        for (let i = options.warmup; i < options.warmup + options.edits; i++) await edit(i);
        const end = await lsn(client);
        const clusterBytes = await lsnDiff(client, end, start);
        if ('reason' in source) {
          relationNote = `pg_waldump could not be found (${source.reason})`;
          return { edits: options.edits, clusterBytes, database: null };
        }
        try {
          return { edits: options.edits, clusterBytes, database: await databaseWal(source, { start, end, databaseOid: oid }, await relations()) };
        } catch (error) {
          relationNote = `pg_waldump could not read the WAL here (${(error as Error).message.split('\n')[0]})`;
          return { edits: options.edits, clusterBytes, database: null };
        }
      };
      const figures = { editPad: await run(editPad), bare: await run(bareEdit), relationNote };
      const perEdit = (f: WalFigures) => bytes(Math.round((f.database?.bytes ?? f.clusterBytes) / f.edits));
      progress(`${label}: WAL per edit_pad ${perEdit(figures.editPad)}, per bare append ${perEdit(figures.bare)}`);
      return figures;
    } finally {
      await server.close();
    }
  } finally {
    await client.end().catch(() => {});
    await database.drop();
  }
}

const lsn = async (client: pg.Client) => (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
const lsnDiff = async (client: pg.Client, end: string, start: string) =>
  Number((await client.query<{ n: string }>('SELECT pg_wal_lsn_diff($1, $2)::int8 AS n', [end, start])).rows[0]!.n);

function report(figures: Figures | null, options: Options, skipped?: string): string {
  const lines = [
    '## 5. WAL per paragraph edit (Postgres)',
    '',
    `Agents edit one paragraph of an 8-paragraph pad with \`edit_pad\` through REST against the current version, ${options.edits} times after ${options.warmup} unmeasured, spread over ${options.editors} agents of one person each editing a pad of its own (writes are limited to 60 a minute per participant and per pad), on the server in its own process and a fresh database; \`pg_current_wal_lsn()\` is read before and after. Beside it, the bare append: the server process's bare endpoint (\`test/bench/serverProcess.ts\`) replaces the paragraph's text through a direct connection and commits its one update to the pad log in one INSERT, as often. The LSN is the whole cluster's, so on a server shared with other work its difference holds that work too; the records of this database alone (those touching its relations, and every record of the transactions that did, commits included) are counted with \`pg_waldump\` over the same range (\`test/bench/walRecords.ts\`), and the target is taken on them.`,
    '',
  ];
  if (!figures) return [...lines, skipped ?? '', ''].join('\n');
  const database = (f: WalFigures) => (f.database ? bytes(Math.round(f.database.bytes / f.edits)) : 'n/a');
  const ownPerEdit = (f: WalFigures) => (f.database?.bytes ?? f.clusterBytes) / f.edits;
  lines.push(
    table(
      ['Edit', 'Edits', 'WAL per edit, this database', 'Records per edit', 'LSN difference per edit (whole cluster)', 'Target', 'Result'],
      [
        ['`edit_pad` through REST', int(figures.editPad.edits), database(figures.editPad), figures.editPad.database ? (figures.editPad.database.records / figures.editPad.edits).toFixed(1) : 'n/a', bytes(Math.round(figures.editPad.clusterBytes / figures.editPad.edits)), `<= ${bytes(options.targetBytes)}`, verdict(ownPerEdit(figures.editPad), options.targetBytes)],
        ['Bare append of the update', int(figures.bare.edits), database(figures.bare), figures.bare.database ? (figures.bare.database.records / figures.bare.edits).toFixed(1) : 'n/a', bytes(Math.round(figures.bare.clusterBytes / figures.bare.edits)), '(reference)', ''],
      ],
    ),
    '',
  );
  if (figures.editPad.database) {
    const perEdit = [...figures.editPad.database.byRelation].map(([name, n]) => [name, Math.round(n / figures.editPad.edits)] as const);
    const shown = perEdit.filter(([, n]) => n >= 1).sort((a, b) => b[1] - a[1]);
    const rest = perEdit.length - shown.length;
    lines.push(`Where an \`edit_pad\` call's WAL goes, per edit: ${shown.map(([name, n]) => `${name} ${bytes(n)}`).join(', ')}${rest ? `, and under a byte each in ${rest} more` : ''}.`, '');
  }
  if (figures.relationNote) lines.push(`Only the LSN difference was measured: ${figures.relationNote}; the target is taken on it.`, '');
  return lines.join('\n');
}
