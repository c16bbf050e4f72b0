import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import * as Y from 'yjs';
import { openProvider, type Reachable } from '../support/server.ts';
import type { Benchmark } from './benchmark.ts';
import { loadInto } from '../../sync/store.ts';
import { typeLongPad } from './coldLoad.ts';
import { probe, whenUnloaded } from './probes.ts';
import { startBaseline } from './readSetup.ts';
import { seededServer } from './seeded.ts';
import { makePad } from './setup.ts';
import { int, ms, progress, prng, summarize, table, verdict, type Summary } from './stats.ts';

type Options = { transactions: number; runs: number; targetRatio: number };

/** Stored updates per sitting of the large pad: it is unloaded and opened again after each, as a pad edited now and then is. */
const SITTING = 20;

/** A side of the comparison: where a provider connects, and the process to probe there. */
type Side = { name: 'dotpad' | 'bare'; server: Reachable; process: ChildProcess };
type Pad = { name: 'small' | 'large'; padId: string; text: string };

/** One pad on one side: the opens after the first, the first (in a process that never held it), and the server's work per open. */
type Opens = { first: number; open: Summary; statements: Summary; cpu: Summary };
/** What the pad log of the large pad held: rows after the snapshot, and whether there is one. */
type Held = { tailRows: number; snapshot: boolean };
export type ColdOpenFigures = { pads: { pad: Pad['name']; chars: number; dotpad: Opens; bare: Opens }[]; rowsAppended: number; seeded: Held; after: Held };

const SMALL_TEXT = [
  'A short pad: the notes of one meeting, a few paragraphs long.',
  'We agreed to measure first, then to change what the numbers point at, and to keep every suite green.',
  'Open questions: who reads the figures, and how often the benchmark runs on the shared machine.',
  'Next steps are in the thread.',
].join('\n\n');

/**
 * A pad opened cold (not loaded on the server) by a Node `HocuspocusProvider`, until it is synced with
 * the whole text: Dotpad's server beside a bare Hocuspocus server on the same database, each in a
 * process of its own. Postgres only: an embedded PGlite directory opens in one process at a time.
 */
export function coldOpen(options: Options): Benchmark {
  return {
    name: 'coldopen: cold open through a provider, beside bare Hocuspocus',
    async measure(targets) {
      if (!targets.some((t) => t.store === 'postgres')) return report(null, options);
      return report(await measure(options), options);
    },
  };
}

/** Opens `pad` on `side` once it is unloaded there: milliseconds until synced with the whole text, and the server's work meanwhile (statements, CPU milliseconds). */
async function openCold(side: Side, pad: Pad, key: string): Promise<{ ms: number; statements: number; cpu: number }> {
  await whenUnloaded(side.process, pad.padId);
  const before = await probe(side.process, { probe: 'work' });
  const t0 = performance.now();
  const editor = await openProvider(side.server, pad.padId, key);
  try {
    await Promise.race([
      editor.synced,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`${side.name}: the ${pad.name} pad did not sync within 10 s (${editor.denied() ?? 'not refused'})`)), 10_000).unref()),
    ]);
    const elapsed = performance.now() - t0;
    if (editor.text() !== pad.text) throw new Error(`${side.name}: the ${pad.name} pad synced with other text (${editor.text().length} characters, not ${pad.text.length})`);
    const after = await probe(side.process, { probe: 'work' });
    return { ms: elapsed, statements: after.statements - before.statements, cpu: (after.cpuMicros - before.cpuMicros) / 1000 };
  } finally {
    editor.close();
  }
}

async function padLogHeld(databaseUrl: string, padId: string): Promise<Held> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ tail: string; snapshot: boolean }>(
      'SELECT (SELECT count(*) FROM pad_updates WHERE pad_id = $1) AS tail, EXISTS (SELECT 1 FROM pad_snapshots WHERE pad_id = $1) AS snapshot',
      [padId],
    );
    return { tailRows: Number(rows[0]!.tail), snapshot: rows[0]!.snapshot };
  } finally {
    await client.end();
  }
}

async function measure(options: Options): Promise<ColdOpenFigures> {
  progress(`Postgres: cold open, typing ${int(options.transactions)} transactions into the large pad`);
  const world = await seededServer('postgres', {}, async (seed) => {
    const long = await typeLongPad(seed, options.transactions, SITTING);
    const small = await makePad(seed, long.key, long.hubSlug, 'A few paragraphs', SMALL_TEXT);
    const pads: Pad[] = [
      { name: 'small', padId: small.padId, text: (await seed.core.sync.read(small.padId)).map((b) => b.text).join('\n\n') },
      { name: 'large', padId: long.padId, text: long.text },
    ];
    // Each pad's whole state as stored, as bare Hocuspocus' Database extension would have kept it.
    const states: { name: string; state: string }[] = [];
    for (const { padId } of pads) {
      const doc = new Y.Doc();
      await loadInto(seed.core.db, padId, doc);
      states.push({ name: padId, state: Buffer.from(Y.encodeStateAsUpdate(doc)).toString('base64') });
      doc.destroy();
    }
    return { key: long.key, rowsAppended: long.rowsAppended, pads, states };
  });
  const held = () => padLogHeld(world.databaseUrl!, world.seeded.pads[1]!.padId);
  const seeded = await held();
  const baseline = await startBaseline({ kind: 'hocuspocus', databaseUrl: world.databaseUrl!, documents: world.seeded.states });
  try {
    const { key, pads } = world.seeded;
    const sides: Side[] = [
      { name: 'dotpad', server: world.server, process: world.server.process },
      { name: 'bare', server: baseline, process: baseline.process },
    ];
    const samples = new Map<string, { first: number; ms: number[]; statements: number[]; cpu: number[] }>();
    const at = (side: Side, pad: Pad) => samples.get(`${side.name} ${pad.name}`)!;
    // The first open of each pad on each side, in a process that has never held it.
    for (const side of sides) {
      for (const pad of pads) {
        const first = await openCold(side, pad, key);
        samples.set(`${side.name} ${pad.name}`, { first: first.ms, ms: [], statements: [], cpu: [] });
      }
    }
    // Then rounds in which each side opens each pad once, in an order drawn afresh (from a fixed seed).
    const random = prng(20261127);
    for (let round = 0; round < options.runs; round++) {
      const order = random() < 0.5 ? sides : [...sides].reverse();
      for (const pad of pads) {
        for (const side of order) {
          const open = await openCold(side, pad, key);
          at(side, pad).ms.push(open.ms);
          at(side, pad).statements.push(open.statements);
          at(side, pad).cpu.push(open.cpu);
        }
      }
      if ((round + 1) % 10 === 0) progress(`  round ${round + 1}/${options.runs}`);
    }
    const opens = (side: Side, pad: Pad): Opens => {
      const { first, ms: times, statements, cpu } = at(side, pad);
      return { first, open: summarize(times), statements: summarize(statements), cpu: summarize(cpu) };
    };
    const figures: ColdOpenFigures = {
      rowsAppended: world.seeded.rowsAppended,
      seeded,
      after: await held(),
      pads: pads.map((pad) => ({ pad: pad.name, chars: pad.text.length, dotpad: opens(sides[0]!, pad), bare: opens(sides[1]!, pad) })),
    };
    for (const p of figures.pads) progress(`Postgres: cold open of the ${p.pad} pad p50 ${ms(p.dotpad.open.p50)}, bare ${ms(p.bare.open.p50)} (${(p.dotpad.open.p50 / p.bare.open.p50).toFixed(2)}x)`);
    return figures;
  } finally {
    await baseline.close();
    await world.close();
  }
}

function report(figures: ColdOpenFigures | null, options: Options): string {
  const heading = `## 10. Cold open through a provider, beside bare Hocuspocus (Postgres)`;
  if (!figures) return [heading, '', 'Postgres did not answer, so nothing was measured.', ''].join('\n');
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  const held = (log: Held) => `${log.snapshot ? 'a snapshot and ' : 'no snapshot and '}${int(log.tailRows)} rows after it`;
  return [
    heading,
    '',
    `Two pads of one hub: a small one of four paragraphs, and a 60,000-character pad typed as in section 2 in ${int(options.transactions)} transactions, each stored by the server's persistence as its own log row (${int(figures.rowsAppended)} rows appended), in sittings of ${SITTING}: after each, the pad is unloaded and opened again, as a pad edited now and then is. They are seeded by a server in the benchmark's process, which then stops; the large pad's log then held ${held(figures.seeded)}, and after the runs ${held(figures.after)}. Dotpad's server is started in a process of its own on that database, and beside it, in another process, a bare Hocuspocus server (\`@hocuspocus/server\`'s \`Server\`) with a Database-style extension that keeps each document as Hocuspocus' Database extension does, its whole state in one row (written from the seeded pads into a table of its own in the same database), read in one query and applied as one update; any token is accepted (\`test/bench/baselines.ts\`). A Node \`HocuspocusProvider\` with a new WebSocket and the agent's key as token (\`openProvider\`) opens a pad that the server does not hold (checked by asking the server's process before each open); the time runs from creating the provider until it is synced, and the text it then holds is checked against the pad's. The provider is then closed and the pad unloads. "First" is the first open in a process that never held the pad; then ${options.runs} rounds each open both pads on both sides, the side that goes first drawn afresh every round. Each server process counts its work from just before the open until the provider is synced: the statements it sent (every \`pg\` query) and the CPU time it used (\`process.cpuUsage()\`, all its threads), figures that do not move with the load of the machine as times do.`,
    '',
    table(
      ['Pad', 'Characters', 'Dotpad first', 'p50', 'p99', 'Statements (p50)', 'CPU (p50)', 'Bare first', 'p50', 'p99', 'Statements (p50)', 'CPU (p50)', 'Ratio (p50)', 'Target', 'Result'],
      figures.pads.map((p) => [
        p.pad,
        int(p.chars),
        ms(p.dotpad.first),
        ms(p.dotpad.open.p50),
        ms(p.dotpad.open.p99),
        int(p.dotpad.statements.p50),
        ms(p.dotpad.cpu.p50),
        ms(p.bare.first),
        ms(p.bare.open.p50),
        ms(p.bare.open.p99),
        int(p.bare.statements.p50),
        ms(p.bare.cpu.p50),
        ratio(p.dotpad.open.p50, p.bare.open.p50),
        `<= ${options.targetRatio}x`,
        verdict(p.dotpad.open.p50 / p.bare.open.p50, options.targetRatio),
      ]),
    ),
    '',
    `The fixed cost of a new connection is the small pad's difference: ${ms(figures.pads[0]!.dotpad.open.p50 - figures.pads[0]!.bare.open.p50)} at the p50.`,
    '',
  ].join('\n');
}
