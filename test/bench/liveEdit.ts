import { readBlocks } from '../../sync/blocks.ts';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient } from '../support/server.ts';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { connectProvider, makePad, onFreshServer, whenText, type ServerProcess, type ToolResult } from './setup.ts';
import { spreadEditors } from './spread.ts';
import type { BareEdit } from './serverProcess.ts';
import { ms, progress, prng, summarize, table, verdict, type Summary } from './stats.ts';

export type LiveEditFigures = {
  /** edit_pad -> the editor shows the text. */
  shown: Summary;
  /** edit_pad -> the editor shows the text and the call has answered, which it does after the commit. */
  answered: Summary;
  /** The bare edit -> the editor shows the text. */
  bare: Summary;
  /** The bare edit -> shown and acknowledged, after its commit. */
  bareAcknowledged: Summary;
  /** The bare edit holding its broadcast until its commit -> the editor shows the text. */
  held: Summary;
  /** The same -> shown and acknowledged. */
  heldAcknowledged: Summary;
};

type Options = { edits: number; warmup: number; targetP99: number; editors: number };

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');

/**
 * An agent's `edit_pad` over MCP until a live editor shows it, beside a bare Hocuspocus relay that
 * commits every edit, on a server in its own process and a fresh database per store.
 */
export function liveEdit(options: Options): Benchmark {
  return perStore(
    'edit_pad -> live editor',
    ({ store, label }) =>
      onFreshServer(store, async (server) => {
        progress(`${label}: edit_pad -> live editor, and the bare relay (${options.warmup} warm-up + ${options.edits} measured each)`);
        const figures = await measure(server, options);
        progress(`${label}: edit_pad shown p99 ${ms(figures.shown.p99)} (and answered ${ms(figures.answered.p99)}), bare relay shown p99 ${ms(figures.bare.p99)}`);
        return figures;
      }),
    (results) => report(results, options),
  );
}

async function measure(server: ServerProcess, options: Options): Promise<LiveEditFigures> {
  // Edits are spread over agents and pads (each agent its own pad), so no writer's or pad's minute
  // fills (60 writes a minute per participant, 60 agent edits a minute per pad).
  const world = await spreadEditors(server, options.editors, 'Edited over MCP', PAD_TEXT);
  const pads: { padId: string; version: number; blockId: string; editor: Awaited<ReturnType<typeof connectProvider>>; client: Client }[] = [];
  const closeAll = async () => {
    for (const pad of pads) {
      await pad.client.close();
      pad.editor.close();
    }
  };
  try {
    for (const pad of world.pads) {
      const editor = await connectProvider(server, pad.agent.key, pad.padId);
      const blocks = readBlocks(editor.doc.getXmlFragment('default'));
      if (blocks.length !== 8) throw new Error(`expected 8 blocks in the editor's copy, saw ${blocks.length}`);
      // The paragraph edited each time: the middle of the pad, as an agent would.
      pads.push({ padId: pad.padId, version: pad.version, blockId: blocks[3]!.id, editor, client: await mcpClient(server, pad.agent.key) });
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  const bare = await makePad(server, world.agents[0]!.key, world.hubSlug, 'Bare relay baseline', PAD_TEXT);
  const bareEditor = await connectProvider(server, world.agents[0]!.key, bare.padId);
  const held = await makePad(server, world.agents[1]!.key, world.hubSlug, 'Bare relay baseline, held until committed', PAD_TEXT);
  const heldEditor = await connectProvider(server, world.agents[1]!.key, held.padId);
  const samples = { shown: [] as number[], answered: [] as number[], bare: [] as number[], bareAcknowledged: [] as number[], held: [] as number[], heldAcknowledged: [] as number[] };

  /** One edit of one paragraph of the next pad, by its agent against its current version, timed until its editor shows it and until the call answers. */
  const agentStep = async (i: number, measured: boolean) => {
    const pad = pads[i % pads.length]!;
    const text = `edit ${i}`;
    const seen = whenText(pad.editor.doc, pad.blockId, text);
    const t0 = performance.now();
    const reply = (await pad.client.callTool({
      name: 'edit_pad',
      arguments: { pad_id: pad.padId, base_version: pad.version, edits: [{ block_id: pad.blockId, text }] },
    })) as ToolResult;
    const replied = performance.now();
    if (reply.isError) throw new Error(`edit_pad failed at edit ${i}: ${reply.content[0]?.text}`);
    const next = reply.structuredContent?.version;
    if (typeof next !== 'number' || next <= pad.version) throw new Error(`edit_pad at edit ${i} did not raise the version (${pad.version} -> ${next})`);
    if (reply.structuredContent?.conflicts?.length) throw new Error(`edit_pad at edit ${i} reported conflicts`);
    pad.version = next;
    const seenAt = await seen;
    if (!measured) return;
    samples.shown.push(seenAt - t0);
    samples.answered.push(Math.max(seenAt, replied) - t0);
  };

  /**
   * One bare edit of the first paragraph, asked with `fetch` as the SDK client asks, timed the same
   * way; `hold`: on the second bare pad, its broadcast held until its INSERT has committed.
   */
  const bareStepOf = (hold: boolean) => async (i: number, measured: boolean) => {
    const text = `bare ${i}`;
    const [padId, editor, shown, acknowledgedSamples] = hold ? [held.padId, heldEditor, samples.held, samples.heldAcknowledged] : [bare.padId, bareEditor, samples.bare, samples.bareAcknowledged];
    const seen = whenText(editor.doc, null, text);
    const t0 = performance.now();
    const reply = await fetch(server.bareUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ padId, text, hold } satisfies BareEdit) });
    const body = await reply.text();
    const acknowledged = performance.now();
    if (reply.status !== 200) throw new Error(`the bare endpoint answered ${reply.status} ${body}`);
    const seenAt = await seen;
    if (!measured) return;
    shown.push(seenAt - t0);
    acknowledgedSamples.push(Math.max(seenAt, acknowledged) - t0);
  };
  const bareStep = bareStepOf(false);
  const heldStep = bareStepOf(true);

  const random = prng(20261122);
  const total = options.warmup + options.edits;
  try {
    for (let i = 0; i < total; i++) {
      const measured = i >= options.warmup;
      // The three in an order drawn afresh (a shuffle), so each comes after each other about equally often.
      const steps = [agentStep, bareStep, heldStep];
      for (let k = steps.length - 1; k > 0; k--) {
        const j = Math.floor(random() * (k + 1));
        [steps[k], steps[j]] = [steps[j]!, steps[k]!];
      }
      for (const step of steps) await step(i, measured);
      if ((i + 1) % 500 === 0) progress(`  round ${i + 1}/${total}`);
    }
  } finally {
    await closeAll();
    bareEditor.close();
    heldEditor.close();
  }
  return {
    shown: summarize(samples.shown),
    answered: summarize(samples.answered),
    bare: summarize(samples.bare),
    bareAcknowledged: summarize(samples.bareAcknowledged),
    held: summarize(samples.held),
    heldAcknowledged: summarize(samples.heldAcknowledged),
  };
}

function report(results: Measured<LiveEditFigures>[], options: Options): string {
  const target = `<= ${options.targetP99} ms`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  return [
    '## 1. MCP `edit_pad` -> live editor',
    '',
    `The server runs in a process of its own, as in production; the agent and the editors run in the benchmark's process. The agents are the MCP SDK's own \`Client\` over its \`StreamableHTTPClientTransport\` (\`fetch\`, after the \`initialize\` handshake), one per agent key. Writes are limited per participant and agent edits per pad (60 a minute each), so the edits are spread as many users spread them: ${options.editors} agents of one person, seated in one hub, each with an 8-paragraph pad of its own and a Node \`HocuspocusProvider\` connected to it over WebSocket; edit i is made by agent i mod ${options.editors} on its pad, so none comes near its limit. Each \`tools/call edit_pad\` replaces one paragraph of the pad against its current version; the time runs from just before the call until the pad's provider shows the new text (checked with \`readBlocks\` on every document update). The target is on that time. Every edit is committed to the database (its update in the pad log and its version, in one statement) before \`edit_pad\` answers, so it is durable before the answer (\`test/integration/durability.test.ts\` kills the server right after an answer and finds the edit); "shown and answered" runs until the editor shows the text and the agent has the answer, the commit inside it. ${options.warmup} warm-up edits, then ${options.edits} measured.`,
    '',
    table(
      ['Store', 'Edits', 'Shown p50', 'Shown p99', 'Shown max', 'Target (shown p99)', 'Result', 'Shown and answered p50', 'p99'],
      results.map(({ target: store, figures: f }) => [
        store.label,
        String(f.shown.n),
        ms(f.shown.p50),
        ms(f.shown.p99),
        ms(f.shown.max),
        target,
        verdict(f.shown.p99, options.targetP99),
        ms(f.answered.p50),
        ms(f.answered.p99),
      ]),
    ),
    '',
    "Beside it, for reference and no longer a target: a bare Hocuspocus relay that commits every edit, in the same rounds, on another pad of the same server. A direct connection (`openDirectConnection` on the server's own Hocuspocus instance, on one pad) and one `transact` replace the first paragraph's text through the Y types, and the update is committed to the pad log in one INSERT before it is acknowledged. The agent asks for it with `fetch`, as the SDK client asks, at an endpoint of the server process on `node:http` alone, with no routing, authentication or validation (`test/bench/serverProcess.ts`); a second provider is watched. The ratio is what Dotpad does beyond a bare relay: Koa, authentication, MCP and its SDK client, validation, Markdown, the version. The relay's update goes out at the end of the event-loop turn, Hocuspocus' default, before its commit; `edit_pad` holds its update in Hocuspocus' broadcast buffer until its version has committed (`sync/liveDocs.ts`), so its shown time holds the commit and the relay's does not.",
    '',
    "Beside that relay, the relay as issue 25's target is set against: the same bare relay on a third pad, holding its update in Hocuspocus' broadcast buffer until its INSERT has committed, as `edit_pad` holds its own, so both shown times hold a commit. Target: `edit_pad`'s shown p99 at most 2x its p99.",
    '',
    table(
      ['Store', 'Relay', 'Edits', 'Relay shown p50', 'p99', 'Shown and acknowledged p50', 'p99', 'Ratio shown (p50)', '(p99)', 'Ratio answered / acknowledged (p99)', 'Target (shown p99)', 'Result'],
      results.flatMap(({ target: store, figures: f }) =>
        ([
          ['broadcast before its commit', f.bare, f.bareAcknowledged, false],
          ['broadcast after its commit', f.held, f.heldAcknowledged, true],
        ] as const).map(([relay, shown, acknowledged, targeted]) => [
          store.label,
          relay,
          String(shown.n),
          ms(shown.p50),
          ms(shown.p99),
          ms(acknowledged.p50),
          ms(acknowledged.p99),
          ratio(f.shown.p50, shown.p50),
          ratio(f.shown.p99, shown.p99),
          ratio(f.answered.p99, acknowledged.p99),
          targeted ? '<= 2x' : '(reference)',
          targeted ? verdict(f.shown.p99, 2 * shown.p99) : '',
        ]),
      ),
    ),
    '',
    'Each round makes one edit of each kind, in an order drawn afresh every round from a fixed seed, so each comes after the others about equally often. Times are `performance.now()` in the benchmark\'s process: the agent\'s and the editors\' own work (the SDK client, the provider decoding the update, `readBlocks` after every update) is inside every figure, the relay\'s alike.',
    '',
  ].join('\n');
}
