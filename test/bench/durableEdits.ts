import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { onFreshServer, restOk, type ServerProcess } from './setup.ts';
import { rotating, spreadEditors } from './spread.ts';
import type { BareEdit } from './serverProcess.ts';
import { int, ms, progress, summarize, table, type Summary } from './stats.ts';

type Options = { writers: number; pads: number; agents: number; edits: number; warmup: number; target: number };

/** One way of writing, measured: edits a second over the whole stretch, and each call's time. */
type Rate = { perSecond: number; calls: Summary; seconds: number };
type Figures = { editPad: Rate; bare: Rate };

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');
const revision = (i: number) => `Paragraph 4 of the benchmark pad, revised for the ${i + 1}th time, a sentence of ordinary length.`;

/**
 * Durable `edit_pad` throughput: `writers` closed-loop writers over `pads` pads, each call answered
 * once its version is committed, beside the bare endpoint of the same server process (`node:http`,
 * the change made on the live document, one INSERT of its update) driven the same way in the same run.
 */
export function durableEdits(options: Options): Benchmark {
  return perStore(
    'durable edits: edit_pad throughput',
    ({ store, label }) => onFreshServer(store, (server) => measure(server, label, options)),
    (results) => report(results, options),
  );
}

async function measure(server: ServerProcess, label: string, options: Options): Promise<Figures> {
  progress(`${label}: durable edits, seeding ${options.agents} agents and ${options.pads} pads`);
  const world = await spreadEditors(server, options.agents, 'Durable edits', PAD_TEXT);
  // Two agents to a pad, taking turns: no agent's and no pad's minute fills (60 writes each).
  const pads = [];
  for (const pad of world.pads.slice(0, options.pads)) {
    const full = await restOk(server, pad.agent.key, 'open_pad', { pad_id: pad.padId, mode: 'full' });
    pads.push({ padId: pad.padId, version: pad.version, blockId: String(full.blocks[3]), keys: [pad.agent.key], turn: 0 });
  }
  for (const [i, pad] of world.pads.slice(options.pads).entries()) pads[i % pads.length]!.keys.push(pad.agent.key);

  let edit = 0;
  const editPad = rotating(pads, options.writers, async (pad) => {
    const data = await restOk(server, pad.keys[pad.turn++ % pad.keys.length]!, 'edit_pad', {
      pad_id: pad.padId,
      base_version: pad.version,
      edits: [{ block_id: pad.blockId, text: revision(edit++) }],
    });
    if (data.conflicts?.length || !(data.version > pad.version)) throw new Error(`edit_pad did not apply: ${JSON.stringify(data)}`);
    pad.version = data.version;
  });
  let bareEdit = 0;
  const bare = rotating(pads, options.writers, async (pad) => {
    const reply = await fetch(server.bareUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ padId: pad.padId, text: revision(bareEdit++) } satisfies BareEdit) });
    if (reply.status !== 200) throw new Error(`the bare endpoint answered ${reply.status} ${await reply.text()}`);
  });

  progress(`${label}: ${options.writers} writers, ${options.warmup} warm-up and ${options.edits} measured edits each way`);
  await closedLoop(editPad, options.warmup);
  await closedLoop(bare, options.warmup);
  const figures = { editPad: await closedLoop(editPad, options.edits), bare: await closedLoop(bare, options.edits) };
  progress(`${label}: edit_pad ${int(figures.editPad.perSecond)}/s p99 ${ms(figures.editPad.calls.p99)}; bare ${int(figures.bare.perSecond)}/s p99 ${ms(figures.bare.calls.p99)}`);
  return figures;
}

/** `total` calls shared by the workers, each worker one call at a time; the rate over the whole stretch. */
async function closedLoop(workers: (() => Promise<void>)[], total: number): Promise<Rate> {
  const times: number[] = [];
  let left = total;
  const started = performance.now();
  await Promise.all(
    workers.map(async (call) => {
      while (left > 0) {
        left--;
        const at = performance.now();
        await call();
        times.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: total / seconds, calls: summarize(times), seconds };
}

function report(results: Measured<Figures>[], options: Options): string {
  const rows = results.flatMap(({ target, figures }) => [
    [target.label, '`edit_pad` through REST', int(figures.editPad.perSecond), ms(figures.editPad.calls.p50), ms(figures.editPad.calls.p99), `>= ${int(options.target)}/s`, figures.editPad.perSecond >= options.target ? 'met' : '**missed**'],
    [target.label, 'Bare: `node:http`, the live change, one INSERT', int(figures.bare.perSecond), ms(figures.bare.calls.p50), ms(figures.bare.calls.p99), '(reference)', `edit_pad at ${(figures.editPad.perSecond / figures.bare.perSecond).toFixed(2)}x`],
  ]);
  return [
    '## 9. Durable `edit_pad` throughput, 50 writers over 200 pads',
    '',
    `${options.writers} closed-loop writers, each turning through ${options.pads / options.writers} pads of its own, send \`edit_pad\` through REST (one paragraph of an 8-paragraph pad, against the version the writer last saw); each call answers once its version is committed. ${options.agents} agents of one person take turns on the ${options.pads} pads, so no agent's or pad's minute of writes fills and none is refused. ${int(options.warmup)} edits warm up, ${int(options.edits)} are measured. Beside it in the same run, the same writers drive the server process's bare endpoint (\`test/bench/serverProcess.ts\`: \`node:http\`, the paragraph replaced on the live document, its update committed in one INSERT) over the same pads. Only this section: \`BENCH_ONLY=durable npm run bench\`.`,
    '',
    table(['Store', 'Writes', 'Edits a second', 'p50', 'p99', 'Target', 'Result'], rows),
    '',
  ].join('\n');
}
