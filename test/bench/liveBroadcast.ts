import { readFileSync } from 'node:fs';
import pg from 'pg';
import * as Y from 'yjs';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { startBaseline } from './readSetup.ts';
import { connectProvider, freshDatabase, startServerProcess, type ServerProcess } from './setup.ts';
import { spreadEditors } from './spread.ts';
import { int, ms, progress, summarize, table, verdict, type Summary } from './stats.ts';

export type Options = {
  /** Live editors in all, `perPad` to a pad. */
  editors: number;
  perPad: number;
  /** Keystrokes a second over all pads together, each pad's from one of its editors. */
  rate: number;
  warmupSeconds: number;
  seconds: number;
  /** Editors connecting at once. */
  connecting: number;
  /** p99 of a keystroke's delivery and of a connection, at most this many times bare Hocuspocus'. */
  targetRatio: number;
};

/** One server's run: keystroke delivery, connection times, and its process's CPU time per keystroke and per connection. */
export type Run = { delivery: Summary; connect: Summary; missed: number; cpuPerKeystroke: number; cpuPerConnection: number; keystrokes: number; transactionsPerKeystroke: number | null };
type Figures = { ours: Run; bare: Run };

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');

type Editor = Awaited<ReturnType<typeof connectProvider>>;
/** A pad's editors (the first types) and the keystrokes sent so far: the typist's clock after each, and when it was made. */
export type Pad = { padId: string; editors: Editor[]; sent: { clock: number; at: number; measured: boolean }[]; typed: number };

/** CPU time (user + system) a process has used, in ms, from /proc (Linux's clock ticks are 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Live broadcast: `editors` Node providers, `perPad` to a pad, on the real server in a process of its
 * own, one editor of each pad typing; beside bare Hocuspocus (its own `Server`, no extension) in
 * another process, with the same pads' state, the same editors and the same typing, in the same run.
 */
export function liveBroadcast(options: Options): Benchmark {
  return perStore(
    'live broadcast: editors over pads',
    async ({ store, label }) => {
      const database = await freshDatabase(store);
      const stats = database.env.DATABASE_URL ? new pg.Client({ connectionString: database.env.DATABASE_URL }) : null;
      try {
        await stats?.connect();
        const server = await startServerProcess(database.env);
        try {
          return await measure(server, label, options, stats);
        } finally {
          await server.close();
        }
      } finally {
        await stats?.end();
        await database.drop();
      }
    },
    (results) => report(results, options),
  );
}

/**
 * Transactions committed in the server's Postgres database so far (each statement outside a
 * transaction is one). Backends report them within about a second while busy, so over a stretch of
 * steady load the difference of two readings is the count, give or take a second's worth at each end.
 */
async function committed(stats: pg.Client): Promise<number> {
  const { rows } = await stats.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0]!.n);
}

async function measure(server: ServerProcess, label: string, options: Options, stats: pg.Client | null): Promise<Figures> {
  const padCount = Math.ceil(options.editors / options.perPad);
  progress(`${label}: live broadcast, seeding ${padCount} pads (an agent each)`);
  // Each pad is its own agent's: its editors connect with that key, and only one of them types, so
  // no participant's daily pad text (3,000,000 characters) comes near its limit.
  const world = await spreadEditors(server, padCount, 'Live broadcast', PAD_TEXT);
  const keys = new Map(world.pads.map((pad) => [pad.padId, pad.agent.key]));

  const onOurs = () => broadcastRun(server, keys, () => cpuMs(server.pid), label, options, stats);
  const first = await onOurs();
  const states: Record<string, string> = {};
  for (const pad of first.pads) states[pad.padId] = Buffer.from(pad.state).toString('base64');
  const bare = await startBaseline({ kind: 'relay', states });
  try {
    // In the order ours, bare, bare, ours: neither comes after the other more often (what one run
    // leaves to the benchmark's process, its closed providers to collect, falls on both alike).
    const onBare = () => broadcastRun(bare, keys, () => cpuMs(bare.pid), `${label} bare`, options, null);
    const bareRuns = [(await onBare()).raw, (await onBare()).raw];
    return { ours: figuresOf([first.raw, (await onOurs()).raw]), bare: figuresOf(bareRuns) };
  } finally {
    await bare.close();
  }
}

/** One run's samples and counts, before they are put together with another's. */
export type Raw = { delivery: number[]; connect: number[]; missed: number; cpuTyping: number; cpuConnecting: number; keystrokes: number; transactions: number | null };

export function figuresOf(runs: Raw[]): Run {
  const sum = (of: (raw: Raw) => number) => runs.reduce((total, raw) => total + of(raw), 0);
  const keystrokes = sum((raw) => raw.keystrokes);
  const connections = sum((raw) => raw.connect.length);
  const transactions = runs.every((raw) => raw.transactions !== null) ? sum((raw) => raw.transactions!) : null;
  return {
    delivery: summarize(runs.flatMap((raw) => raw.delivery)),
    connect: summarize(runs.flatMap((raw) => raw.connect)),
    missed: sum((raw) => raw.missed),
    cpuPerKeystroke: sum((raw) => raw.cpuTyping) / keystrokes,
    cpuPerConnection: sum((raw) => raw.cpuConnecting) / connections,
    keystrokes,
    transactionsPerKeystroke: transactions === null ? null : transactions / keystrokes,
  };
}

/** A pad's editors, connected `connecting` at once, each timed until its first sync. */
export async function connectEditors(server: { url: string }, keys: Map<string, string>, perPad: number, connecting: number) {
  const pads: Pad[] = [...keys.keys()].map((padId) => ({ padId, editors: [], sent: [], typed: 0 }));
  const slots = pads.flatMap((pad) => Array.from({ length: perPad }, () => pad));
  const connectTimes: number[] = [];
  let next = 0;
  const close = () => {
    for (const pad of pads) for (const editor of pad.editors) editor.close();
  };
  try {
    await Promise.all(
      Array.from({ length: connecting }, async () => {
        while (next < slots.length) {
          const pad = slots[next++]!;
          const started = performance.now();
          pad.editors.push(await connectProvider(server, keys.get(pad.padId)!, pad.padId));
          connectTimes.push(performance.now() - started);
        }
      }),
    );
  } catch (error) {
    close();
    throw error;
  }
  return { pads, connectTimes, close };
}

/** A keystroke delivered: when it was typed (`performance.now()`), and how long until one other editor of its pad had it. */
export type Delivery = { at: number; ms: number };

/**
 * Types `rate` keystrokes a second over all `pads` together for warm-up and measured seconds, one
 * editor of each pad typing, and times each measured keystroke until every other editor of its pad
 * has it; `onMeasured` is called as the measured stretch begins. Whatever has not arrived 5 s after
 * the typing ends is counted as missed.
 */
export async function typeAndTime(pads: Pad[], options: { rate: number; warmupSeconds: number; seconds: number }, label: string, onMeasured?: () => void) {
  const delivery: Delivery[] = [];
  const others = pads[0]!.editors.length - 1;
  for (const pad of pads) {
    const typist = pad.editors[0]!.doc;
    for (const editor of pad.editors.slice(1)) {
      let seen = 0;
      editor.doc.on('update', () => {
        const now = performance.now();
        const has = Y.getState(editor.doc.store, typist.clientID);
        while (seen < pad.sent.length && pad.sent[seen]!.clock <= has) {
          const keystroke = pad.sent[seen++]!;
          if (keystroke.measured) delivery.push({ at: keystroke.at, ms: now - keystroke.at });
        }
      });
    }
  }

  /** One character typed at the end of the next paragraph of the pad, through the Y types as an editor types. */
  const type = (pad: Pad, measured: boolean) => {
    const doc = pad.editors[0]!.doc;
    const paragraph = doc.getXmlFragment('default').get(pad.typed++ % 8) as Y.XmlElement;
    const text = paragraph.get(0) as Y.XmlText;
    const at = performance.now();
    text.insert(text.length, 'abcdefghijklmnopqrstuvwxyz'[pad.typed % 26]!);
    pad.sent.push({ clock: Y.getState(doc.store, doc.clientID), at, measured });
  };

  const total = options.warmupSeconds + options.seconds;
  progress(`  ${label}: typing ${options.rate}/s for ${total} s`);
  let sent = 0;
  let measuredSent = 0;
  let measuring = false;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const measured = elapsed >= options.warmupSeconds;
      if (measured && !measuring) {
        measuring = true;
        onMeasured?.();
      }
      const due = Math.min(total, elapsed) * options.rate;
      for (; sent < due; sent++) {
        type(pads[sent % pads.length]!, measured);
        if (measured) measuredSent++;
      }
      if (elapsed >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 5);
  });
  const expected = measuredSent * others;
  for (let waited = 0; delivery.length < expected && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  return { delivery, keystrokes: measuredSent, missed: expected - delivery.length };
}

/**
 * Connects every editor (`connecting` at once, each timed until its first sync), then types for
 * warm-up and measured seconds and times each keystroke until every other editor of its pad has it.
 * `cpu` reads the server's CPU time so far, in ms.
 */
export async function broadcastRun(server: { url: string }, keys: Map<string, string>, cpu: () => number, label: string, options: Omit<Options, 'editors' | 'targetRatio'>, stats: pg.Client | null) {
  const cpuBeforeConnect = cpu();
  const { pads, connectTimes, close } = await connectEditors(server, keys, options.perPad, options.connecting);
  try {
    const cpuConnect = cpu() - cpuBeforeConnect;
    // Every pad's state as its editors have it, before any typing: the bare server starts from it.
    const withStates = pads.map((pad) => ({ padId: pad.padId, state: Y.encodeStateAsUpdate(pad.editors[0]!.doc) }));
    progress(`  ${label}: connected (p99 ${ms(summarize(connectTimes).p99)})`);
    let cpuBeforeMeasured = 0;
    let transactionsBefore: Promise<number> | null = null;
    const typed = await typeAndTime(pads, options, label, () => {
      cpuBeforeMeasured = cpu();
      if (stats) transactionsBefore = committed(stats);
    });
    const cpuMeasured = cpu() - cpuBeforeMeasured;
    // Read once the deliveries are in, so that what a server running behind did for the typing is counted.
    const transactions = transactionsBefore && stats ? (await committed(stats)) - (await transactionsBefore) : null;
    const raw: Raw = { delivery: typed.delivery.map((d) => d.ms), connect: connectTimes, missed: typed.missed, cpuTyping: cpuMeasured, cpuConnecting: cpuConnect, keystrokes: typed.keystrokes, transactions };
    return { pads: withStates, raw };
  } finally {
    close();
  }
}

function report(results: Measured<Figures>[], options: Options): string {
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  const pads = Math.ceil(options.editors / options.perPad);
  return [
    `## 11. Live broadcast, ${int(options.editors)} editors over ${int(pads)} pads`,
    '',
    `The server runs in a process of its own; beside it, in another process, bare Hocuspocus (its own \`Server\`, no extension, each pad loaded from the state the editors had before typing: \`test/bench/baselines.ts\`). The same ${int(options.editors)} Node \`HocuspocusProvider\`s, each on a WebSocket of its own, ${options.perPad} to a pad, connect to one or the other, ${options.connecting} at a time, in four runs (Dotpad, bare, bare, Dotpad: neither comes after the other more often), each run's providers closed before the next; a connection's time runs from creating its provider until its first sync. Each pad is its own agent's, and its editors connect with that agent's key. One editor of each pad types, one character at a time at the end of a paragraph (the next paragraph each time), ${int(options.rate)} keystrokes a second over all pads together, spread evenly; a keystroke's delivery runs from just before the typist's change until each other editor of the pad has it (the typist's clock in the editor's state vector), so each keystroke gives ${options.perPad - 1} samples. Each run types ${options.warmupSeconds} s for warm-up, then ${options.seconds} s measured; the figures are both runs' together. The target: each p99 at most ${options.targetRatio}x bare Hocuspocus' in the same run. CPU time is the server process's (user + system, from /proc, 10 ms ticks), over the measured typing per keystroke and over the connecting per connection; on Postgres, the transactions its database committed over the measured typing (\`pg_stat_database\`; a statement outside a transaction is one) per keystroke.`,
    '',
    table(
      ['Store', 'Server', 'Deliveries', 'Missed', 'Delivery p50', 'p99', 'max', 'Connect p50', 'p99', 'CPU per keystroke', 'CPU per connection', 'Transactions per keystroke'],
      results.flatMap(({ target, figures }) =>
        (['ours', 'bare'] as const).map((which) => {
          const f = figures[which];
          return [target.label, which === 'ours' ? 'Dotpad' : 'bare Hocuspocus', int(f.delivery.n), int(f.missed), ms(f.delivery.p50), ms(f.delivery.p99), ms(f.delivery.max), ms(f.connect.p50), ms(f.connect.p99), ms(f.cpuPerKeystroke), ms(f.cpuPerConnection), f.transactionsPerKeystroke === null ? '-' : f.transactionsPerKeystroke.toFixed(2)];
        }),
      ),
    ),
    '',
    table(
      ['Store', 'Delivery p99 ratio', 'Target', 'Result', 'Connect p99 ratio', 'Target', 'Result'],
      results.map(({ target, figures: { ours, bare } }) => [
        target.label,
        ratio(ours.delivery.p99, bare.delivery.p99),
        `<= ${options.targetRatio}x`,
        verdict(ours.delivery.p99, options.targetRatio * bare.delivery.p99),
        ratio(ours.connect.p99, bare.connect.p99),
        `<= ${options.targetRatio}x`,
        verdict(ours.connect.p99, options.targetRatio * bare.connect.p99),
      ]),
    ),
    '',
  ].join('\n');
}
