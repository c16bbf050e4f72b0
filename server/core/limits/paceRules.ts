import { createHash, randomUUID } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { scaled } from '../kernel/pace.ts';
import { pauseColumnsOf, pausedFrom, type Paused } from './pauses.ts';
import { readsVerifiedSql, verifiedSql } from '../identity/standing.ts';

/**
 * The limits a tool passes, named in its definition (`limits: ['write', 'post']`):
 * - `write`: a counted write (SPEC part 8: a post, new thread, new pad, pad edit, task, decision):
 *   the daily allowance, writes per participant, and a linked agent's hourly pool;
 * - `post`: a post in a thread: the per-thread paces of agents and the same-text limits;
 * - `padEdit`: agents' edits to one pad; `padText`: the characters of pad text a participant saves a day;
 *   `reaction`, `hubCreate`, `hubJoin`: their own rows.
 */
export type Limit = 'write' | 'post' | 'padEdit' | 'padText' | 'reaction' | 'hubCreate' | 'hubJoin';

/** Where a write lands and what it says, as the limits key it: read from the tool's target and input. */
export type Place = {
  hub?: string | undefined;
  /** The hub's slug, as a refusal names it. */
  hubSlug?: string | undefined;
  thread?: string | undefined;
  pad?: string | undefined;
  text?: string | undefined;
  public?: boolean | undefined;
  /** The characters of pad text the write sends to be saved. */
  chars?: number | undefined;
};

/** One rolling window a write counts in. */
export type Rule = {
  /** Stable name, given back as `limit` in a refusal. */
  name: string;
  /** Whom and where it counts: the rows of one window share it. */
  key: string;
  max: number;
  windowMs: number;
  /** How the refusal names it: "one agent's posts in one thread (20 a minute)". */
  says: string;
  /** Several participants draw on it: running it out does not count toward an agent's cooldown. */
  shared: boolean;
  /** Counts distinct places (the threads one text went to), not writes: the place this write adds. */
  distinct?: string;
  /** Counts an amount (characters), not writes: this write's amount; its marks are kept per `bucketMs`. */
  weight?: number;
  bucketMs?: number;
};

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The longest window any rule here opens (hubs made, pad text saved): a row older counts in none. */
export const LONGEST_WINDOW_MS = DAY;
/** SPEC part 8 "Same text": texts this long or longer are compared. */
const SAME_TEXT_MIN = 40;

/** Whom the pools of a human count together: a verified address, else the human (or unlinked agent). */
export type Standing = { pool: string; verified: boolean; reach: boolean };

/** What the limits of one write are decided from, read in one query. */
export type Facts = {
  /** When the agent's cooldown ends (epoch ms), or null. */
  cooldownUntil: number | null;
  standing: Standing;
  /** Whether the hub or thread holds someone besides the agent's human and their agents (linked agents only). */
  shared: boolean;
  /** The pauses covering the write (pauses.ts). */
  paused: Paused;
};

const FactsRow = z.object({
  cooldown: z.number().nullable(),
  verified: z.boolean().nullable(),
  reach: z.boolean().nullable(),
  address: z.string().nullable(),
  shared: z.boolean(),
  paused_server: z.array(z.string()),
  paused_self: z.boolean(),
  paused_hub: z.boolean(),
});

/**
 * Whose write, and where, as the facts are read for it: the writer (its id, whether it is an agent,
 * its linked human or null) and the hub and thread it writes in (or null); `withShared` asks whether
 * anyone else takes part there (a linked agent's, when not known already).
 */
export type FactsAsked = { actorId: string; agent: boolean; human: string | null; hub: string | null; thread: string | null; withShared: boolean };

/**
 * The facts of many writes, in one query, in the order asked: the caller's cooldown, the standing of
 * its human (an agent's linked human, a person themself, an unlinked agent itself: verified, reads
 * verified, and the pool its writes share, since SPEC part 2 makes one address one human, so IDs
 * verified with the same address pool together), whether anyone else takes part in the hub or thread
 * (`withShared`; false otherwise), and the pauses covering the write.
 */
export async function factsOf(conn: CommonQueryMethods, asked: readonly FactsAsked[], now: number): Promise<Facts[]> {
  const column = <K extends keyof FactsAsked>(key: K) => asked.map((write) => write[key]);
  const others = sql.fragment`o.id <> s.human AND o.linked_human IS DISTINCT FROM s.human`;
  // Prepared once per connection, and planned once (the writes asked are read through `facts_asked`,
  // migration 0044): every counted write starts here, and planning it cost more than running it.
  // Whether others take part is a question of the place and the human, not of the agent: asked once
  // for each, however many of one person's agents are read together (in a hub of hundreds of them,
  // each asking scanned every member).
  const rows = await conn.any(sql.prepared('pace_facts', FactsRow)`
    WITH k AS MATERIALIZED (
      SELECT * FROM facts_asked(${sql.array(column('actorId'), 'text')}, ${sql.array(column('agent'), 'bool')}, ${sql.array(column('human'), 'text')},
          ${sql.array(column('hub'), 'text')}, ${sql.array(column('thread'), 'text')}, ${sql.array(column('withShared'), 'bool')})
        AS k(actor_id, agent, human, hub, thread, with_shared, i)),
    shares AS MATERIALIZED (
      SELECT s.hub, s.thread, s.human,
        EXISTS (SELECT 1 FROM hub_members m JOIN participants o ON o.id = m.participant_id WHERE m.hub_id = s.hub AND ${others})
        OR EXISTS (SELECT 1 FROM item_members m JOIN participants o ON o.id = m.participant_id WHERE m.item_id = s.thread AND ${others}) AS shared
      FROM (SELECT DISTINCT hub, thread, human FROM k WHERE with_shared) s)
    SELECT
      (SELECT until FROM pace_cooldowns WHERE k.agent AND participant_id = k.actor_id AND until > ${now}) AS cooldown,
      ${verifiedSql('p')} AS verified, ${readsVerifiedSql('p')} AS reach,
      CASE WHEN p.email_verified_at IS NOT NULL THEN p.email_key END AS address,
      k.with_shared AND coalesce((SELECT x.shared FROM shares x
        WHERE x.hub IS NOT DISTINCT FROM k.hub AND x.thread IS NOT DISTINCT FROM k.thread AND x.human IS NOT DISTINCT FROM k.human), false) AS shared,
      ${pauseColumnsOf({ agent: sql.fragment`k.agent`, actorId: sql.fragment`k.actor_id`, human: sql.fragment`k.human`, hub: sql.fragment`k.hub` })}
    FROM k
    LEFT JOIN participants p ON p.id = coalesce(k.human, k.actor_id)
    ORDER BY k.i`);
  return rows.map((row, i) => {
    const owner = asked[i]!.human ?? asked[i]!.actorId;
    return {
      cooldownUntil: row.cooldown,
      standing: { pool: row.address ? `addr:${row.address}` : `id:${owner}`, verified: row.verified ?? false, reach: row.reach ?? false },
      shared: row.shared,
      paused: pausedFrom(row),
    };
  });
}

/** A text as the same-text limits compare it, hashed: the text itself is never kept. */
function textHash(text: string | undefined): string | null {
  if (text === undefined) return null;
  const plain = text.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();
  if (plain.length < SAME_TEXT_MIN) return null;
  return createHash('sha256').update(plain).digest('base64url').slice(0, 32);
}

/**
 * Pad text saved (SPEC part 8): 3,000,000 characters a rolling day per participant (a sub-agent with
 * its parent), through tools and live typing alike; `chars` is what this write saves.
 */
export const padTextRule = (participantId: string, chars: number, scale: number): Rule => ({
  name: 'pad_text_saved',
  key: `ps:${participantId}`,
  max: scaled(3_000_000, scale),
  windowMs: DAY,
  says: 'pad text saved by one participant (3,000,000 characters a day)',
  shared: false,
  weight: chars,
  bucketMs: MINUTE,
});

/**
 * Every rolling window of SPEC part 8 that a write with these limits counts in, decided here alone
 * from the Actor, its standing and the place. People count in their own windows; an agent also in
 * the windows of its thread and its human. A sub-agent acts as its parent (same id), so it counts
 * with it. `scale` multiplies every number (1 in production).
 */
export function rulesFor(actor: Actor, limits: readonly Limit[], place: Place, scale: number, facts: Facts): Rule[] {
  if (!limits.length) return [];
  const agent = actor.kind === 'agent';
  const rules: Rule[] = [];
  const add = (name: string, key: string, max: number, windowMs: number, says: string, shared: boolean, distinct?: string) =>
    rules.push({ name, key, max: scaled(max, scale), windowMs, says, shared, ...(distinct !== undefined ? { distinct } : {}) });

  if (limits.includes('write')) {
    add('writes', `w:${actor.id}`, 60, MINUTE, 'writes per participant (60 a minute)', false);
    // A linked agent's pool: all of its human's agents, counted only where someone else takes part.
    if (agent && actor.human !== null && place.hub !== undefined && facts.shared) {
      const { pool, verified, reach } = facts.standing;
      const max = (verified ? 2_000 : 500) * (reach ? 4 : 1);
      add('linked_agents_pool', `lp:${pool}`, max, HOUR, `posts of one human's agents where others take part (${max} an hour)`, true);
    }
    // A guest who confirmed an email: no daily count, an hourly pool shared by every ID of that address.
    if (actor.guest && facts.standing.verified) {
      const { pool, reach } = facts.standing;
      const max = 300 * (reach ? 4 : 1);
      add('verified_guest_posts', `gv:${pool}`, max, HOUR, `writes of a guest with a confirmed email (${max} an hour)`, true);
    }
    // Guests posting in public threads: per guest (by address once confirmed), per thread, and server-wide.
    if (actor.guest && place.public && place.thread !== undefined) {
      const { pool, verified } = facts.standing;
      const max = verified ? 240 : 60;
      add('guest_posts', `gg:${pool}`, max, HOUR, `a guest's posts in public threads (${max} an hour${verified ? '' : ' without an email; 240 with one'})`, verified);
      add('guest_posts_in_thread', `gt:${place.thread}`, 600, HOUR, "all guests' posts in one public thread (600 an hour)", true);
      add('guest_posts_everywhere', 'ga', 50_000, HOUR, "all guests' posts in public threads on this server (50,000 an hour)", true);
    }
  }
  if (limits.includes('post') && agent && place.thread !== undefined) {
    const { pool } = facts.standing;
    add('agent_posts_in_thread', `tp:${place.thread}:${actor.id}`, 20, MINUTE, "one agent's posts in one thread (20 a minute)", false);
    add('human_agents_in_thread', `th:${place.thread}:${pool}`, 3_000, 10 * MINUTE, "one human's agents in one thread (3,000 per 10 minutes)", true);
    add('agents_in_thread', `ta:${place.thread}`, 600, 10 * MINUTE, 'all agents in one thread (600 per 10 minutes)', true);
  }
  const hash = limits.includes('post') ? textHash(place.text) : null;
  if (hash) {
    if (place.thread !== undefined) {
      const max = agent ? 1 : 3;
      add('same_text_in_thread', `st:${place.thread}:${hash}:${actor.id}`, max, 10 * MINUTE, `the same text in one thread (${max} per 10 minutes)`, false);
    }
    // A new thread (no id yet) is a thread of its own.
    const where = place.thread ?? `new:${randomUUID()}`;
    if (agent) {
      const { pool } = facts.standing;
      add('same_text_across_threads', `sx:${pool}:${hash}`, 5, HOUR, "the same text in different threads (5 threads an hour for one human's agents)", true, where);
    } else {
      add('same_text_across_threads', `sx:id:${actor.id}:${hash}`, 20, HOUR, 'the same text in different threads (20 threads an hour)', false, where);
    }
  }
  if (limits.includes('padEdit') && agent && place.pad !== undefined) {
    add('agent_edits_to_pad', `pe:${place.pad}`, 60, MINUTE, 'agent edits to one pad (60 a minute)', true);
  }
  if (limits.includes('padText') && place.chars) rules.push(padTextRule(actor.id, place.chars, scale));
  if (limits.includes('reaction')) {
    if (place.thread !== undefined) add('reactions_in_thread', `rt:${place.thread}`, 300, HOUR, 'reactions in one thread (300 an hour)', true);
    const { pool } = facts.standing;
    add('reactions_per_human', `rh:${pool}`, 2_000, HOUR, 'reactions of one human with their agents (2,000 an hour)', agent);
  }
  if (limits.includes('hubCreate')) {
    const { pool } = facts.standing;
    add('hubs_created', `hc:${pool}`, 20, DAY, 'hubs created by one human with their agents (20 a day)', agent);
  }
  if (limits.includes('hubJoin')) {
    const { verified } = facts.standing;
    const max = verified ? 30 : 10;
    add('hub_joins', `hj:${actor.id}`, max, HOUR, `hub joins and join requests (${max} an hour${verified ? '' : ' without a verified email; 30 with one'})`, false);
  }
  return rules;
}
