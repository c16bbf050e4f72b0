import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { KEPT_FACTS, KEPT_SHARED } from '../kernel/pace.ts';
import { cooldownRefusal } from './paceCooldown.ts';
import { refuseIfPaused } from './pauses.ts';
import { countInRun, refuseTooSoon } from './paceRun.ts';
import type { InlineWrite } from '../../db/plannedWrite.ts';
import { factsOf, rulesFor, type Facts, type Limit, type Place, type Rule } from './paceRules.ts';
import { countIn, countInline, lockKeys, PaceRefused, refusalOf } from './paceWindows.ts';

export type { Limit, Place } from './paceRules.ts';

/**
 * The limits step of the tool pipeline: every write a tool declares limits for passes here, decided
 * from the Actor, its standing and the place it writes to, on two calls: `check` before any work (a
 * look, no lock) and `admit` inside the write's own transaction (for certain). It holds the daily
 * allowance of unlinked agents and guests (answered as HTTP 200 `limit_reached`), the cooldown, and
 * the rolling pace windows of SPEC part 8 (`429 rate_limited`, paceRules.ts). Every window is
 * measured by `core.pace.now()`.
 */

export const DAILY_WRITES = 20;
const WINDOW_MS = 24 * 3_600_000;

/** What a counted write reports back (SPEC part 2 "Allowance object"). */
export type Allowance = { used: number; limit: number; remaining: number; per: 'day'; resets_at: string };

/** Thrown when a pool is full: the pipeline answers HTTP 200 with `limit_reached`, nothing saved. */
export class LimitReached extends Error {
  readonly allowance: Allowance;
  constructor(allowance: Allowance) {
    super('limit reached');
    this.allowance = allowance;
  }
}

/**
 * The pool a write counts in, or null when it has no daily count: an agent nobody linked counts in its
 * own pool (its sub-agents act as it); people and linked agents have none.
 */
function allowancePool(actor: Actor): string | null {
  // A guest person without a verified email counts like an unlinked agent (SPEC part 8).
  if (actor.guest) return `guest:${actor.id}`;
  return actor.kind === 'agent' && actor.human === null ? `agent:${actor.id}` : null;
}

/** The pool a counted write takes from: a guest who confirmed an email has an hourly pace instead (paceRules.ts). */
function dailyPool(actor: Actor, limits: readonly Limit[], facts: Facts): string | null {
  const pool = limits.includes('write') ? allowancePool(actor) : null;
  if (pool && actor.guest && facts.standing.verified) return null;
  return pool;
}

/**
 * How long the facts of a write are taken on trust. A pause, a suspension or a cooldown made on this
 * instance counts at once (`forgetFacts`); made on another, or a seat or standing that changed, within
 * this, as revocation does (SPEC part 5: 5 s). Every counted write starts here: read each time, the
 * facts cost a statement and most of a write's database time.
 */
export const FACTS_TTL_MS = 4_000;

const factsKey = (actor: Actor, place: Place) => `${actor.id} ${actor.kind} ${actor.human ?? ''} ${actor.guest ? 'g' : ''} ${place.hub ?? ''} ${place.thread ?? ''}`;

/** The facts of writes by `factsKey`, kept and read again ahead of their age, many in one statement, off any write's path. */
const keptFacts = (core: Core) => core.pace.batch(KEPT_FACTS, FACTS_TTL_MS, (keys) => readFacts(core, core.db.pool, keys));

/**
 * The facts of the writes `keys` name, on `conn`. Whether others take part is one answer for all of
 * a human's agents in one place: the costliest fact (it may pass every seat of the hub), read once
 * for them all and kept beside.
 */
async function readFacts(core: Core, conn: CommonQueryMethods, keys: readonly string[]): Promise<Map<string, Facts>> {
  const shared = core.pace.kept<boolean>(KEPT_SHARED);
  const asked = keys.map((key) => {
    const [actorId, kind, human, , hub, thread] = key.split(' ') as [string, string, string, string, string, string];
    const sharedKey = `${human} ${hub} ${thread}`;
    const known = human ? shared.get(sharedKey) : undefined;
    const withShared = kind === 'agent' && human !== '' && hub !== '' && known === undefined;
    return { actorId, agent: kind === 'agent', human: human || null, hub: hub || null, thread: thread || null, withShared, sharedKey, known };
  });
  const read = await factsOf(conn, asked, core.pace.now());
  return new Map(
    read.map((facts, i) => {
      const { withShared, sharedKey, known } = asked[i]!;
      if (withShared) shared.set(sharedKey, facts.shared, Date.now() + FACTS_TTL_MS);
      return [keys[i]!, { ...facts, shared: known ?? facts.shared }];
    }),
  );
}

/**
 * The facts of the write, refused at once when a pause covers it or the agent is in its cooldown:
 * kept, or (none kept) read now on `conn`, which the write may hold in a transaction, and kept.
 */
async function factsUnlessHeld(core: Core, conn: CommonQueryMethods, actor: Actor, limits: readonly Limit[], place: Place, now: number): Promise<Facts> {
  const reads = keptFacts(core);
  const key = factsKey(actor, place);
  let facts = reads.peek(key);
  if (!facts) {
    const begun = reads.begin();
    facts = (await readFacts(core, conn, [key])).get(key)!;
    reads.keep(key, facts, begun);
  }
  refuseIfPaused(facts.paused, actor, place.hub !== undefined && place.hubSlug !== undefined ? { slug: place.hubSlug } : null, limits.includes('write'));
  if (facts.cooldownUntil !== null && facts.cooldownUntil > now) throw cooldownRefusal(facts.cooldownUntil, now);
  return facts;
}

/**
 * The windows a write found full are remembered until each frees a place, so that the writes after it
 * are refused before any work (a live edit before it goes live) without asking the store. A window
 * frees no sooner: marks only join it until then (one that rolls back may free it early).
 */
const fullWindows = (core: Core) => core.pace.kept<number>('full windows');

function refuseKnownFull(core: Core, rules: readonly Rule[], now: number): void {
  const full = fullWindows(core);
  // A window of amounts, or of distinct places, may still take a smaller write or one to a place it counted.
  const plain = rules.filter((rule) => rule.weight === undefined && rule.distinct === undefined);
  const known = plain.flatMap((rule) => ((freeAt) => (freeAt !== undefined && freeAt > now ? [{ rule, freeAt }] : []))(full.get(rule.key)));
  const refused = refusalOf(known, now);
  if (refused) throw refused;
}

function rememberFull(core: Core, refused: PaceRefused, now: number): void {
  const full = fullWindows(core);
  for (const { key, freeAt } of refused.full) full.set(key, freeAt, Date.now() + Math.max(0, freeAt - now));
}

/** The characters of pad text a write sends to be saved: its whole text, or the texts of its edits and inserts. */
function padChars(input: Record<string, unknown>): number {
  const texts = (list: unknown) => (Array.isArray(list) ? list.reduce((sum: number, item) => sum + (typeof item?.text === 'string' ? item.text.length : 0), 0) : 0);
  return (typeof input.text === 'string' ? input.text.length : 0) + texts(input.edits) + texts(input.inserts);
}

/** Where a write lands, from its tool's target (thread, pad, hub) and what it says (`body`). */
export function placeOf(target: unknown, input: Record<string, unknown>): Place {
  const t = (target ?? {}) as { hub?: { id?: string; slug?: string; audience?: string }; thread?: { id?: string }; threadId?: string | null; dm?: { id?: string }; pad?: { id?: string } };
  return {
    hub: t.hub?.id,
    hubSlug: t.hub?.slug,
    public: t.hub?.audience === 'public',
    // A DM is a thread of two as the per-thread limits count it.
    thread: t.thread?.id ?? t.threadId ?? t.dm?.id ?? undefined,
    pad: t.pad?.id,
    text: typeof input.body === 'string' ? input.body : undefined,
    chars: padChars(input),
  };
}

const PoolRow = z.object({ used: z.number(), oldest: z.number().nullable() });

async function usage(conn: CommonQueryMethods, pool: string, now: number) {
  return conn.one(sql.type(PoolRow)`
    SELECT count(*) AS used, min(at) AS oldest FROM counted_writes
    WHERE pool = ${pool} AND at > to_timestamp(${(now - WINDOW_MS) / 1000})`);
}

function allowanceOf(used: number, oldest: number | null, now: number): Allowance {
  // The window frees up one write when its oldest counted write is a day old.
  const resets = (oldest ?? now) + WINDOW_MS;
  return { used, limit: DAILY_WRITES, remaining: Math.max(0, DAILY_WRITES - used), per: 'day', resets_at: new Date(resets).toISOString() };
}

/**
 * A look before any work is done (no lock): a full pool or window is refused before, say, an edit
 * goes live. `admit` decides for certain, from the facts the look read (handed back).
 */
export async function check(core: Core, conn: CommonQueryMethods, actor: Actor, limits: readonly Limit[], place: Place): Promise<Facts | undefined> {
  if (!limits.length) return undefined;
  const now = core.pace.now();
  const facts = await factsUnlessHeld(core, conn, actor, limits, place, now);
  const pool = dailyPool(actor, limits, facts);
  if (pool) {
    const { used, oldest } = await usage(conn, pool, now);
    if (used >= DAILY_WRITES) throw new LimitReached(allowanceOf(used, oldest, now));
  }
  refuseKnownFull(core, rulesFor(actor, limits, place, core.pace.scale, facts), now);
  const run = runOf(limits, place);
  if (run) await refuseTooSoon(conn, actor, run, now, core.pace.scale);
  return facts;
}

/** The thread whose agent-only run a post counts in (paceRun.ts). */
const runOf = (limits: readonly Limit[], place: Place) => (limits.includes('post') ? place.thread : undefined);

/**
 * Counts one write in the caller's transaction, or throws LimitReached or PaceRefused. The pool and
 * every window are locked for the rest of the transaction, so of 2N concurrent writes into a window
 * with N left exactly N are admitted, across every instance; a write that rolls back takes its counts
 * with it. A write with no daily pool and no agent-only run (most) takes one statement beside its facts,
 * and none for them when `check` read them moments before (`looked`).
 */
export async function admit(
  core: Core,
  tx: DatabaseTransactionConnection,
  actor: Actor,
  limits: readonly Limit[],
  place: Place,
  tool: string,
  looked?: Facts,
): Promise<Allowance | null> {
  if (!limits.length) return null;
  const now = core.pace.now();
  const facts = looked ?? (await factsUnlessHeld(core, tx, actor, limits, place, now));
  const pool = dailyPool(actor, limits, facts);
  const rules = rulesFor(actor, limits, place, core.pace.scale, facts);
  const run = runOf(limits, place);
  const locks = [...(pool ? [`limits ${pool}`] : []), ...(run ? [`pace run ${run}`] : [])];
  let allowance: Allowance | null = null;
  if (pool) {
    // The pool is decided before the windows: at its limit the answer is limit_reached, not a pace.
    // Every key is locked here in one sorted call (pace_windows takes the rules' again, already held),
    // so no two writes take them in different orders.
    await lockKeys(tx, [...locks, ...rules.map((rule) => rule.key)]);
    await tx.query(sql.unsafe`DELETE FROM counted_writes WHERE pool = ${pool} AND at <= to_timestamp(${(now - WINDOW_MS) / 1000})`);
    const { used, oldest } = await usage(tx, pool, now);
    if (used >= DAILY_WRITES) throw new LimitReached(allowanceOf(used, oldest, now));
    allowance = allowanceOf(used + 1, oldest ?? now, now);
  }
  try {
    await countIn(tx, rules, now, locks);
  } catch (error) {
    if (error instanceof PaceRefused) rememberFull(core, error, now);
    throw error;
  }
  if (run) await refuseTooSoon(tx, actor, run, now, core.pace.scale);
  if (pool) await tx.query(sql.unsafe`INSERT INTO counted_writes (pool, participant_id, tool, at) VALUES (${pool}, ${actor.id}, ${tool}, to_timestamp(${now / 1000}))`);
  if (run) await countInRun(tx, actor, run, now);
  return allowance;
}

/**
 * `admit` as one SQL expression for a write that commits in a single statement of its own (a pad
 * edit's version), when counting it is only its windows: no daily pool, no agent-only run. The
 * windows are counted inside that statement, which fails whole when one is full (`countInline`);
 * `refusal` answers the PaceRefused `admit` would throw, and remembers the full windows. Null when
 * the write needs `admit` in a transaction.
 */
export function admitInline(core: Core, actor: Actor, limits: readonly Limit[], place: Place, facts: Facts): InlineWrite | null {
  if (!limits.length || dailyPool(actor, limits, facts) || runOf(limits, place)) return null;
  const now = core.pace.now();
  const counted = countInline(rulesFor(actor, limits, place, core.pace.scale, facts), now);
  return {
    get sql() {
      return counted.sql;
    },
    windows: counted.windows,
    refusal(error) {
      const refused = counted.refused(error);
      if (refused) rememberFull(core, refused, now);
      return refused;
    },
  };
}
