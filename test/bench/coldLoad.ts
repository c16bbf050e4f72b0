import * as Y from 'yjs';
import { sql } from 'slonik';
import { z } from 'zod';
import { readBlocks } from '../../sync/blocks.ts';
import { loadInto, tailSize } from '../../sync/store.ts';
import { registerAgent, startTestServer, type TestServer } from '../support/server.ts';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { makePad, restOk } from './setup.ts';
import { bytes, int, ms, progress, prng, summarize, table, verdict, type Summary } from './stats.ts';

export type ColdLoadFigures = {
  rowsAppended: number;
  chars: number;
  typingSeconds: number;
  table: { tailRows: number; tailBytes: number; snapshotBytes: number | null; foldedIntoSnapshot: number };
  first: number;
  load: Summary;
};

type Options = { transactions: number; runs: number; targetP50: number };

const PARAGRAPHS = 100;
const TARGET_CHARS = 60_000;
const WORDS = 'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their can has more'.split(' ');

/**
 * A 60,000-character pad typed in many small transactions, each stored by the server's own
 * persistence as one log row (compacting as it goes), then timed the way the server opens a pad
 * cold: `loadInto(db, padId, new Y.Doc())`. The server runs in this process, which reads its store.
 */
export function coldLoad(options: Options): Benchmark {
  return perStore(
    'cold load',
    async ({ store, label }) => {
      const server = await startTestServer(store, { LOG_LEVEL: 'silent' });
      try {
        progress(`${label}: cold load, typing ${int(options.transactions)} transactions`);
        const figures = await measure(server, options);
        progress(`${label}: cold load p50 ${ms(figures.load.p50)}, max ${ms(figures.load.max)}`);
        return figures;
      } finally {
        await server.close();
      }
    },
    (results) => report(results, options),
  );
}

/** A pad typed for a long time, as `typeLongPad` leaves it, with its hub and the key of the agent who typed it. */
export type LongPad = { padId: string; text: string; rowsAppended: number; typingSeconds: number; hubSlug: string; key: string };

/**
 * A pad of 100 paragraphs (in a new hub of a new agent) typed to about 60,000 characters in
 * `transactions` small transactions through a direct connection, each stored by the server's own
 * persistence as one log row (compacting as it goes). With `sitting` (Postgres only), the pad is
 * unloaded and opened again after every `sitting` transactions, as a pad edited now and then is:
 * each sitting a cold open of what the ones before stored. Deterministic: every run types the same pad.
 */
export async function typeLongPad(server: TestServer, transactions: number, sitting = Infinity): Promise<LongPad> {
  const agent = await registerAgent(server, 'Bench typist');
  const hub = await restOk(server, agent.key, 'create_hub', { name: 'Bench cold load' });
  const start = Array.from({ length: PARAGRAPHS }, (_, i) => `Paragraph ${i + 1}.`).join('\n\n');
  const { padId } = await makePad(server, agent.key, hub.slug, 'Typed for a long time', start);

  // The instance that made the pad through the API keeps it loaded for a minute after (liveDocs.ts):
  // sittings are typed on a second instance on the same database, where each one opens it cold.
  const typist = Number.isFinite(sitting) ? await startTestServer('postgres', { DATABASE_URL: server.core.config.databaseUrl!, LOG_LEVEL: 'silent' }) : server;
  let updates = 0;
  const count = () => {
    updates++;
  };
  const open = async () => {
    const opened = await typist.core.sync.hocuspocus.openDirectConnection(padId, {});
    opened.document!.on('update', count);
    return { direct: opened, fragment: opened.document!.getXmlFragment('default') };
  };
  let { direct, fragment } = await open();

  // Typing: a cursor in one paragraph inserts a few characters per transaction (the server batches
  // keystrokes into ~100 ms updates, so a row is a short burst), backspaces now and then, and
  // jumps to another paragraph every so often.
  const random = prng(20_240_601);
  const paragraph = (index: number) => (fragment.get(index) as Y.XmlElement).get(0) as Y.XmlText;
  let cursor = { index: 0, offset: paragraph(0).length };
  let chars = readBlocks(fragment).map((b) => b.text).join('\n\n').length;
  let stream = '';
  const nextChars = (n: number) => {
    while (stream.length < n) stream += `${WORDS[Math.floor(random() * WORDS.length)]} `;
    const out = stream.slice(0, n);
    stream = stream.slice(n);
    return out;
  };
  const started = performance.now();
  for (let i = 0; i < transactions; i++) {
    const remaining = transactions - i;
    if (i > 0 && i % sitting === 0) {
      await typist.core.sync.flush();
      await direct.disconnect();
      ({ direct, fragment } = await open());
    }
    if (random() < 0.04) {
      const index = Math.floor(random() * PARAGRAPHS);
      cursor = { index, offset: Math.floor(random() * (paragraph(index).length + 1)) };
    }
    const text = paragraph(cursor.index);
    if (random() < 0.1 && cursor.offset >= 2) {
      await direct.transact(() => text.delete(cursor.offset - 2, 2));
      cursor.offset -= 2;
      chars -= 2;
    } else {
      const need = (TARGET_CHARS - chars + remaining * 0.2) / (remaining * 0.9);
      const length = Math.max(1, Math.min(24, Math.round(need + (random() - 0.5) * 4)));
      await direct.transact(() => text.insert(cursor.offset, nextChars(length)));
      cursor.offset += length;
      chars += length;
    }
    // Each transaction becomes its own row through the server's persistence (append, then compact
    // past 500 updates or 1 MiB), exactly as a ~100 ms batch of live typing does.
    await typist.core.sync.flush();
    if ((i + 1) % 1000 === 0) progress(`  typed ${i + 1}/${transactions} transactions`);
  }
  direct.document!.off('update', count);
  await typist.core.sync.flush();
  const typingSeconds = (performance.now() - started) / 1000;
  const text = readBlocks(fragment).map((b) => b.text).join('\n\n');
  await direct.disconnect({ unloadImmediately: false });
  if (typist !== server) await typist.close();
  // create_pad's own row plus one per transaction.
  return { padId, text, rowsAppended: 1 + updates, typingSeconds, hubSlug: hub.slug, key: agent.key };
}

async function measure(server: TestServer, options: Options): Promise<ColdLoadFigures> {
  const { db } = server.core;
  const { padId, text: liveText, rowsAppended, typingSeconds } = await typeLongPad(server, options.transactions);

  const tail = await tailSize(db.pool, padId);
  const snapshot = await db.pool.maybeOne(sql.type(z.object({ size: z.number(), upto: z.number() }))`
    SELECT length(state)::int8 AS size, upto FROM pad_snapshots WHERE pad_id = ${padId}`);
  // Cold loads, as onLoadDocument does them.
  const loads: number[] = [];
  let first = NaN;
  for (let run = 0; run < options.runs; run++) {
    const doc = new Y.Doc();
    const t0 = performance.now();
    await loadInto(db, padId, doc);
    const dt = performance.now() - t0;
    if (run === 0) {
      first = dt;
      const loaded = readBlocks(doc.getXmlFragment('default')).map((b) => b.text).join('\n\n');
      if (loaded !== liveText) throw new Error('the loaded pad differs from the live one');
    }
    loads.push(dt);
    doc.destroy();
  }

  return {
    rowsAppended,
    chars: liveText.length,
    typingSeconds,
    table: { tailRows: tail.n, tailBytes: tail.bytes, snapshotBytes: snapshot?.size ?? null, foldedIntoSnapshot: rowsAppended - tail.n },
    first,
    load: summarize(loads),
  };
}

function report(results: Measured<ColdLoadFigures>[], options: Options): string {
  return [
    `## 2. Cold load of a 60,000-character pad with ${int(options.transactions)} stored updates`,
    '',
    `A pad of 100 paragraphs is typed into through a direct connection in ${int(options.transactions)} small transactions (a cursor inserting a few characters, a 2-character backspace about one time in ten, a jump to another paragraph about one time in 25), and after each one \`sync.flush()\` makes the server's persistence store it as its own log row, compacting as it does in production (past 500 rows or 1 MiB). After a final flush, \`loadInto(db, padId, new Y.Doc())\` (what \`onLoadDocument\` runs on a cold open) is timed ${options.runs} times; the first run is shown on its own. The loaded text is checked against the live pad. The server runs in the benchmark's process (\`startTestServer\`), which reads its store directly.`,
    '',
    table(
      ['Store', 'Characters', 'Rows appended', 'Table held', 'First load', 'p50', 'max', 'Target', 'Result'],
      results.map(({ target, figures: f }) => {
        const held = `snapshot ${f.table.snapshotBytes === null ? 'none' : bytes(f.table.snapshotBytes)} (${int(f.table.foldedIntoSnapshot)} updates folded) + tail of ${int(f.table.tailRows)} rows (${bytes(f.table.tailBytes)})`;
        const worst = Math.max(f.load.max, f.first);
        const result = `${verdict(f.load.p50, options.targetP50)} (p50)${worst > options.targetP50 ? `; slowest run over, ${ms(worst)}` : '; every run within'}`;
        return [target.label, int(f.chars), int(f.rowsAppended), held, ms(f.first), ms(f.load.p50), ms(f.load.max), `<= ${options.targetP50} ms`, result];
      }),
    ),
    '',
    `Typing the ${int(options.transactions)} transactions through the server's persistence took ${results.map(({ target, figures }) => `${figures.typingSeconds.toFixed(1)} s on ${target.label}`).join(', ')}.`,
    '',
  ].join('\n');
}
