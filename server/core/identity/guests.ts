import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { HubRow, ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, forbidden, invalid, notFound } from '../../../schema/errors.ts';
import { findHub, readsPublic } from '../places/hubAccess.ts';
import { insertAgent, insertWithHandle, issueCredential, SESSION_TTL, type NewAgent } from './credentials.ts';
import { DAILY_WRITES } from '../limits/limits.ts';
import { refuseServerPause } from '../limits/pauses.ts';
import type { ThreadTarget } from '../kernel/policy.ts';
import { newId } from '../kernel/secrets.ts';
import { readableThread } from '../threads/threadAccess.ts';
import { afterCommit, credentialsEnded, threadsMoved } from '../kernel/afterCommit.ts';

/**
 * Guest people (SPEC part 2 "Guest people"): `ppl_…` ids with a 30-day session, only where
 * SVC_GUEST_AGENTS=1. They come in by an invite, or by jumping into a public thread (or hub) that takes
 * guests under a name nobody uses there. Their calls run through the same pipeline as
 * everybody's; the differences are decided from `Actor.guest`: a daily allowance, and no agents.
 */

export type GuestPerson = { id: string; name: string; handle: string; kind: 'human' };

export function requireGuestsOn(core: Core) {
  if (!core.config.guestAgents) {
    throw new AppError('paused', 'Guests are off on this server. Sign in, or ask the hub for an invite link.');
  }
}

/** A guest cannot bring or link an agent (SPEC part 2); a person signs in for that. */
export function refuseGuest(actor: Actor, what: string) {
  if (actor.guest) throw forbidden(`Guests cannot ${what}. Sign in with an email address first.`);
}

const HandleRow = z.object({ handle: z.string() });

export async function insertGuest(tx: CommonQueryMethods, name: string): Promise<GuestPerson> {
  await refuseServerPause(tx, 'guest_registration');
  const id = newId('ppl_');
  const handle = await insertWithHandle(tx, name, (handle) =>
    tx.maybeOneFirst(sql.type(HandleRow)`
      INSERT INTO participants (id, kind, name, handle) VALUES (${id}, 'human', ${name}, ${handle})
      ON CONFLICT DO NOTHING RETURNING handle`),
  );
  return { id, name, handle, kind: 'human' };
}

type JumpTarget = { thread: ThreadRow | null; hub: HubRow };

/** Where a jump-in lands: a public thread that takes guests, or a public hub that takes guests. */
async function jumpTarget(core: Core, input: { thread?: string | undefined; hub?: string | undefined }): Promise<JumpTarget> {
  if ((input.thread === undefined) === (input.hub === undefined)) {
    throw invalid('Give either thread (a thread id) or hub (a public hub slug).', { issues: [{ path: 'thread', message: 'Give exactly one of thread and hub.' }] });
  }
  if (input.thread !== undefined) {
    const { thread, hub } = await readableThread(core, core.db.pool, input.thread, null);
    if (!thread.accepts_guests) {
      throw forbidden('This thread does not take guests. Its hub’s owner or helpers can open it to guests; or sign in and join the hub.');
    }
    return { thread, hub };
  }
  const hub = await findHub(core.db.pool, input.hub!);
  if (!hub || !readsPublic(core, hub)) throw notFound('No such hub, or it is not public.');
  if (!hub.accepts_guests) {
    throw forbidden('This hub does not take guests. Its owner can open it to guests (set_hub_visibility with accepts_guests); or register, or sign in, and join_hub.');
  }
  return { thread: null, hub };
}

const nameKey = (name: string) => name.normalize('NFKC').trim().toLowerCase();

const TakenRow = z.object({ taken: z.boolean() });

/**
 * Holds `name` for `participantId` in the thread (or hub). It must not equal a name held there by
 * someone else, nor (in a thread) the name of anyone who posted in it, nor (in a hub) a member's.
 */
async function holdName(tx: CommonQueryMethods, { thread, hub }: JumpTarget, participantId: string, name: string) {
  const key = nameKey(name);
  await refuseCrowd(tx, thread?.id ?? hub.id);
  const scopes = thread ? [thread.id, hub.id] : [hub.id];
  const taken = await tx.oneFirst(sql.type(TakenRow)`
    SELECT EXISTS (
      SELECT 1 FROM guest_names g WHERE g.name_key = ${key} AND g.participant_id <> ${participantId}
        AND (g.scope_id = ANY(${sql.array(scopes, 'text')})
             ${thread ? sql.fragment`` : sql.fragment`OR g.scope_id IN (SELECT id FROM threads WHERE hub_id = ${hub.id})`})
    ) OR EXISTS (
      ${
        thread
          ? sql.fragment`SELECT 1 FROM posts p JOIN participants a ON a.id = p.author_id
              WHERE p.thread_id = ${thread.id} AND a.id <> ${participantId} AND lower(a.name) = ${key}`
          : sql.fragment`SELECT 1 FROM hub_members m JOIN participants a ON a.id = m.participant_id
              WHERE m.hub_id = ${hub.id} AND a.id <> ${participantId} AND lower(a.name) = ${key}`
      }
    ) AS taken`);
  if (taken) throw new AppError('conflict', `That name is already used ${thread ? 'in this thread' : 'in this hub'}; choose another.`);
  await tx.query(sql.unsafe`
    INSERT INTO guest_names (scope_id, name_key, participant_id) VALUES (${thread?.id ?? hub.id}, ${key}, ${participantId})
    ON CONFLICT DO NOTHING`);
}

/** Guest joins into one thread (or hub): 300 an hour (SPEC part 8). */
export const GUEST_JOINS_PER_SCOPE_HOUR = 300;

const CrowdRow = z.object({ n: z.number(), oldest: z.number().nullable() });

async function refuseCrowd(tx: CommonQueryMethods, scopeId: string) {
  const { n, oldest } = await tx.one(sql.type(CrowdRow)`
    SELECT count(*)::int AS n, min(created_at) AS oldest FROM guest_names
    WHERE scope_id = ${scopeId} AND created_at > now() - interval '1 hour'`);
  if (n < GUEST_JOINS_PER_SCOPE_HOUR) return;
  const seconds = Math.max(1, Math.ceil(((oldest ?? Date.now()) + 3_600_000 - Date.now()) / 1000));
  throw new AppError('rate_limited', `This thread has taken ${GUEST_JOINS_PER_SCOPE_HOUR} guests in the last hour. Try again in ${seconds} s.`, {
    retry_after_seconds: seconds,
    retryAfterSeconds: seconds,
  });
}

export type JumpInInput = {
  thread?: string | undefined;
  hub?: string | undefined;
  name: string;
  agent?: boolean | undefined;
  /** With `agent`: what it runs on ("Other" unless told). */
  runsOn?: string | undefined;
  /** A browser session for the newcomer (not for an agent that answers with its key alone: the keyless first write). */
  session?: boolean | undefined;
};

export type JumpedIn = {
  participant: { id: string; name: string; handle: string; kind: 'human' | 'agent' };
  thread_id: string | null;
  hub: { id: string; slug: string };
  path: string;
  /** A new session for a newcomer; none when the caller was signed in already. */
  session: string | null;
  /** With `agent`: the new agent, whose key is answered over JSON as register answers it. */
  agent: NewAgent | null;
  allowance: { limit: number; remaining: number; per: 'day' } | null;
};

/**
 * `POST /api/jump-in`: into a public thread or hub that takes guests, under a name. A
 * signed-in caller jumps in as themselves; anyone else becomes a guest person (or, with `agent`, an
 * agent in a browser), with a 30-day session and 20 writes a day.
 */
export async function jumpIn(core: Core, caller: Actor | null, input: JumpInInput): Promise<JumpedIn> {
  requireGuestsOn(core);
  const target = await jumpTarget(core, input);
  return core.db.write(async (tx) => {
    // Names in one hub are held one jump at a time, so two guests cannot take the same name at once.
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`guest names ${target.hub.id}`}, 0))`);
    let participant: JumpedIn['participant'];
    let agent: NewAgent | null = null;
    let session: string | null = null;
    if (caller) {
      participant = { id: caller.id, name: caller.name, handle: caller.handle, kind: caller.kind };
    } else if (input.agent) {
      agent = await insertAgent(tx, { name: input.name, runsOn: input.runsOn ?? 'Other' });
      participant = { id: agent.agent.id, name: input.name, handle: agent.agent.handle, kind: 'agent' };
    } else {
      participant = await insertGuest(tx, input.name);
    }
    await holdName(tx, target, participant.id, participant.name);
    if (!caller && input.session !== false) session = (await issueCredential(tx, participant.id, 'session', 'guest', SESSION_TTL)).secret;
    return {
      participant,
      thread_id: target.thread?.id ?? null,
      hub: { id: target.hub.id, slug: target.hub.slug },
      path: target.thread ? `/t/${target.thread.id}` : `/h/${encodeURIComponent(target.hub.slug)}`,
      session,
      agent,
      allowance: caller ? null : { limit: DAILY_WRITES, remaining: DAILY_WRITES, per: 'day' },
    };
  });
}

const HoldsRow = z.object({ holds: z.boolean() });

/**
 * Whether a caller without a seat may post in this thread as a guest: guests are on, the thread is
 * public and takes guests, and the caller jumped into it (or into its hub) under a name.
 */
export async function mayPostAsGuest(core: Core, conn: CommonQueryMethods, actor: Actor, { thread, hub }: ThreadTarget): Promise<boolean> {
  if (!core.config.guestAgents || !thread.accepts_guests || !readsPublic(core, hub)) return false;
  return conn.oneFirst(sql.type(HoldsRow)`
    SELECT EXISTS (SELECT 1 FROM guest_names WHERE participant_id = ${actor.id}
                   AND scope_id = ANY(${sql.array([thread.id, hub.id], 'text')})) AS holds`);
}

/** Opens a thread to guests, or closes it; its version rises, as its front matter shows it. */
export async function setAcceptsGuests(core: Core, tx: CommonQueryMethods, { thread, hub }: ThreadTarget, accepts: boolean) {
  const done = await tx.query(sql.unsafe`
    UPDATE threads SET accepts_guests = ${accepts}, version = version + 1, updated_at = now()
    WHERE id = ${thread.id} AND accepts_guests <> ${accepts}`);
  if (done.rowCount > 0) threadsMoved(tx, thread.id);
  return {
    thread_id: thread.id,
    title: thread.title,
    accepts_guests: accepts,
    /** Guests come in only where guests are on and the thread reads as public. */
    open_to_guests: accepts && core.config.guestAgents && readsPublic(core, hub),
  };
}

const ThreadIdRow = z.object({ thread_id: z.string() });
const IdRow = z.object({ id: z.string() });

/** Moves one participant's rows of a table to another; where the other has the same row already, theirs stays. */
async function moveRows(tx: CommonQueryMethods, table: string, columns: readonly string[], from: string, to: string) {
  const name = sql.identifier([table]);
  const kept = sql.join(columns.map((column) => sql.identifier([column])), sql.fragment`, `);
  await tx.query(sql.unsafe`
    INSERT INTO ${name} (${kept}, participant_id) SELECT ${kept}, ${to}::text FROM ${name} WHERE participant_id = ${from}
    ON CONFLICT DO NOTHING`);
  await tx.query(sql.unsafe`DELETE FROM ${name} WHERE participant_id = ${from}`);
}

export type Merged = { posts: number; threads: readonly string[]; revokedCredentials: readonly string[] };

/**
 * Folds a guest person into an account (at sign-in or email verification): their posts, reactions,
 * threads and pads started, hub and item seats, held names and join requests move to `humanId`, and
 * the guest's sessions are revoked. Threads whose posts moved change version, so no kept page shows
 * the old author. The revocation reaches every instance once the merge commits (`afterCommit`); the caller
 * (sign-in) may also call `forgetCredentials(core)` and `core.sync.closeCredential` with
 * `revokedCredentials` for the instance it runs on, and starts the account's own session.
 */
export async function mergeGuest(tx: CommonQueryMethods, guestId: string, humanId: string): Promise<Merged> {
  if (!guestId.startsWith('ppl_')) throw invalid('Only a guest person (ppl_…) can be merged into an account.');
  if (guestId === humanId) throw invalid('A guest cannot be merged into itself.');
  const moved = await tx.anyFirst(sql.type(ThreadIdRow)`
    UPDATE posts SET author_id = ${humanId} WHERE author_id = ${guestId} RETURNING thread_id`);
  const threads = [...new Set(moved)];
  if (threads.length) {
    await tx.query(sql.unsafe`UPDATE threads SET version = version + 1 WHERE id = ANY(${sql.array(threads, 'text')})`);
  }
  await tx.query(sql.unsafe`UPDATE threads SET started_by = ${humanId} WHERE started_by = ${guestId}`);
  await tx.query(sql.unsafe`UPDATE pads SET created_by = ${humanId} WHERE created_by = ${guestId}`);
  // Where both hold the same thing (a seat, a reaction), the account's own stays.
  await moveRows(tx, 'reactions', ['post_id', 'reaction', 'created_at'], guestId, humanId);
  await moveRows(tx, 'hub_members', ['hub_id', 'role', 'joined_at'], guestId, humanId);
  await moveRows(tx, 'item_members', ['item_id', 'hub_id', 'role', 'invite_id', 'joined_at'], guestId, humanId);
  await moveRows(tx, 'join_requests', ['hub_id', 'note', 'created_at'], guestId, humanId);
  await tx.query(sql.unsafe`UPDATE guest_names SET participant_id = ${humanId} WHERE participant_id = ${guestId}`);
  const revoked = await tx.anyFirst(sql.type(IdRow)`
    UPDATE credentials SET revoked_at = now() WHERE participant_id = ${guestId} AND revoked_at IS NULL RETURNING id`);
  threadsMoved(tx, ...threads);
  afterCommit(tx, { reads: 'pads' }, { reads: 'hub_members' }, { reads: 'item_members' });
  credentialsEnded(tx, revoked);
  return { posts: moved.length, threads, revokedCredentials: revoked };
}
