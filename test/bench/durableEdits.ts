import { request, rest, type Reachable } from '../support/server.ts';
import { perStore, type Benchmark, type Measured } from './benchmark.ts';
import { onFreshServer, restOk, type ServerProcess } from './setup.ts';
import { atLeast, countedLoop, sideBySide, spread, type SideFigures } from './sideBySide.ts';
import { rotating, spreadEditors, spreadPeople } from './spread.ts';
import type { BareEdit } from './serverProcess.ts';
import { int, ms, progress, table, verdict } from './stats.ts';

type Options = {
  writers: number;
  pads: number;
  agents: number;
  edits: number;
  warmup: number;
  rounds: number;
  /** Edits a second `edit_pad` must reach (issue 19). */
  target: number;
  /** The least share of the bare endpoint's throughput, and the most multiple of its p99, for `edit_pad` (issue 25). */
  targetRatio: number;
  targetP99Ratio: number;
};

/** The three loads, measured in the same run on the same server, and the `busy` answers each edit_pad load met. */
type Figures = { onePerson: SideFigures; people: SideFigures; bare: SideFigures; busy: { onePerson: number; people: number } };

/**
 * A pad that agents of one person take turns to edit; `version` is the one its writer last saw, and
 * `busy` counts the calls on it the server turned away unmade (`503 busy`) and that were sent again.
 */
type TurnPad = { padId: string; version: number; blockId: string; keys: string[]; turn: number; busy: number };

const PAD_TEXT = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the benchmark pad, a sentence of ordinary length.`).join('\n\n');
const revision = (i: number) => `Paragraph 4 of the benchmark pad, revised for the ${i + 1}th time, a sentence of ordinary length.`;

/**
 * Durable `edit_pad` throughput: `writers` closed-loop writers over `pads` pads, each call answered
 * once its version is committed, once as agents of one person and once as that many people, beside
 * the bare endpoint of the same server process (`node:http`, the change made on the live document,
 * one INSERT of its update) driven the same way, in rounds that take turns.
 */
export function durableEdits(options: Options): Benchmark {
  return perStore(
    'durable edits: edit_pad throughput',
    ({ store, label }) => onFreshServer(store, (server) => measure(server, label, options)),
    (results) => report(results, options),
  );
}

/**
 * Closed-loop `edit_pad` writers over pads of their own on `server`: `writer` turns through its pads,
 * each call answered once its version is committed, and `busy` counts the calls turned away unmade.
 */
export type EditWriters = { writers: (() => Promise<void>)[]; busy(): number };

/** Writers of `edit_pad` over `pads`: each call sends the next revision against the version its writer last saw. */
function editWriters(server: Reachable, pads: TurnPad[], writers: number): EditWriters {
  let edit = 0;
  /**
   * One edit, timed until it is made: a write that waited past the server's bound for a database
   * connection (2 s) is answered `503 busy` unmade, as when other work crowds the machine; it is sent
   * again at once and counted, so that such a run still ends, with figures that show it.
   */
  const editPad = async (pad: TurnPad) => {
    const key = pad.keys[pad.turn++ % pad.keys.length]!;
    const args = { pad_id: pad.padId, base_version: pad.version, edits: [{ block_id: pad.blockId, text: revision(edit++) }] };
    let reply = await rest(server, key, 'edit_pad', args);
    while (reply.status === 503 && reply.body?.error === 'busy') {
      pad.busy++;
      reply = await rest(server, key, 'edit_pad', args);
    }
    const data = reply.body?.data;
    if (reply.status !== 200 || data.conflicts?.length || !(data.version > pad.version)) throw new Error(`edit_pad did not apply: ${reply.status} ${reply.text}`);
    pad.version = data.version;
  };
  // Made once, so that they keep turning through their pads from round to round.
  return { writers: rotating(pads, writers, editPad), busy: () => busyAnswers(pads) };
}

/** `writers` people on `server`, each with `agentsEach` agents in a hub of their own, and one writer per person turning through `padsEach` of their pads. */
export async function peopleWriters(server: Reachable, options: { writers: number; padsEach: number; agentsEach: number }): Promise<EditWriters> {
  const people = await spreadPeople(server, options.writers, options.agentsEach, 'Durable edits', PAD_TEXT);
  // Writer w is person w: `rotating` gives it pads w, w + writers, ..., which are theirs.
  const perPerson: TurnPad[][] = [];
  for (const person of people) perPerson.push(await padsInTurn(server, person.pads, options.padsEach));
  const pads = Array.from({ length: options.padsEach }, (_, j) => perPerson.map((pads) => pads[j]!)).flat();
  return editWriters(server, pads, options.writers);
}

/**
 * Writers of the bare endpoint (`serverProcess.ts`) over `pads`, through the same client as `edit_pad`
 * (`request`, which `rest` sends by): each answer is read whole and parsed, as any writer must to
 * learn what was made.
 */
export function bareWriters(server: ServerProcess, pads: readonly { padId: string }[], writers: number) {
  let edit = 0;
  const bare = async (pad: { padId: string }) => {
    const reply = await request(server.bareUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ padId: pad.padId, text: revision(edit++) } satisfies BareEdit) });
    if (reply.status !== 200) throw new Error(`the bare endpoint answered ${reply.status} ${reply.text}`);
  };
  return rotating(pads, writers, bare);
}

/** Pads of the kind the edit_pad loads write, for the bare endpoint to write to: no agent edits them. */
export async function barePads(server: ServerProcess, count: number) {
  return (await spreadEditors(server, count, 'Bare writes', PAD_TEXT)).pads;
}

async function measure(server: ServerProcess, label: string, options: Options): Promise<Figures> {
  const padsEach = options.pads / options.writers;
  const agentsEach = options.agents / options.writers;
  progress(`${label}: durable edits, seeding ${options.agents} agents of one person, and ${options.writers} people with ${agentsEach} agents each`);
  const onePerson = await spreadEditors(server, options.agents, 'Durable edits', PAD_TEXT);
  const onePersonPads = await padsInTurn(server, onePerson.pads, options.pads);
  const people = await peopleWriters(server, { writers: options.writers, padsEach, agentsEach });
  // The bare endpoint writes to pads of the same kind that no agent edits.
  const bare = onePerson.pads.slice(options.pads, 2 * options.pads);
  if (bare.length !== options.pads) throw new Error(`the bare endpoint needs ${options.pads} pads of its own: give one person at least ${2 * options.pads} agents`);
  const writers = { onePerson: editWriters(server, onePersonPads, options.writers), people, bare: bareWriters(server, bare, options.writers) };

  progress(`${label}: ${options.writers} writers, ${options.warmup} warm-up edits, then ${options.rounds} rounds of ${stretch(options)} for each of the three loads`);
  const figures = await sideBySide(
    {
      onePerson: (edits) => countedLoop(writers.onePerson.writers, edits),
      people: (edits) => countedLoop(writers.people.writers, edits),
      bare: (edits) => countedLoop(writers.bare, edits),
    },
    { rounds: options.rounds, stretch: stretch(options), warmup: options.warmup, seed: 20261127 },
  );
  const busy = { onePerson: writers.onePerson.busy(), people: writers.people.busy() };
  const line = (side: SideFigures, busyCalls: number) => `${int(side.rate)}/s p99 ${ms(side.p99)}${busyCalls ? ` (${busyCalls} busy answers)` : ''}`;
  progress(`${label}: one person's agents ${line(figures.onePerson, busy.onePerson)}; ${options.writers} people ${line(figures.people, busy.people)}; bare ${line(figures.bare, 0)}`);
  return { ...figures, busy };
}

const busyAnswers = (pads: readonly TurnPad[]) => pads.reduce((sum, pad) => sum + pad.busy, 0);

const stretch = (options: Options) => Math.round(options.edits / options.rounds);

/**
 * The first `count` of one person's pads, each to be edited at paragraph 4 by its own agent and, in
 * turn, by the agents whose pads are past `count` (spread evenly), so no agent's minute fills.
 */
async function padsInTurn(server: Reachable, pads: { padId: string; version: number; agent: { key: string } }[], count: number): Promise<TurnPad[]> {
  const inTurn: TurnPad[] = [];
  for (const pad of pads.slice(0, count)) {
    const full = await restOk(server, pad.agent.key, 'open_pad', { pad_id: pad.padId, mode: 'full' });
    inTurn.push({ padId: pad.padId, version: pad.version, blockId: String(full.blocks[3]), keys: [pad.agent.key], turn: 0, busy: 0 });
  }
  for (const [i, pad] of pads.slice(count).entries()) inTurn[i % count]!.keys.push(pad.agent.key);
  return inTurn;
}

function report(results: Measured<Figures>[], options: Options): string {
  const agentsEach = options.agents / options.writers;
  const ratio = (value: number) => `${value.toFixed(2)}x`;
  const rows = results.flatMap(({ target, figures: { onePerson, people, bare, busy } }) => {
    const judged = (load: string, side: SideFigures, busyCalls: number) => [
      target.label,
      load,
      int(side.rate),
      ms(side.p50),
      ms(side.p99),
      spread(side.roundRates),
      atLeast(side.rate, options.target),
      `${ratio(side.rate / bare.rate)}: ${atLeast(side.rate / bare.rate, options.targetRatio)}`,
      `${ratio(side.p99 / bare.p99)}: ${verdict(side.p99 / bare.p99, options.targetP99Ratio)}`,
      int(busyCalls),
    ];
    return [
      judged(`\`edit_pad\`, ${options.agents} agents of one person`, onePerson, busy.onePerson),
      judged(`\`edit_pad\`, ${options.writers} people with ${agentsEach} agents each`, people, busy.people),
      [target.label, 'Bare: `node:http`, the live change, one INSERT', int(bare.rate), ms(bare.p50), ms(bare.p99), spread(bare.roundRates), '(baseline)', '(baseline)', '(baseline)', 'n/a'],
    ];
  });
  const perPad = (options.warmup + options.edits) / options.pads;
  const perAgent = (options.warmup + options.edits) / options.agents;
  return [
    `## 9. Durable \`edit_pad\` throughput, ${options.writers} writers over ${options.pads} pads: one person's agents and ${options.writers} people`,
    '',
    `${options.writers} closed-loop writers send \`edit_pad\` through REST, each call replacing paragraph 4 of an 8-paragraph pad against the version its writer last saw, and answered once its version is committed; a writer sends its next call as soon as the last one answered. Two loads, each over ${options.pads} pads of its own, each writer turning through ${options.pads / options.writers} pads: **one person's agents**, ${options.agents} agents of one person seated in one hub, two to a pad taking turns, so that one person has ${options.writers} calls in flight at all times (a person's pool must not serialise their agents); and **${options.writers} people**, each signed in with the development form (from a loopback address of their own: it takes 30 sign-ins a network per 10 minutes) with ${agentsEach} agents seated in a hub of their own, each writer one person turning through their own pads, two of their agents to a pad. The server runs at the production limits: in the whole run each pad takes about ${int(perPad)} edits and each agent about ${int(perAgent)}, under their 60 a minute, so none is refused for pace, and no hourly pool of a person's agents counts (nobody else takes part in their hubs). The baseline is the same server process's bare endpoint (\`test/bench/serverProcess.ts\`: \`node:http\`, the paragraph replaced on the live document, its update committed in one INSERT), driven by ${options.writers} writers the same way over another ${options.pads} pads of the same kind, which no agent edits, through the same client: every answer, \`edit_pad\`'s and the bare endpoint's, is read whole and parsed as JSON. Each of the three warms up with ${int(options.warmup)} edits, then has ${int(options.edits)} measured in ${options.rounds} rounds of ${int(stretch(options))}, the three taking their turns in each round in an order drawn afresh (from a fixed seed), so that the machine's other work falls on all three alike. Edits a second are over the measured rounds; p50 and p99 are per call, in the writers' process, from the call until its edit is made: an \`edit_pad\` that waited past the server's bound for a database connection (2 s) is answered \`503 busy\` unmade; it is sent again at once within the same call, and counted in the last column (warm-up included). Targets: \`edit_pad\` >= ${int(options.target)} edits a second (issue 19), and beside the bare endpoint in the same run, >= ${options.targetRatio}x its throughput with a p99 <= ${options.targetP99Ratio}x its p99 (issue 25). Only this section: \`BENCH_ONLY=durable npm run bench\`.`,
    '',
    table(['Store', 'Load', 'Edits a second', 'p50', 'p99', 'Rounds (edits a second)', `>= ${int(options.target)}/s`, `Throughput / bare (>= ${options.targetRatio}x)`, `p99 / bare p99 (<= ${options.targetP99Ratio}x)`, '`busy` answers, sent again'], rows),
    '',
    ...results.map(({ target, figures: { onePerson, people } }) => `- ${target.label}: one person's agents wrote at ${ratio(onePerson.rate / people.rate)} the rate of ${options.writers} people, with ${ratio(onePerson.p99 / people.p99)} their p99.`),
    '',
  ].join('\n');
}
