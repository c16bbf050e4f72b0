import * as Y from 'yjs';
import { sql } from 'slonik';
import { z } from 'zod';
import { readBlocks } from '../../sync/blocks.ts';
import { applyPadLog } from '../../sync/padLog.ts';
import { appendUpdate, loadInto, readPadLog, tailSize } from '../../sync/store.ts';
import { registerAgent, type TestServer } from '../support/server.ts';
import { makePad, restOk } from './setup.ts';
import { progress, prng, summarize, type Summary } from './stats.ts';

export type ColdLoadResult = {
  transactions: number;
  rowsAppended: number;
  chars: number;
  blocks: number;
  typingSeconds: number;
  table: { tailRows: number; tailBytes: number; snapshotBytes: number | null; foldedIntoSnapshot: number };
  runs: number;
  first: number;
  load: Summary;
  fetch: Summary;
  apply: Summary;
  /** For reference: the same history as 10,001 uncompacted log rows (what compaction saves). */
  uncompacted: { rows: number; bytes: number; load: Summary };
};

const PARAGRAPHS = 100;
const TARGET_CHARS = 60_000;
const WORDS = 'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their can has more'.split(' ');

/**
 * Measurement 3: a 60,000-character pad typed in 10,000 small transactions, each stored by the
 * server's own persistence as one log row (compacting as it goes), then timed the way the server
 * opens a pad cold: `loadInto(db, padId, new Y.Doc())`.
 */
export async function coldLoad(server: TestServer, options: { transactions: number; runs: number }): Promise<ColdLoadResult> {
  const { db } = server.core;
  const agent = await registerAgent(server, 'Bench typist');
  const hub = await restOk(server, agent.key, 'create_hub', { name: 'Bench cold load' });
  const start = Array.from({ length: PARAGRAPHS }, (_, i) => `Paragraph ${i + 1}.`).join('\n\n');
  const { padId } = await makePad(server, agent.key, hub.slug, 'Typed for a long time', start);
  const reference = await makePad(server, agent.key, hub.slug, 'Uncompacted reference', '');

  const direct = await server.core.sync.hocuspocus.openDirectConnection(padId, {});
  const live = direct.document!;
  const fragment = live.getXmlFragment('default');
  const initialState = Y.encodeStateAsUpdate(live);
  const captured: Uint8Array[] = [];
  const capture = (update: Uint8Array) => captured.push(update);
  live.on('update', capture);

  // Typing: a cursor in one paragraph inserts a few characters per transaction (the server batches
  // keystrokes into ~100 ms updates, so a row is a short burst), backspaces now and then, and
  // jumps to another paragraph every so often. Deterministic, so every run types the same pad.
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
  for (let i = 0; i < options.transactions; i++) {
    const remaining = options.transactions - i;
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
    await server.core.sync.flush();
    if ((i + 1) % 1000 === 0) progress(`  typed ${i + 1}/${options.transactions} transactions`);
  }
  live.off('update', capture);
  await server.core.sync.flush();
  const typingSeconds = (performance.now() - started) / 1000;
  const liveBlocks = readBlocks(fragment);
  const liveText = liveBlocks.map((b) => b.text).join('\n\n');
  await direct.disconnect({ unloadImmediately: false });

  const tail = await tailSize(db.pool, padId);
  const snapshot = await db.pool.maybeOne(sql.type(z.object({ size: z.number(), upto: z.number() }))`
    SELECT length(state)::int8 AS size, upto FROM pad_snapshots WHERE pad_id = ${padId}`);
  // create_pad's own row plus one per transaction.
  const rowsAppended = 1 + captured.length;

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

  // Where the time goes: the query, then applying the rows to a Y.Doc (loadInto's two halves).
  const fetches: number[] = [];
  const applies: number[] = [];
  for (let run = 0; run < options.runs; run++) {
    const f0 = performance.now();
    const log = await readPadLog(db.pool, padId);
    const a0 = performance.now();
    const doc = new Y.Doc();
    applyPadLog(doc, log);
    const a1 = performance.now();
    doc.destroy();
    fetches.push(a0 - f0);
    applies.push(a1 - a0);
  }

  // Reference: the same history as a log nobody compacted (written straight to the table).
  progress('  writing the uncompacted reference log');
  const history = [initialState, ...captured];
  for (let i = 0; i < history.length; i += 500) {
    await db.write(async (tx) => {
      for (const update of history.slice(i, i + 500)) await appendUpdate(tx, reference.padId, update);
    });
  }
  const referenceTail = await tailSize(db.pool, reference.padId);
  const referenceLoads: number[] = [];
  for (let run = 0; run < Math.min(options.runs, 10); run++) {
    const doc = new Y.Doc();
    const t0 = performance.now();
    await loadInto(db, reference.padId, doc);
    referenceLoads.push(performance.now() - t0);
    if (run === 0 && readBlocks(doc.getXmlFragment('default')).map((b) => b.text).join('\n\n') !== liveText) {
      throw new Error('the uncompacted reference differs from the live pad');
    }
    doc.destroy();
  }

  return {
    transactions: options.transactions,
    rowsAppended,
    chars: liveText.length,
    blocks: liveBlocks.length,
    typingSeconds,
    table: { tailRows: tail.n, tailBytes: tail.bytes, snapshotBytes: snapshot?.size ?? null, foldedIntoSnapshot: rowsAppended - tail.n },
    runs: options.runs,
    first,
    load: summarize(loads),
    fetch: summarize(fetches),
    apply: summarize(applies),
    uncompacted: { rows: referenceTail.n, bytes: referenceTail.bytes, load: summarize(referenceLoads) },
  };
}
