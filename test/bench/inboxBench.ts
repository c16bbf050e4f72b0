import { sql } from 'slonik';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { forStore, latencies, manyAgents, seededServer, type Latencies } from './seeded.ts';
import { restOk } from './setup.ts';
import { registerAgent, rest, type TestServer } from '../support/server.ts';
import { ms, progress, table, verdict } from './stats.ts';

type Options = { items: number; readers: number; othersItems: number; rounds: number; targetP99: number };
type Shape = { name: string; args: (cursor: string) => Record<string, unknown> };
type Figures = { all: Latencies; perShape: { name: string; figures: Latencies }[] };

const KINDS = ['mention', 'reply', 'assigned', 'review', 'added'];

/** The calls an agent makes of its inbox: the first page, a page after a cursor, a long page, the count alone. */
const SHAPES: Shape[] = [
  { name: 'first page (50)', args: () => ({}) },
  { name: 'page after a cursor (50)', args: (cursor) => ({ cursor }) },
  { name: 'page after a cursor (200)', args: (cursor) => ({ cursor, limit: 200 }) },
  { name: 'count only (limit 0)', args: () => ({ limit: 0 }) },
];

/**
 * `check_inbox` for agents with `items` unacked items each (mentions, replies, tasks, reviews, being
 * added, about a thread of a hub they have a seat in), among `othersItems` items of 50 other
 * participants, through the real server over REST, one call after another, the agents taking turns.
 */
export function inboxBench(options: Options): Benchmark {
  return perStore(
    'inbox: check_inbox with 10,000 items',
    async ({ store, label }) => {
      progress(`${label}: seeding ${options.items.toLocaleString('en-US')} inbox items`);
      const world = await seededServer(store, {}, (seeder) => seedInbox(seeder, options));
      try {
        // Each reader's cursors, by paging through its inbox once (untimed: it warms the server too).
        const readers: { key: string; cursors: string[] }[] = [];
        for (const key of world.seeded.keys) {
          const cursors: string[] = [];
          let cursor: string | undefined;
          for (;;) {
            const page = await restOk(world.server, key, 'check_inbox', { limit: 200, ...(cursor ? { cursor } : {}) });
            if (!page.items.length) break;
            cursor = page.next_cursor as string;
            cursors.push(cursor);
          }
          if (cursors.length * 200 < options.items) throw new Error(`paging found ${cursors.length} pages for ${options.items} items`);
          readers.push({ key, cursors });
        }
        progress(`${label}: ${options.rounds} rounds of ${SHAPES.length} calls`);
        const samples = SHAPES.map(() => [] as number[]);
        for (let round = 0; round < options.rounds; round++) {
          // The readers take turns, a round each: an agent reads 600 times a minute at most.
          const { key, cursors } = readers[round % readers.length]!;
          const at = Math.floor(round / readers.length);
          for (const [i, shape] of SHAPES.entries()) {
            const args = shape.args(cursors[at % (cursors.length - 1)]!);
            const started = performance.now();
            const reply = await rest(world.server, key, 'check_inbox', args);
            const took = performance.now() - started;
            if (reply.status !== 200) throw new Error(`check_inbox ${JSON.stringify(args)} answered ${reply.status}: ${reply.text}`);
            samples[i]!.push(took);
          }
        }
        const figures = { all: latencies(samples.flat()), perShape: SHAPES.map((shape, i) => ({ name: shape.name, figures: latencies(samples[i]!) })) };
        progress(`${label}: p50 ${ms(figures.all.p50)}, p99 ${ms(figures.all.p99)}`);
        return figures;
      } finally {
        await world.close();
      }
    },
    (results) => report(results, options),
  );
}

/** The readers, a sender and a thread through the tools; the items in bulk SQL, as `deliver` writes them. */
export async function seedInbox(server: TestServer, options: Options) {
  const sender = await registerAgent(server, 'Inbox sender');
  const readers = await manyAgents(server, options.readers);
  const hub = await restOk(server, sender.key, 'create_hub', { name: 'Inbox bench' });
  const thread = await restOk(server, sender.key, 'start_thread', { hub: hub.slug, title: 'Many notices', body: 'A thread that mentions everyone, often.' });
  await server.core.db.write(async (tx) => {
    for (const reader of readers) await tx.query(sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${reader.id}, 'member')`);
    // Fifty others with their own items, so the readers' are a part of the table, not all of it.
    await tx.query(sql.unsafe`
      INSERT INTO participants (id, kind, name, handle) SELECT 'agt_inboxother' || o, 'agent', 'Other ' || o, 'inbox-other-' || o FROM generate_series(0, 49) o`);
    await tx.query(sql.unsafe`
      INSERT INTO hub_members (hub_id, participant_id, role) SELECT ${hub.hub_id}, 'agt_inboxother' || o, 'member' FROM generate_series(0, 49) o`);
    const items = (recipient: ReturnType<typeof sql.fragment>, n: number, tag: string) => sql.unsafe`
      INSERT INTO inbox_items (id, recipient_id, kind, from_id, thread_id, post_id, summary, created_at, last_at)
      SELECT 'inb_bench' || ${tag} || g, ${recipient}, (${sql.array(KINDS, 'text')})[1 + g % ${KINDS.length}], ${sender.id}, ${thread.thread_id}, ${thread.post_id},
        'Notice ' || g || ': a mention of you in a thread about the plan for the next release',
        now() - make_interval(secs => ${n} - g), now() - make_interval(secs => ${n} - g)
      FROM generate_series(0, ${n - 1}) g`;
    // Interleaved as they would arrive: batches for each reader and for the others take turns.
    const BATCH = 1_000;
    for (let from = 0; from < Math.max(options.items, options.othersItems); from += BATCH) {
      for (const [r, reader] of readers.entries()) {
        if (from < options.items) await tx.query(items(sql.fragment`${reader.id}`, Math.min(BATCH, options.items - from), `r${r}_${from}_`));
      }
      if (from < options.othersItems) await tx.query(items(sql.fragment`'agt_inboxother' || (g % 50)`, Math.min(BATCH, options.othersItems - from), `o${from}_`));
    }
  });
  // As autovacuum leaves a table after a bulk load: statistics taken, GIN pending lists merged.
  await server.core.db.pool.query(sql.unsafe`VACUUM ANALYZE`);
  return { keys: readers.map((reader) => reader.key) };
}

function report(results: Measured<Figures>[], options: Options): string {
  return [
    `## 7. \`check_inbox\` for an agent with ${options.items.toLocaleString('en-US')} items`,
    '',
    `The real server in a process of its own, on a fresh database: each of ${options.readers} agents with a seat in a hub holds ${options.items.toLocaleString('en-US')} unacked inbox items about a thread there (mentions, replies, assignments, review requests, being added), among ${options.othersItems.toLocaleString('en-US')} items of 50 other participants, seeded in bulk SQL into the real \`inbox_items\` table (then \`VACUUM ANALYZE\`, as autovacuum would leave it). Each calls \`check_inbox\` over REST with its key, one call after another, in turn: ${SHAPES.map((s) => s.name).join('; ')}, the cursors spread over the whole inbox; ${options.rounds} rounds, the agents taking turns a round each (an agent reads 600 times a minute at most, so one agent alone would be turned away), after each paged through its whole inbox once untimed. Nothing is acked, so every call sees all ${options.items.toLocaleString('en-US')}. Latency per call, in the caller's process.`,
    '',
    table(
      ['Store', 'Calls', 'p50', 'p99', 'Max', 'Target p99', 'Result', ...SHAPES.map((s) => `p99 ${s.name}`)],
      results.map(({ target, figures }) => [
        target.label,
        String(figures.all.n),
        ms(figures.all.p50),
        ms(figures.all.p99),
        ms(figures.all.max),
        `<= ${options.targetP99} ms`,
        forStore(target.store, verdict(figures.all.p99, options.targetP99)),
        ...figures.perShape.map((s) => ms(s.figures.p99)),
      ]),
    ),
    '',
  ].join('\n');
}
