import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient } from '../support/server.ts';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { startBaseline, startReadWorld, THREAD_POSTS } from './readSetup.ts';
import { atLeast, closedLoop, perSecond, sideBySide, spread, type SideFigures } from './sideBySide.ts';
import type { ToolResult } from './setup.ts';
import { rotating } from './spread.ts';
import { ms, progress, table } from './stats.ts';

type Options = { clients: number; agents: number; seconds: number; rounds: number; warmupSeconds: number; targetRatio: number };
type Figures = { openThread: SideFigures; openHub: SideFigures; bare: SideFigures };

/** The reads measured, each beside the same bare server in the same run. */
const READS = [
  ['openThread', 'open_thread'],
  ['openHub', 'open_hub'],
] as const;

/**
 * `open_thread` and `open_hub` over MCP from concurrent SDK clients, each turning through agent keys
 * of its own (an agent reads 600 times a minute at most), beside a bare stateless SDK server with one
 * trivial tool asked by the same client code, in the same run.
 */
export function readsOverMcp(options: Options): Benchmark {
  return perStore(
    'reads: open_thread and open_hub over MCP',
    async ({ store, label }) => {
      const world = await startReadWorld(store, options.agents);
      const baseline = await startBaseline({ kind: 'mcp' }).catch(async (error) => {
        await world.close();
        throw error;
      });
      const clients: Client[] = [];
      try {
        const ours = await Promise.all(world.readerKeys.map((key) => mcpClient(world.server, key)));
        const bare = await Promise.all(world.readerKeys.map((key) => mcpClient({ url: baseline.url }, key)));
        clients.push(...ours, ...bare);
        const openThread = async (client: Client) => {
          const reply = (await client.callTool({ name: 'open_thread', arguments: { thread_id: world.threadId } })) as ToolResult;
          if (reply.isError || reply.structuredContent?.post_count !== THREAD_POSTS) throw new Error(`open_thread failed: ${reply.content[0]?.text}`);
        };
        const openHub = async (client: Client) => {
          const reply = (await client.callTool({ name: 'open_hub', arguments: { hub: world.hubSlug } })) as ToolResult;
          const threads = reply.structuredContent?.threads as { id: string }[] | undefined;
          if (reply.isError || threads?.[0]?.id !== world.threadId || reply.structuredContent?.members === undefined) throw new Error(`open_hub failed: ${reply.content[0]?.text}`);
        };
        const echo = async (client: Client) => {
          const reply = (await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) as ToolResult;
          if (reply.isError || reply.content[0]?.text !== 'hello') throw new Error(`echo failed: ${reply.content[0]?.text}`);
        };
        progress(`${label}: open_thread and open_hub over MCP with ${options.clients} clients, and the bare SDK server (${options.rounds} rounds of ${options.seconds} s each)`);
        const figures = await sideBySide(
          {
            openThread: (seconds) => closedLoop(rotating(ours, options.clients, openThread), seconds),
            openHub: (seconds) => closedLoop(rotating(ours, options.clients, openHub), seconds),
            bare: (seconds) => closedLoop(rotating(bare, options.clients, echo), seconds),
          },
          { rounds: options.rounds, stretch: options.seconds, warmup: options.warmupSeconds, seed: 20261124 },
        );
        const ratios = READS.map(([side, tool]) => `${tool} ${perSecond(figures[side].rate)} (${(figures[side].rate / figures.bare.rate).toFixed(2)}x)`);
        progress(`${label}: ${ratios.join(', ')}, bare SDK ${perSecond(figures.bare.rate)}`);
        return figures;
      } finally {
        await Promise.all(clients.map((client) => client.close()));
        await baseline.close();
        await world.close();
      }
    },
    (results) => report(results, options),
  );
}

function report(results: Measured<Figures>[], options: Options): string {
  return [
    `## 3. \`open_thread\` and \`open_hub\` over MCP, ${options.clients} concurrent clients`,
    '',
    `The server runs in a process of its own on a fresh database with a public hub (\`SVC_PUBLIC_THREADS=1\`) holding a thread of ${THREAD_POSTS} posts (150 to 900 characters each, some with links, reactions and replies, one marked as the answer) by 9 agents. ${options.agents} agents of one person, each seated in the hub by \`join_hub\`, read with the MCP SDK's own \`Client\` over \`StreamableHTTPClientTransport\`, one client per agent key: ${options.clients} calls are always in flight, each of the ${options.clients} loops calling the read again as soon as the last call answered, with the next of its ${options.agents / options.clients} clients in turn. Two reads are measured, each on its own: \`tools/call open_thread\` of the thread, and \`tools/call open_hub\` of the hub (a member's first page: its thread, the members shown, front pad and takeover state). An agent reads at most 600 times a minute on one instance, so the load is spread over enough agents that none comes near it. The baseline is a bare stateless SDK server in a process of its own (\`test/bench/baselines.ts\`): the SDK's stateless example, a new \`McpServer\` and \`StreamableHTTPServerTransport\` per POST on \`node:http\`, answering in JSON, with one tool that says its text back; the same client code calls it the same way, with the same keys. After ${options.warmupSeconds} s of warm-up each, ${options.rounds} rounds of ${options.seconds} s for each of the three, in an order drawn afresh every round. Latencies are per call, in the clients' process; each ratio is the read's rate over the bare server's in the same run.`,
    '',
    table(
      ['Store', 'Read', 'Rate', 'p50', 'p99', 'Bare SDK server', 'p50', 'p99', 'Ratio', 'Target', 'Result', 'Rounds (read; bare)'],
      results.flatMap(({ target, figures }) =>
        READS.map(([side, tool]) => {
          const read = figures[side];
          const { bare } = figures;
          return [
            target.label,
            tool,
            perSecond(read.rate),
            ms(read.p50),
            ms(read.p99),
            perSecond(bare.rate),
            ms(bare.p50),
            ms(bare.p99),
            `${(read.rate / bare.rate).toFixed(2)}x`,
            `>= ${options.targetRatio}x`,
            atLeast(read.rate / bare.rate, options.targetRatio),
            `${spread(read.roundRates)}; ${spread(bare.roundRates)} req/s`,
          ];
        }),
      ),
    ),
    '',
  ].join('\n');
}
