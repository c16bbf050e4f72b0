import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { startBaseline, startReadWorld, THREAD_POSTS } from './readSetup.ts';
import { atLeast, closedLoop, perSecond, sideBySide, spread, type SideFigures } from './sideBySide.ts';
import { loopbackAddressesTaken, REQUESTS_PER_ADDRESS, spreadGets } from './spread.ts';
import { bytes, int, ms, progress, table } from './stats.ts';

type Options = { concurrency: number; seconds: number; rounds: number; warmupSeconds: number; target200: number; target304: number };
type Figures = { view: SideFigures; notModified: SideFigures; koa: SideFigures; koa304: SideFigures; bodyBytes: number };

const MARKDOWN = { accept: 'text/markdown' };

/**
 * The Markdown thread view `/t/:id` read signed out, whole and as a `304`, beside one plain Koa route
 * answering the same body and ETag, in the same run, with the leanest HTTP client Node has.
 */
export function markdownThreadView(options: Options): Benchmark {
  return perStore(
    'reads: Markdown thread view',
    async ({ store, label }) => {
      const world = await startReadWorld(store, 1);
      try {
        const url = `${world.server.url}/t/${world.threadId}`;
        const first = await fetch(url, { headers: MARKDOWN });
        const body = await first.text();
        const etag = first.headers.get('etag');
        if (first.status !== 200 || !etag || !body.includes('## Posts')) throw new Error(`the thread view answered ${first.status}: ${body.slice(0, 200)}`);
        if (first.headers.get('cache-control') !== 'public, max-age=15') throw new Error(`the thread view was not read as public: ${first.headers.get('cache-control')}`);
        const again = await fetch(url, { headers: { ...MARKDOWN, 'if-none-match': etag } });
        if (again.status !== 304) throw new Error(`the thread view answered ${again.status} to its own ETag`);
        const baseline = await startBaseline({ kind: 'koa', body, etag });
        const koaUrl = `${baseline.url}/t/${world.threadId}`;
        const load = (target: string, headers: Record<string, string>, status: number) => async (seconds: number) => {
          const gets = spreadGets(target, headers, status, options.concurrency);
          try {
            return await closedLoop(gets.workers, seconds);
          } finally {
            gets.close();
          }
        };
        try {
          progress(`${label}: the Markdown thread view and its 304, and the plain Koa route (${options.rounds} rounds of ${options.seconds} s each)`);
          const figures = await sideBySide(
            {
              view: load(url, MARKDOWN, 200),
              notModified: load(url, { ...MARKDOWN, 'if-none-match': etag }, 304),
              koa: load(koaUrl, MARKDOWN, 200),
              koa304: load(koaUrl, { ...MARKDOWN, 'if-none-match': etag }, 304),
            },
            { rounds: options.rounds, stretch: options.seconds, warmup: options.warmupSeconds, seed: 20261125 },
          );
          progress(`${label}: view ${perSecond(figures.view.rate)} (Koa ${perSecond(figures.koa.rate)}), 304 ${perSecond(figures.notModified.rate)} (Koa ${perSecond(figures.koa304.rate)})`);
          return { ...figures, bodyBytes: Buffer.byteLength(body) };
        } finally {
          await baseline.close();
        }
      } finally {
        await world.close();
      }
    },
    (results) => report(results, options),
  );
}

/** One table: the view (or its 304) per store against its target, beside the Koa route answering alike. */
function rateTable(results: Measured<Figures>[], answer: 'view' | '304', target: number): string {
  const result = (store: string, value: number) => (store === 'postgres' ? atLeast(value, target) : `${atLeast(value, target)} (reference: the target is for Postgres)`);
  const label = answer === 'view' ? 'View (200)' : '304';
  return table(
    ['Store', label, 'p50', 'p99', 'Target', 'Result', `Koa route ${answer === 'view' ? '(200)' : '304'}`, 'Ratio', `Rounds (${label}; Koa)`],
    results.map(({ target: store, figures: f }) => {
      const [ours, koa] = answer === 'view' ? [f.view, f.koa] : [f.notModified, f.koa304];
      return [
        store.label,
        perSecond(ours.rate),
        ms(ours.p50),
        ms(ours.p99),
        `>= ${perSecond(target)}`,
        result(store.store, ours.rate),
        perSecond(koa.rate),
        `${(ours.rate / koa.rate).toFixed(2)}x`,
        `${spread(ours.roundRates)}; ${spread(koa.roundRates)} req/s`,
      ];
    }),
  );
}

function report(results: Measured<Figures>[], options: Options): string {
  return [
    '## 4. The Markdown thread view `/t/:id`, signed out',
    '',
    `The server runs in a process of its own with \`SVC_PUBLIC_THREADS=1\`, on a fresh database whose hub is made public (\`UPDATE hubs SET audience = 'public'\`; no tool publishes a hub yet), holding a thread of ${THREAD_POSTS} posts. A signed-out reader asks \`GET /t/:id\` with \`Accept: text/markdown\` (the whole view: front matter, how to take part, the posts; ${results.map(({ target, figures }) => `${bytes(figures.bodyBytes)} on ${target.label}`).join(', ')}), and again with \`If-None-Match\` holding its ETag (\`304\`, decided from the thread's version before the posts load). The client is \`node:http\` with ${options.concurrency} requests always in flight, in the benchmark's process; every answer's status is checked and its body drained. A signed-out reader is limited per IP address (120 a minute), so the readers are many: each of the ${options.concurrency} keeps one kept-alive connection bound to a loopback address of its own (127.0.0.0/8) for ${REQUESTS_PER_ADDRESS} requests, then connects again from an address nobody used before (${int(loopbackAddressesTaken())} addresses in this run, the Koa route read the same way), so no address comes near its limit. The baseline is one plain Koa route (Koa and its router, no middleware, authentication or database) in a process of its own (\`test/bench/baselines.ts\`), answering the same body and ETag, and \`304\` to the same \`If-None-Match\`. After ${options.warmupSeconds} s of warm-up each, ${options.rounds} rounds of ${options.seconds} s for each of the four, in an order drawn afresh every round. The targets are for Postgres; PGlite is shown for reference.`,
    '',
    rateTable(results, 'view', options.target200),
    '',
    rateTable(results, '304', options.target304),
    '',
  ].join('\n');
}
