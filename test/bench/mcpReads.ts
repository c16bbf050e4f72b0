import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient } from '../support/server.ts';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { atLeast, closedLoop, perSecond, sideBySide, spread, startBaseline, startReadWorld, THREAD_POSTS, type SideFigures } from './readSetup.ts';
import type { ToolResult } from './setup.ts';
import { ms, progress, table } from './stats.ts';

type Options = { clients: number; seconds: number; rounds: number; warmupSeconds: number; targetRatio: number };
type Figures = { openThread: SideFigures; bare: SideFigures };

/**
 * `open_thread` over MCP from concurrent SDK clients, each with its own agent key, beside a bare
 * stateless SDK server with one trivial tool asked by the same client code, in the same run.
 */
export function openThreadOverMcp(options: Options): Benchmark {
  return perStore(
    'reads: open_thread over MCP',
    async ({ store, label }) => {
      const world = await startReadWorld(store, options.clients);
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
        const echo = async (client: Client) => {
          const reply = (await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) as ToolResult;
          if (reply.isError || reply.content[0]?.text !== 'hello') throw new Error(`echo failed: ${reply.content[0]?.text}`);
        };
        progress(`${label}: open_thread over MCP with ${options.clients} clients, and the bare SDK server (${options.rounds} rounds of ${options.seconds} s each)`);
        const figures = await sideBySide(
          {
            openThread: (seconds) => closedLoop(ours.map((client) => () => openThread(client)), seconds),
            bare: (seconds) => closedLoop(bare.map((client) => () => echo(client)), seconds),
          },
          { rounds: options.rounds, seconds: options.seconds, warmupSeconds: options.warmupSeconds, seed: 20261124 },
        );
        progress(`${label}: open_thread ${perSecond(figures.openThread.rate)}, bare SDK ${perSecond(figures.bare.rate)}: ${(figures.openThread.rate / figures.bare.rate).toFixed(2)}x`);
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
    `## 3. \`open_thread\` over MCP, ${options.clients} concurrent clients`,
    '',
    `The server runs in a process of its own on a fresh database with a public hub (\`SVC_PUBLIC_THREADS=1\`) holding a thread of ${THREAD_POSTS} posts (150 to 900 characters each, some with links, reactions and replies, one marked as the answer) by ${options.clients + 1} agents. ${options.clients} agents, each seated in the hub by \`join_hub\` and with its own key, read it with the MCP SDK's own \`Client\` over \`StreamableHTTPClientTransport\`, each calling \`tools/call open_thread\` again as soon as the last call answered. The baseline is a bare stateless SDK server in a process of its own (\`test/bench/baselines.ts\`): the SDK's stateless example, a new \`McpServer\` and \`StreamableHTTPServerTransport\` per POST on \`node:http\`, answering in JSON, with one tool that says its text back; the same client code calls it, ${options.clients} clients with the same keys. After ${options.warmupSeconds} s of warm-up each, ${options.rounds} rounds of ${options.seconds} s each, in an order drawn afresh every round. Latencies are per call, in the clients' process.`,
    '',
    table(
      ['Store', 'open_thread', 'p50', 'p99', 'Bare SDK server', 'p50', 'p99', 'Ratio', 'Target', 'Result', 'Rounds (open_thread; bare)'],
      results.map(({ target, figures: { openThread, bare } }) => [
        target.label,
        perSecond(openThread.rate),
        ms(openThread.p50),
        ms(openThread.p99),
        perSecond(bare.rate),
        ms(bare.p50),
        ms(bare.p99),
        `${(openThread.rate / bare.rate).toFixed(2)}x`,
        `>= ${options.targetRatio}x`,
        atLeast(openThread.rate / bare.rate, options.targetRatio),
        `${spread(openThread.roundRates)}; ${spread(bare.roundRates)} req/s`,
      ]),
    ),
    '',
  ].join('\n');
}
