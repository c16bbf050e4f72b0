import { sql } from 'slonik';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { forStore, latencies, seededServer, type Latencies } from './seeded.ts';
import { restOk } from './setup.ts';
import { registerAgent, type TestServer } from '../support/server.ts';
import { ms, progress, prng, table, verdict } from './stats.ts';

type Options = { posts: number; pads: number; rounds: number; targetP95: number };
type Figures = { all: Latencies; perQuery: { q: string; hits: number; figures: Latencies }[]; seedSeconds: number };

const HUBS = 10;
/** Hubs the searcher has a seat in; the others' posts are there to be left out. */
const SEATED_HUBS = 8;
const POSTS_PER_THREAD = 50;
const SECTIONS_PER_PAD = 5;

/** Common words first, then made-up ones: drawn with a skew, so a few words are everywhere and most are rare. */
const COMMON = `the of and to in is that it for on was with as be at by this we have from or an but not are they which you one all
were there their will would what when can more if so about some out them then into time only other could see now than like first
plan test data review draft budget release design meeting summary notes figure report paper schedule team question answer issue
change number section result method sample model metric memory server client network storage latency throughput cache index query
search thread agent person hub pad task inbox mention reply version history edit merge conflict decision owner helper member guest`.split(/\s+/);

export function vocabulary(size: number): string[] {
  const random = prng(424242);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'bri', 'del', 'fen', 'gor', 'hul', 'jas', 'nor', 'pel', 'quin', 'sul', 'tor', 'ump', 'wex', 'zal'];
  const words = new Set(COMMON);
  while (words.size < size) {
    let word = '';
    for (let n = 2 + Math.floor(random() * 3); n > 0; n--) word += syllables[Math.floor(random() * syllables.length)];
    words.add(word);
  }
  return [...words];
}

/**
 * `search_dotpad` through the real server over REST, one caller asking one query after another, over
 * `posts` posts in threads of 50 and `pads` pads of five sections each, in ten hubs, two of which the
 * caller has no seat in (their items must be left out, at the cost of checking). The words of posts,
 * titles and sections are drawn from 3,000 with a strong skew, so the commonest words are in most
 * posts and the rarest in a few.
 */
export function searchBench(options: Options): Benchmark {
  return perStore(
    'search: search_dotpad over 100,000 posts',
    async ({ store, label }) => {
      const words = vocabulary(3_000);
      const seedStarted = performance.now();
      progress(`${label}: seeding ${options.posts.toLocaleString('en-US')} posts and ${options.pads.toLocaleString('en-US')} pads`);
      const world = await seededServer(store, {}, (seeder) => seedSearch(seeder, words, options));
      const seedSeconds = (performance.now() - seedStarted) / 1000;
      try {
        const { key } = world.seeded;
        const rare = words.at(-7)!;
        const mid = words[COMMON.length + 40]!;
        const queries = [
          'plan', // among the commonest
          'review budget',
          mid,
          rare,
          mid.slice(0, 3), // a prefix
          'memory latency cache',
          `type:post ${mid}`,
          `type:pad draft`,
          `type:thread summary`,
          `hub:bench-hub-3 release`,
          `is:open question`,
          'nothingmatchesthis',
        ];
        const perQuery: Figures['perQuery'] = [];
        const all: number[] = [];
        const samples = new Map<string, number[]>(queries.map((q) => [q, []]));
        const hits = new Map<string, number>();
        // One untimed round: the server's first calls compile its code and fill the store's caches.
        for (const q of queries) hits.set(q, (await restOk(world.server, key, 'search_dotpad', { q })).results?.length ?? 0);
        progress(`${label}: ${options.rounds} rounds of ${queries.length} queries`);
        for (let round = 0; round < options.rounds; round++) {
          for (const q of queries) {
            const started = performance.now();
            const data = await restOk(world.server, key, 'search_dotpad', { q });
            const took = performance.now() - started;
            if (!data) throw new Error(`search_dotpad answered nothing for ${q}`);
            samples.get(q)!.push(took);
            all.push(took);
          }
        }
        for (const q of queries) perQuery.push({ q, hits: hits.get(q)!, figures: latencies(samples.get(q)!) });
        const figures = { all: latencies(all), perQuery, seedSeconds };
        progress(`${label}: p50 ${ms(figures.all.p50)}, p95 ${ms(figures.all.p95)}, p99 ${ms(figures.all.p99)}`);
        return figures;
      } finally {
        await world.close();
      }
    },
    (results) => report(results, options),
  );
}

/** Two agents (the author of everything, and the searcher) through the tools; everything else in bulk SQL. */
export async function seedSearch(server: TestServer, words: string[], options: Options) {
  const author = await registerAgent(server, 'Bench author');
  const searcher = await registerAgent(server, 'Bench searcher');
  const vocab = sql.array(words, 'text');
  const size = words.length;
  // A word drawn with a strong skew towards the start of the list.
  const word = sql.fragment`(${vocab})[1 + floor(power(random(), 3) * ${size})::int]`;
  const wordsOf = (min: number, spread: number, of: ReturnType<typeof sql.fragment>) =>
    sql.fragment`(SELECT string_agg(${word}, ' ') FROM generate_series(1, ${min} + (${of} * 7919) % ${spread}))`;
  const threads = options.posts / POSTS_PER_THREAD;
  await server.core.db.write(async (tx) => {
    await tx.query(sql.unsafe`SELECT setseed(0.5)`);
    await tx.query(sql.unsafe`
      INSERT INTO hubs (id, slug, name, owner_id)
      SELECT 'hub_bench' || h, 'bench-hub-' || h, 'Bench hub ' || h, ${author.id} FROM generate_series(0, ${HUBS - 1}) h`);
    await tx.query(sql.unsafe`
      INSERT INTO hub_members (hub_id, participant_id, role)
      SELECT 'hub_bench' || h, ${author.id}, 'owner' FROM generate_series(0, ${HUBS - 1}) h
      UNION ALL SELECT 'hub_bench' || h, ${searcher.id}, 'member' FROM generate_series(0, ${SEATED_HUBS - 1}) h`);
    await tx.query(sql.unsafe`
      INSERT INTO threads (id, hub_id, title, status, started_by, version, post_count, created_at, updated_at)
      SELECT 'thr_bench' || t, 'hub_bench' || (t % ${HUBS}), ${wordsOf(3, 6, sql.fragment`t`)}, CASE WHEN t % 5 = 0 THEN 'answered' ELSE 'open' END,
        ${author.id}, ${POSTS_PER_THREAD + 1}, ${POSTS_PER_THREAD}, now() - make_interval(hours => ${threads} - t), now() - make_interval(hours => ${threads} - t)
      FROM generate_series(0, ${threads - 1}) t`);
  });
  // In batches, each its own transaction, so no one statement holds the store for long.
  const BATCH = 10_000;
  for (let from = 0; from < options.posts; from += BATCH) {
    await server.core.db.write(async (tx) => {
      await tx.query(sql.unsafe`SELECT setseed(${(from / options.posts) * 0.9})`);
      await tx.query(sql.unsafe`
        INSERT INTO posts (id, thread_id, seq, author_id, body, created_at)
        SELECT 'msg_bench' || g, 'thr_bench' || (g / ${POSTS_PER_THREAD}), (g % ${POSTS_PER_THREAD}) + 1, ${author.id},
          ${wordsOf(15, 60, sql.fragment`g`)}, now() - make_interval(mins => ${options.posts} - g)
        FROM generate_series(${from}::int, ${Math.min(from + BATCH, options.posts) - 1}::int) g`);
    });
  }
  await server.core.db.write(async (tx) => {
    await tx.query(sql.unsafe`
      INSERT INTO pads (id, hub_id, thread_id, title, version, created_by)
      SELECT 'pad_bench' || p, 'hub_bench' || (p % ${HUBS}), CASE WHEN p % 2 = 0 THEN 'thr_bench' || (p % ${threads}) END, ${wordsOf(2, 5, sql.fragment`p`)}, 1, ${author.id}
      FROM generate_series(0, ${options.pads - 1}) p`);
    // Each pad's sections, where the schema keeps them for search.
    const hasSections = await tx.oneFirst(sql.unsafe`SELECT to_regclass('pad_sections') IS NOT NULL AS found`);
    if (hasSections) {
      await tx.query(sql.unsafe`
        INSERT INTO pad_sections (pad_id, section_id, after_id, title, level, body, version)
        SELECT 'pad_bench' || p, 'sec' || s, CASE WHEN s > 0 THEN 'sec' || (s - 1) END, ${wordsOf(2, 4, sql.fragment`(p * 5 + s)`)}, 2,
          ${wordsOf(40, 80, sql.fragment`(p * 5 + s)`)}, 1
        FROM generate_series(0, ${options.pads - 1}) p, generate_series(0, ${SECTIONS_PER_PAD - 1}) s`);
    }
  });
  // As autovacuum leaves a table after a bulk load: statistics taken, GIN pending lists merged.
  await server.core.db.pool.query(sql.unsafe`VACUUM ANALYZE`);
  return { key: searcher.key };
}

function report(results: Measured<Figures>[], options: Options): string {
  const first = results[0]?.figures;
  return [
    `## 6. \`search_dotpad\` over ${options.posts.toLocaleString('en-US')} posts and ${options.pads.toLocaleString('en-US')} pads`,
    '',
    `The real server in a process of its own, on a fresh database seeded in bulk SQL through the real schema (the generated \`tsvector\` columns and GIN indexes of the migrations, then \`VACUUM ANALYZE\`, as autovacuum would leave it): ${HUBS} hubs, ${(options.posts / POSTS_PER_THREAD).toLocaleString('en-US')} threads of ${POSTS_PER_THREAD} posts (15 to 74 words each), ${options.pads.toLocaleString('en-US')} pads of ${SECTIONS_PER_PAD} sections (40 to 119 words each), words drawn from 3,000 with a strong skew (the commonest in most posts, the rarest in a handful). The caller, an agent with a seat in ${SEATED_HUBS} of the ${HUBS} hubs, calls \`search_dotpad\` over REST with its key, one call after another: ${first?.perQuery.length ?? 0} queries (common, rare, prefix, several words, each filter) in turn, ${options.rounds} rounds after one untimed round. Latency per call, in the caller's process.`,
    '',
    table(
      ['Store', 'Calls', 'p50', 'p95', 'p99', 'Max', 'Target p95', 'Result', 'Seeding'],
      results.map(({ target, figures }) => [target.label, String(figures.all.n), ms(figures.all.p50), ms(figures.all.p95), ms(figures.all.p99), ms(figures.all.max), `<= ${options.targetP95} ms`, forStore(target.store, verdict(figures.all.p95, options.targetP95)), `${figures.seedSeconds.toFixed(0)} s`]),
    ),
    '',
    'Per query (p95):',
    '',
    table(
      ['Query', 'Hits on the first page', ...results.map(({ target }) => `${target.label} p95`)],
      (first?.perQuery ?? []).map((row, i) => [`\`${row.q}\``, String(row.hits), ...results.map(({ figures }) => ms(figures.perQuery[i]!.figures.p95))]),
    ),
    '',
  ].join('\n');
}
