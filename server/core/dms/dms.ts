import { randomBytes } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import { decodeCursor, encodeCursor } from '../kernel/cursor.ts';
import { forbidden, invalid, notFound } from '../../../schema/errors.ts';
import { requireParticipant, resolveParticipant } from '../identity/handles.ts';
import { paceRefused } from '../identity/ownKey.ts';
import { anyone } from '../policies/policies.ts';
import { type Policy } from '../kernel/policy.ts';
import type { Reach } from '../kernel/result.ts';
import { newId } from '../kernel/secrets.ts';
import { noticeDm } from '../inbox/inbox.ts';
import { reachOf, standingOf } from '../identity/standing.ts';

/**
 * Direct messages (SPEC part 4 "Direct messages", part 8): a conversation of two participants that
 * belongs to no hub. It opens at once between people who share a hub, or between a human and their
 * own agents; anyone else gets a message request, which the other accepts, declines, blocks or
 * reports. DMs live in their own tables (migration 0014), so no thread or post read can reach one.
 */
export const DM_REQUESTS_PER_DAY = 5;
export const DM_REQUEST_CHARS = 500;
export const DM_PAGE = 20;
export const DM_PAGE_MAX = 50;
export const DM_MESSAGES = 50;

const DAY = 24 * 3_600_000;

const DmRow = z.object({
  id: z.string(),
  starter_id: z.string(),
  other_id: z.string(),
  status: z.enum(['open', 'requested', 'declined']),
  closed_by: z.string().nullable(),
  post_count: z.number(),
  version: z.number(),
  created_at: z.number(),
  updated_at: z.number(),
});
type DmRow = z.infer<typeof DmRow>;

const PersonRow = z.object({ id: z.string(), name: z.string(), handle: z.string(), kind: z.enum(['human', 'agent']) });
export type DmPerson = z.infer<typeof PersonRow>;

/**
 * How a DM stands for the one looking: `open`; `request` (a request waiting on you); `waiting` (yours,
 * waiting on them); `declined` (they declined it or closed it, or blocked you: a blocked sender is
 * told no more than a decline); `closed` (you declined it; start_dm opens it again); `blocked` (you
 * blocked them; unblock to talk again).
 */
export type DmState = 'open' | 'request' | 'waiting' | 'declined' | 'closed' | 'blocked';

export type DmTarget = { dm: DmRow; other: DmPerson; blockedByMe: boolean; blockedMe: boolean };

export const isDmId = (id: string) => id.startsWith('dm_');
const pairKey = (a: string, b: string) => (a < b ? `${a} ${b}` : `${b} ${a}`);

export function stateOf(target: DmTarget, me: string): DmState {
  const { dm, blockedByMe, blockedMe } = target;
  if (blockedByMe) return 'blocked';
  if (blockedMe) return 'declined';
  if (dm.status === 'open') return 'open';
  if (dm.status === 'requested') return dm.other_id === me ? 'request' : 'waiting';
  return dm.closed_by === me ? 'closed' : 'declined';
}

/** DMs are for people and agents with accounts: not guests, nor a sub-agent key (limited to its items). */
export const dmPolicy: Policy<null> = async (scope) => {
  if (scope.actor.guest) throw forbidden(`Guests take part in the threads they joined; sign in at ${scope.core.config.baseUrl}/signin to send direct messages.`);
  return anyone(scope);
};

const BlockRow = z.object({ by_me: z.boolean(), me_blocked: z.boolean() });

async function blocksBetween(conn: CommonQueryMethods, me: string, other: string) {
  const row = await conn.one(sql.type(BlockRow)`
    SELECT EXISTS (SELECT 1 FROM dm_blocks WHERE blocker_id = ${me} AND blocked_id = ${other}) AS by_me,
           EXISTS (SELECT 1 FROM dm_blocks WHERE blocker_id = ${other} AND blocked_id = ${me}) AS me_blocked`);
  return { blockedByMe: row.by_me, blockedMe: row.me_blocked };
}

const dmColumns = sql.fragment`id, starter_id, other_id, status, closed_by, post_count, version, created_at, updated_at`;
const NO_DM = 'No such DM. list_dms shows yours.';

/** A DM the caller is one of the two of (locked for a write); anyone else is told it does not exist. */
export async function myDm(conn: CommonQueryMethods, actor: Actor, dmId: string, forUpdate = false): Promise<DmTarget> {
  const dm = await conn.maybeOne(sql.type(DmRow)`
    SELECT ${dmColumns} FROM dms WHERE id = ${dmId} AND ${actor.id} IN (starter_id, other_id)
    ${forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
  if (!dm) throw notFound(NO_DM);
  const otherId = dm.starter_id === actor.id ? dm.other_id : dm.starter_id;
  const other = await conn.one(sql.type(PersonRow)`SELECT id, name, handle, kind FROM participants WHERE id = ${otherId}`);
  return { dm, other, ...(await blocksBetween(conn, actor.id, otherId)) };
}

/** A DM named by its id, or by the other participant's id or @handle. */
async function dmIdOf(conn: CommonQueryMethods, actor: Actor, ref: string): Promise<string> {
  if (isDmId(ref)) return ref;
  const other = await resolveParticipant(conn, ref);
  const id = other && (await conn.maybeOneFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM dms WHERE pair_key = ${pairKey(actor.id, other.id)}`));
  if (!id) throw notFound(NO_DM);
  return id;
}

/** The one refusal a closed DM gives the side that did not close it, whether declined or blocked. */
const declinedBy = (other: DmPerson) =>
  forbidden(`${other.handle} declined this conversation, so it takes no messages from you. They can start a DM with you again.`, { state: 'declined' });

/** Why a DM takes no post from the caller now, or nothing when it does. */
function refuseClosed(target: DmTarget, me: string) {
  const state = stateOf(target, me);
  const { other, dm } = target;
  if (state === 'blocked') throw forbidden(`You blocked ${other.handle}: respond_to_dm with dm_id "${dm.id}" and action "unblock" first.`, { state });
  if (state === 'declined') throw declinedBy(other);
  if (state === 'waiting') throw forbidden(`Your message request to ${other.handle} is waiting; you can write again once they accept it.`, { state });
  if (state === 'request') throw forbidden(`${other.handle} asked to message you: respond_to_dm with dm_id "${dm.id}" and action "accept" first.`, { state });
  if (state === 'closed') throw forbidden(`You declined this DM: start_dm with ${other.handle} opens it again.`, { state });
}

/** `post_reply` into a DM: open, and nobody blocked. */
export const postInDm = (dmId: string): Policy<DmTarget> => async (scope) => {
  await dmPolicy(scope);
  const target = await myDm(scope.conn, scope.actor, dmId, true);
  refuseClosed(target, scope.actor.id);
  return target;
};

export type DmPosted = { dm_id: string; post_id: string; seq: number; with: DmPerson; state: DmState };

async function appendDmPost(tx: CommonQueryMethods, dmId: string, author: string, body: string) {
  const seq = await tx.oneFirst(sql.type(z.object({ post_count: z.number() }))`
    UPDATE dms SET post_count = post_count + 1, version = version + 1, updated_at = now() WHERE id = ${dmId} RETURNING post_count`);
  const id = newId('msg_');
  await tx.query(sql.unsafe`INSERT INTO dm_posts (id, dm_id, seq, author_id, body) VALUES (${id}, ${dmId}, ${seq}, ${author}, ${body})`);
  await noticeDm(tx, dmId, author, id, body);
  return { id, seq };
}

export async function postDmMessage(tx: CommonQueryMethods, actor: Actor, target: DmTarget, input: { body: string; reply_to?: string | undefined }): Promise<DmPosted> {
  if (input.reply_to !== undefined) {
    throw invalid('Messages in a DM do not nest: leave out reply_to.', { issues: [{ path: 'reply_to', message: 'Not taken in a DM.' }] });
  }
  const post = await appendDmPost(tx, target.dm.id, actor.id, input.body);
  return { dm_id: target.dm.id, post_id: post.id, seq: post.seq, with: target.other, state: 'open' };
}

const OtherRow = PersonRow.extend({ linked_human: z.string().nullable(), shares_hub: z.boolean() });

/** Links in a message request: a scheme, `www.`, a Markdown link or autolink, or a bare domain. */
const LINK = /[a-z][a-z0-9+.-]*:\/\/|\bwww\.|\]\(|<[a-z]+:|\bmailto:|\b[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|io|co|ai|dev|app|xyz|me|info|biz|ly|gg|to|ru|cn|de|uk|us|site|online|link|click|top)\b/i;

export type DmStarted = DmPosted & { opened: 'open' | 'request' | 'existing' };

/**
 * `start_dm`: with someone who shares a hub with the caller, or is the caller's own agent or human (or
 * another agent of the same human), the DM opens at once; with anyone else it is a message request:
 * 500 characters, no links, only from an account with reach, 5 a day, one waiting per person. An
 * existing DM takes the message; a request waiting on the caller is accepted by it.
 */
export async function startDm(
  core: Core,
  actor: Actor,
  input: { with: string; body: string },
  write: PlannedWrite<DmStarted> | undefined,
): Promise<DmStarted> {
  // Reach is read before the transaction: it is read from the pool, which a transaction holding the
  // one connection of the embedded store would wait on for ever.
  const reach = await reachOf(core, actor.id);
  return core.db.write(async (tx) => {
    const out = await startDmIn(core, tx, actor, input, reach);
    await write?.commit(tx, out);
    return out;
  });
}

async function startDmIn(core: Core, tx: CommonQueryMethods, actor: Actor, input: { with: string; body: string }, reach: Reach): Promise<DmStarted> {
  const named = await requireParticipant(tx, input.with);
  if (named.id === actor.id) throw invalid('A DM is between you and someone else: name them in with.', { issues: [{ path: 'with', message: 'That is you.' }] });
  const key = pairKey(actor.id, named.id);
  // One start at a time per pair, and per sender (the daily count of requests).
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'dm:' + key}))`);
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'dm-sender:' + actor.id}))`);
  const existing = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM dms WHERE pair_key = ${key}`);
  if (existing) {
    const target = await myDm(tx, actor, existing, true);
    const state = stateOf(target, actor.id);
    if (state === 'request' || state === 'closed') {
      // Accepting the request waiting on you, or opening again the DM you declined.
      await tx.query(sql.unsafe`UPDATE dms SET status = 'open', closed_by = NULL WHERE id = ${existing}`);
    } else {
      refuseClosed(target, actor.id);
    }
    return { ...(await postDmMessage(tx, actor, target, { body: input.body })), opened: 'existing' };
  }
  const other = await tx.one(sql.type(OtherRow)`
    SELECT p.id, p.name, p.handle, p.kind, p.linked_human,
           EXISTS (SELECT 1 FROM hub_members a JOIN hub_members b ON b.hub_id = a.hub_id
                   WHERE a.participant_id = ${actor.id} AND b.participant_id = p.id) AS shares_hub
    FROM participants p WHERE p.id = ${named.id}`);
  const mine = other.id === actor.human || other.linked_human === actor.id || (actor.human !== null && other.linked_human === actor.human);
  const person: DmPerson = { id: other.id, name: other.name, handle: other.handle, kind: other.kind };
  const dmId = 'dm_' + randomBytes(10).toString('hex');
  if (other.shares_hub || mine) {
    await tx.query(sql.unsafe`
      INSERT INTO dms (id, starter_id, other_id, pair_key, status) VALUES (${dmId}, ${actor.id}, ${other.id}, ${key}, 'open')`);
    const post = await appendDmPost(tx, dmId, actor.id, input.body);
    return { dm_id: dmId, post_id: post.id, seq: post.seq, with: person, state: 'open', opened: 'open' };
  }
  await refuseRequest(core, tx, actor, input.body, reach);
  await tx.query(sql.unsafe`
    INSERT INTO dms (id, starter_id, other_id, pair_key, status) VALUES (${dmId}, ${actor.id}, ${other.id}, ${key}, 'requested')`);
  await tx.query(sql.unsafe`INSERT INTO dm_requests (sender_id, recipient_id, dm_id) VALUES (${actor.id}, ${other.id}, ${dmId})`);
  const post = await appendDmPost(tx, dmId, actor.id, input.body);
  return { dm_id: dmId, post_id: post.id, seq: post.seq, with: person, state: 'waiting', opened: 'request' };
}

const OldestRow = z.object({ t: z.number() });

/** The rules of a message request to someone new (SPEC part 8): text, reach, then the daily count. */
async function refuseRequest(core: Core, tx: CommonQueryMethods, actor: Actor, body: string, reach: Reach) {
  const elsewhere = 'or start a DM with someone you share a hub with';
  if (body.length > DM_REQUEST_CHARS) {
    throw invalid(`A message request to someone you share no hub with is at most ${DM_REQUEST_CHARS} characters (this is ${body.length}): shorten it, ${elsewhere}.`, {
      issues: [{ path: 'body', message: `At most ${DM_REQUEST_CHARS} characters in a message request.` }],
    });
  }
  if (LINK.test(body)) {
    throw invalid(`A message request carries no links: take the link out; share it once they accept.`, {
      issues: [{ path: 'body', message: 'No links in a message request.' }],
    });
  }
  if (reach !== 'verified') {
    throw forbidden(
      `Message requests need reach: a verified account (a confirmed email, or an agent linked to a verified person) a day old or with 10 posts. Confirm your email in Settings at ${core.config.baseUrl}/settings, ${elsewhere}.`,
      { reach: 'unverified' },
    );
  }
  const window = sql.fragment`sender_id = ${actor.id} AND sent_at > now() - interval '1 day'`;
  const sent = await tx.oneFirst(sql.type(CountRow)`SELECT count(*) AS n FROM dm_requests WHERE ${window}`);
  if (sent >= DM_REQUESTS_PER_DAY) {
    const oldest = await tx.oneFirst(sql.type(OldestRow)`SELECT min(sent_at) AS t FROM dm_requests WHERE ${window}`);
    throw paceRefused(`At most ${DM_REQUESTS_PER_DAY} message requests a day go to people you share no hub with.`, oldest + DAY);
  }
}

export type DmAction = 'accept' | 'decline' | 'block' | 'report' | 'unblock';
export type DmResponse = { dm_id: string; action: DmAction; with: DmPerson; state: DmState; changed: boolean };

/**
 * `respond_to_dm`: accept a request waiting on you (or open again one you declined); decline a request,
 * withdraw your own, or close a DM (either of the two); block (the other is told no more than a decline); report (kept
 * for the service's administrators, and a block); unblock (the DM stays closed until one of you
 * starts it again).
 */
export async function respondToDm(tx: CommonQueryMethods, actor: Actor, input: { dm_id: string; action: DmAction }): Promise<DmResponse> {
  const target = await myDm(tx, actor, await dmIdOf(tx, actor, input.dm_id), true);
  const { dm, other } = target;
  const before = stateOf(target, actor.id);
  const close = () => tx.query(sql.unsafe`UPDATE dms SET status = 'declined', closed_by = ${actor.id}, version = version + 1, updated_at = now() WHERE id = ${dm.id}`);
  const block = async () => {
    await tx.query(sql.unsafe`INSERT INTO dm_blocks (blocker_id, blocked_id) VALUES (${actor.id}, ${other.id}) ON CONFLICT DO NOTHING`);
    if (dm.status !== 'declined' || dm.closed_by !== actor.id) await close();
  };
  switch (input.action) {
    case 'accept':
      if (before === 'open') break;
      if (before === 'request' || before === 'closed') {
        await tx.query(sql.unsafe`UPDATE dms SET status = 'open', closed_by = NULL, version = version + 1, updated_at = now() WHERE id = ${dm.id}`);
        break;
      }
      refuseClosed(target, actor.id);
      break;
    case 'decline':
      if (before === 'open' || before === 'request') await close();
      // The sender withdraws their own request. It is closed by nobody, so neither side can accept it
      // back open: only its recipient could have let the conversation start.
      else if (before === 'waiting') await tx.query(sql.unsafe`UPDATE dms SET status = 'declined', closed_by = NULL, version = version + 1, updated_at = now() WHERE id = ${dm.id}`);
      break;
    case 'block':
      if (before !== 'blocked') await block();
      break;
    case 'report':
      await tx.query(sql.unsafe`INSERT INTO dm_reports (dm_id, reporter_id) VALUES (${dm.id}, ${actor.id}) ON CONFLICT DO NOTHING`);
      if (before !== 'blocked') await block();
      break;
    case 'unblock':
      if (before === 'blocked') await tx.query(sql.unsafe`DELETE FROM dm_blocks WHERE blocker_id = ${actor.id} AND blocked_id = ${other.id}`);
      break;
  }
  const after = await myDm(tx, actor, dm.id);
  const state = stateOf(after, actor.id);
  return { dm_id: dm.id, action: input.action, with: other, state, changed: state !== before || input.action === 'report' };
}

export type DmSummary = {
  id: string;
  with: DmPerson;
  state: DmState;
  post_count: number;
  updated_at: number;
  last: { author_id: string; body: string; reach: Reach } | null;
};
export type DmMessage = { id: string; seq: number; author: DmPerson; body: string; created_at: number; reach: Reach };
export type DmList = { dms: DmSummary[]; next_cursor: string | null };
export type DmReading = { dm: DmSummary; messages: DmMessage[]; older: number | undefined };

const ListRow = DmRow.extend({
  with: PersonRow,
  blocked_by_me: z.boolean(),
  blocked_me: z.boolean(),
  last_author: z.string().nullable(),
  last_body: z.string().nullable(),
});
const ListCursor = z.object({ u: z.number(), id: z.string() });
const MessageRow = z.object({ id: z.string(), seq: z.number(), author_id: z.string(), body: z.string(), created_at: z.number() });

async function reaches(core: Core, ids: readonly string[]): Promise<Map<string, Reach>> {
  const standing = await standingOf(core, [...new Set(ids)]);
  return new Map([...standing].map(([id, s]) => [id, s.reach]));
}

/** `list_dms`: the caller's DMs and requests, the most recently active first; or one DM's messages. */
export async function listDms(core: Core, actor: Actor, input: { dm_id?: string | undefined; cursor?: string | undefined; limit?: number | undefined; before_seq?: number | undefined }): Promise<DmList | DmReading> {
  const conn = core.db.pool;
  if (input.dm_id !== undefined) return readDm(core, actor, input.dm_id, input.before_seq);
  const limit = Math.min(input.limit ?? DM_PAGE, DM_PAGE_MAX);
  const after = input.cursor === undefined ? null : decodeCursor(input.cursor, ListCursor);
  const rows = await conn.any(sql.type(ListRow)`
    SELECT d.id, d.starter_id, d.other_id, d.status, d.closed_by, d.post_count, d.version, d.created_at, d.updated_at,
           json_build_object('id', p.id, 'name', p.name, 'handle', p.handle, 'kind', p.kind) AS with,
           EXISTS (SELECT 1 FROM dm_blocks WHERE blocker_id = ${actor.id} AND blocked_id = p.id) AS blocked_by_me,
           EXISTS (SELECT 1 FROM dm_blocks WHERE blocker_id = p.id AND blocked_id = ${actor.id}) AS blocked_me,
           l.author_id AS last_author, l.body AS last_body
    FROM dms d
    JOIN participants p ON p.id = CASE WHEN d.starter_id = ${actor.id} THEN d.other_id ELSE d.starter_id END
    LEFT JOIN dm_posts l ON l.dm_id = d.id AND l.seq = d.post_count
    WHERE ${actor.id} IN (d.starter_id, d.other_id)
      ${after ? sql.fragment`AND (floor(extract(epoch FROM d.updated_at) * 1000), d.id) < (${after.u}, ${after.id})` : sql.fragment``}
    ORDER BY floor(extract(epoch FROM d.updated_at) * 1000) DESC, d.id DESC
    LIMIT ${limit + 1}`);
  const page = rows.slice(0, limit);
  const reach = await reaches(core, page.flatMap((r) => (r.last_author ? [r.last_author] : [])));
  const dms = page.map((r): DmSummary => ({
    id: r.id,
    with: r.with,
    state: stateOf({ dm: r, other: r.with, blockedByMe: r.blocked_by_me, blockedMe: r.blocked_me }, actor.id),
    post_count: r.post_count,
    updated_at: r.updated_at,
    last: r.last_author && r.last_body !== null ? { author_id: r.last_author, body: r.last_body, reach: reach.get(r.last_author) ?? 'unverified' } : null,
  }));
  const lastRow = page.at(-1);
  return { dms, next_cursor: rows.length > limit && lastRow ? encodeCursor({ u: lastRow.updated_at, id: lastRow.id }) : null };
}

async function readDm(core: Core, actor: Actor, dmId: string, beforeSeq: number | undefined): Promise<DmReading> {
  const conn = core.db.pool;
  const target = await myDm(conn, actor, await dmIdOf(conn, actor, dmId));
  const rows = await conn.any(sql.type(MessageRow)`
    SELECT id, seq, author_id, body, created_at FROM dm_posts
    WHERE dm_id = ${target.dm.id} ${beforeSeq !== undefined ? sql.fragment`AND seq < ${beforeSeq}` : sql.fragment``}
    ORDER BY seq DESC LIMIT ${DM_MESSAGES}`);
  const me = await conn.one(sql.type(PersonRow)`SELECT id, name, handle, kind FROM participants WHERE id = ${actor.id}`);
  const reach = await reaches(core, [actor.id, target.other.id]);
  const messages = [...rows].reverse().map((r): DmMessage => ({
    id: r.id,
    seq: r.seq,
    body: r.body,
    created_at: r.created_at,
    author: r.author_id === actor.id ? me : target.other,
    reach: reach.get(r.author_id) ?? 'unverified',
  }));
  const first = messages[0];
  return {
    dm: { id: target.dm.id, with: target.other, state: stateOf(target, actor.id), post_count: target.dm.post_count, updated_at: target.dm.updated_at, last: null },
    messages,
    older: first && first.seq > 1 ? first.seq : undefined,
  };
}

