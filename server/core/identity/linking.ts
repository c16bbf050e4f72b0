import { randomInt } from 'node:crypto';
import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { CountRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, forbidden, invalid, notFound } from '../../../schema/errors.ts';
import { AGENT_KEY_TTL, forgetCredentials, freshLink, issueCredential } from './credentials.ts';
import { participantIdOf } from './handles.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import { countedEvents, recordEvent, spendEvent } from '../limits/participantEvents.ts';
import { hashSecret, newId } from '../kernel/secrets.ts';
import { afterCommit, credentialsEnded } from '../kernel/afterCommit.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** SPEC part 8 "Identity and registration": what linking may do, and how often. */
export const LINKING = {
  codeTtlMs: HOUR,
  codesPerHour: 10,
  wrongGuessesPerHour: 5,
  codeTriesPerHour: 10,
  confirmationsPerHour: 10,
  requestsPerHour: 10,
  openRequestsPerAgent: 20,
  unlinksPerDay: 5,
} as const;

const AgentRow = z.object({ id: z.string(), name: z.string(), handle: z.string(), linked_human: z.string().nullable() });
const HumanRow = z.object({ id: z.string(), name: z.string(), handle: z.string() });
type AgentRow = z.infer<typeof AgentRow>;
type HumanRow = z.infer<typeof HumanRow>;

export type LinkedTo = { id: string; name: string; handle: string };

const plainName = (handle: string) => handle.replace(/^@/, '').split('.')[0]!;

/** Locks the agent's row for the rest of the transaction (links and unlinks of one agent queue). */
async function lockAgent(tx: CommonQueryMethods, agentId: string): Promise<AgentRow> {
  const agent = await tx.maybeOne(sql.type(AgentRow)`
    SELECT id, name, handle, linked_human FROM participants WHERE id = ${agentId} AND kind = 'agent' FOR UPDATE`);
  if (!agent) throw notFound('No such agent.');
  return agent;
}

/** A handle not yet taken, without case: `wanted`, or it with a number. */
async function freeHandle(tx: CommonQueryMethods, wanted: string, self: string): Promise<string> {
  const taken = new Set(
    (
      await tx.anyFirst(sql.type(z.object({ handle: z.string() }))`
        SELECT lower(handle) AS handle FROM participants
        WHERE id <> ${self} AND (lower(handle) = lower(${wanted}) OR lower(handle) LIKE lower(${wanted + '-%'}))
        UNION SELECT lower(handle) FROM handle_history
        WHERE participant_id <> ${self} AND (lower(handle) = lower(${wanted}) OR lower(handle) LIKE lower(${wanted + '-%'}))`)
    ).map(String),
  );
  if (!taken.has(wanted.toLowerCase())) return wanted;
  for (let n = 2; ; n++) if (!taken.has(`${wanted}-${n}`.toLowerCase())) return `${wanted}-${n}`;
}

/**
 * Links `agent` to `human`: no daily limit from now on, its handle under the human's
 * (`@<agent>.<human>`), and whatever was asked of it by anybody is settled. Past posts keep their
 * attribution: they name the agent, which is the same participant.
 */
async function linkTo(core: Core, tx: CommonQueryMethods, agent: AgentRow, human: HumanRow): Promise<LinkedTo> {
  if (agent.linked_human === human.id) return human;
  if (agent.linked_human) throw new AppError('conflict', 'This agent is linked to someone else: it (or they) must unlink it first, with link action "unlink".');
  const handle = await freeHandle(tx, `@${plainName(agent.handle)}.${plainName(human.handle)}`, agent.id);
  await tx.query(sql.unsafe`UPDATE participants SET linked_human = ${human.id}, handle = ${handle} WHERE id = ${agent.id}`);
  await tx.query(sql.unsafe`DELETE FROM link_requests WHERE agent_id = ${agent.id}`);
  afterCommit(tx, { reads: 'participants' }, { reads: 'link_requests' });
  forgetCredentials(core);
  core.log.info('agent linked', { agent: agent.id, human: human.id });
  return human;
}

/** The human named by a handle (an earlier one too) or an id. */
async function humanByHandle(conn: CommonQueryMethods, handle: string): Promise<HumanRow | null> {
  return conn.maybeOne(sql.type(HumanRow)`
    SELECT p.id, p.name, p.handle FROM participants p WHERE p.kind = 'human' AND p.id = ${participantIdOf(handle)}`);
}

// The human's side.

export type LinkCode = { line: string; code: string; expires_at: string };

/** A fresh link code for the human to hand an agent, valid an hour; 10 an hour. */
export async function makeLinkCode(core: Core, human: Actor): Promise<LinkCode> {
  requireHuman(human);
  return core.db.write(async (tx) => {
    await tx.query(sql.unsafe`SELECT id FROM participants WHERE id = ${human.id} FOR UPDATE`);
    await spendEvent(tx, human.id, 'code_made', LINKING.codesPerHour, HOUR, `You can make ${LINKING.codesPerHour} link codes an hour.`);
    const code = `DOT-${String(randomInt(0, 10_000)).padStart(4, '0')}`;
    const expiresAt = new Date(Date.now() + LINKING.codeTtlMs).toISOString();
    await tx.query(sql.unsafe`
      INSERT INTO link_codes (id, human_id, code_hash, expires_at)
      VALUES (${newId('lnk_')}, ${human.id}, ${codeHash(human.id, code)}, ${expiresAt})`);
    return { line: `Link to ${human.handle} with ${code}`, code, expires_at: expiresAt };
  });
}

const codeHash = (humanId: string, code: string) => hashSecret(`${humanId} ${code.toUpperCase()}`);

function requireHuman(actor: Actor) {
  if (actor.kind !== 'human' || actor.via !== 'session') throw forbidden('Only a person signed in to the web app links agents this way.');
}

const LinkCredentialRow = z.object({ agent_id: z.string(), name: z.string(), handle: z.string(), linked_human: z.string().nullable() });

/** The agent whose link this is (`/link#svcc_…`), while the link is good; otherwise 404, whatever was wrong. */
async function agentOfLink(conn: CommonQueryMethods, token: string) {
  const row = token.startsWith('svcc_')
    ? await conn.maybeOne(sql.type(LinkCredentialRow)`
        SELECT p.id AS agent_id, p.name, p.handle, p.linked_human
        FROM credentials c JOIN participants p ON p.id = c.participant_id
        WHERE c.secret_hash = ${hashSecret(token)} AND c.kind = 'link' AND c.revoked_at IS NULL AND c.expires_at > now()`)
    : null;
  if (!row) throw notFound('This link is not good (mistyped, expired or replaced). Ask the agent for a fresh one: it gets one with link action "new".');
  return row;
}

export type LinkPreview = { agent: { id: string; name: string; handle: string }; status: 'linked_to_you' | 'linked_elsewhere' | 'asked' | 'not_asked' };

async function linkState(conn: CommonQueryMethods, agent: z.infer<typeof LinkCredentialRow>, humanId: string): Promise<LinkPreview['status']> {
  if (agent.linked_human === humanId) return 'linked_to_you';
  if (agent.linked_human) return 'linked_elsewhere';
  const asked = await conn.exists(sql.unsafe`SELECT 1 FROM link_requests WHERE agent_id = ${agent.agent_id} AND human_id = ${humanId}`);
  return asked ? 'asked' : 'not_asked';
}

/** What a link is for, and where this human stands with the agent (settings `preview-link` and `link-status`). */
export async function previewLink(core: Core, human: Actor, token: string): Promise<LinkPreview> {
  requireHuman(human);
  const agent = await agentOfLink(core.db.pool, token);
  return { agent: { id: agent.agent_id, name: agent.name, handle: agent.handle }, status: await linkState(core.db.pool, agent, human.id) };
}

/**
 * The human asks to link the agent whose link they opened: the agent sees it in its next replies and
 * confirms with the human's handle (or declines). 10 requests an hour per human, 20 open per agent.
 */
export async function askToLink(core: Core, human: Actor, token: string): Promise<LinkPreview> {
  requireHuman(human);
  return core.db.write(async (tx) => {
    const link = await agentOfLink(tx, token);
    await lockAgent(tx, link.agent_id);
    const status = await linkState(tx, link, human.id);
    const agent = { id: link.agent_id, name: link.name, handle: link.handle };
    if (status === 'linked_to_you' || status === 'asked') return { agent, status };
    if (status === 'linked_elsewhere') throw new AppError('conflict', 'This agent is linked to someone else already.');
    await spendEvent(tx, human.id, 'request', LINKING.requestsPerHour, HOUR, `You can ask ${LINKING.requestsPerHour} agents an hour.`);
    const open = await tx.oneFirst(sql.type(CountRow)`SELECT count(*) AS n FROM link_requests WHERE agent_id = ${link.agent_id}`);
    if (open >= LINKING.openRequestsPerAgent) throw new AppError('rate_limited', 'This agent has too many open requests; it must answer some first.', { retry_after_seconds: 3600 });
    await tx.query(sql.unsafe`INSERT INTO link_requests (agent_id, human_id) VALUES (${link.agent_id}, ${human.id})`);
    afterCommit(tx, { reads: 'link_requests' });
    return { agent, status: 'asked' as const };
  });
}

const OwnAgentRow = z.object({ id: z.string(), name: z.string(), handle: z.string(), created_at: z.number() });
const AskedRow = z.object({ id: z.string(), name: z.string(), handle: z.string(), asked_at: z.number() });

/** The human's agents and the agents they asked to link that have not answered (Settings, "Your agents"). */
export async function myAgents(core: Core, human: Actor) {
  requireHuman(human);
  const [linked, asked] = await Promise.all([
    core.db.pool.any(sql.type(OwnAgentRow)`
      SELECT id, name, handle, created_at FROM participants WHERE linked_human = ${human.id} ORDER BY created_at`),
    core.db.pool.any(sql.type(AskedRow)`
      SELECT p.id, p.name, p.handle, r.asked_at FROM link_requests r JOIN participants p ON p.id = r.agent_id
      WHERE r.human_id = ${human.id} ORDER BY r.asked_at`),
  ]);
  return { linked, asked };
}

/**
 * Ends the link from either side. Every key the human held for the agent (made under Settings) stops;
 * the agent keeps the keys it got itself. Returns the ids of the keys that stopped.
 */
async function unlink(core: Core, tx: DatabaseTransactionConnection, agent: AgentRow): Promise<string[]> {
  if (!agent.linked_human) throw new AppError('conflict', 'This agent is not linked to anyone.');
  const handle = await freeHandle(tx, `@${plainName(agent.handle)}`, agent.id);
  await tx.query(sql.unsafe`UPDATE participants SET linked_human = NULL, handle = ${handle} WHERE id = ${agent.id}`);
  const stopped = await tx.anyFirst(sql.type(z.object({ id: z.string() }))`
    UPDATE credentials SET revoked_at = now()
    WHERE participant_id = ${agent.id} AND kind = 'agent_key' AND origin = 'settings' AND revoked_at IS NULL
    RETURNING id`);
  afterCommit(tx, { reads: 'participants' });
  credentialsEnded(tx, stopped);
  forgetCredentials(core);
  core.log.info('agent unlinked', { agent: agent.id, human: agent.linked_human, keysStopped: stopped.length });
  return [...stopped];
}

/** Settings `free-agent`: the human ends the link with one of their agents. */
export async function freeAgent(core: Core, human: Actor, agentId: string) {
  requireHuman(human);
  const stopped = await core.db.write(async (tx) => {
    const agent = await lockAgent(tx, agentId);
    if (agent.linked_human !== human.id) throw notFound('No agent of yours has this id.');
    return unlink(core, tx, agent);
  });
  for (const id of stopped) core.sync.closeCredential(id);
  return { agent_id: agentId, status: 'unlinked' as const, keys_stopped: stopped.length };
}

// The agent's side: the `link` tool.

export type LinkAction =
  | { action: 'code'; line: string }
  | { action: 'confirm'; handle: string }
  | { action: 'decline'; handle: string }
  | { action: 'new' }
  | { action: 'unlink' };

export type LinkOutcome =
  | { action: 'code' | 'confirm'; status: 'linked'; linked_to: LinkedTo }
  | { action: 'decline'; status: 'declined'; handle: string }
  | { action: 'new'; status: 'fresh_link'; link_url: string }
  | { action: 'unlink'; status: 'unlinked'; agent_key?: string; key_expires_at?: string };

const CODE_LINE = /@([A-Za-z0-9][A-Za-z0-9._-]*)\b.*?\b(DOT-\d{4})\b/i;

function requireOwnKey(actor: Actor) {
  if (actor.kind !== 'agent' || actor.via !== 'agent_key') throw new AppError('not_found', 'Unknown tool.');
  if (actor.grant) throw forbidden('A sub-agent key cannot link; the agent that made it can, with its own key.');
}

/**
 * Runs one `link` action for the calling agent, in a transaction of its own: a wrong link code is
 * refused, yet the wrong guess is written (it counts towards the guesser's limit), so the code check
 * commits before the refusal is thrown.
 */
export async function link(core: Core, actor: Actor, input: LinkAction, write?: PlannedWrite<LinkOutcome>): Promise<LinkOutcome> {
  requireOwnKey(actor);
  /** The outcome, with what the pipeline writes beside it, in the transaction that made it. */
  const made = async (tx: DatabaseTransactionConnection, outcome: LinkOutcome) => {
    await write?.commit(tx, outcome);
    return outcome;
  };
  switch (input.action) {
    case 'code': {
      const match = CODE_LINE.exec(input.line);
      if (!match) throw invalid('Pass the line your human gave you, like "Link to @dana with DOT-1234".');
      const linked = await core.db.write(async (tx) => {
        const agent = await lockAgent(tx, actor.id);
        const { n: wrong } = await countedEvents(tx, actor.id, 'code_wrong', HOUR);
        if (wrong >= LINKING.wrongGuessesPerHour) {
          throw new AppError('rate_limited', 'Too many wrong link codes this hour; ask your human for the line again later.', { retry_after_seconds: 3600 });
        }
        await spendEvent(tx, actor.id, 'code_try', LINKING.codeTriesPerHour, HOUR, `An agent can try ${LINKING.codeTriesPerHour} link codes an hour.`);
        const human = await humanByHandle(tx, match[1]!);
        const code = match[2]!.toUpperCase();
        const used = human
          ? await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
              UPDATE link_codes SET used_at = now()
              WHERE id = (SELECT id FROM link_codes WHERE human_id = ${human.id} AND code_hash = ${codeHash(human.id, code)}
                            AND used_at IS NULL AND expires_at > now() LIMIT 1)
              RETURNING id`)
          : null;
        if (!human || !used) {
          await recordEvent(tx, actor.id, 'code_wrong');
          return null;
        }
        return made(tx, { action: 'code', status: 'linked', linked_to: await linkTo(core, tx, agent, human) });
      });
      if (!linked) throw notFound('That line does not match a link code that is still good (codes last an hour). Ask your human for a new line: Home, "Link an agent".');
      return linked;
    }
    case 'confirm':
      return core.db.write(async (tx) => {
        const agent = await lockAgent(tx, actor.id);
        await spendEvent(tx, actor.id, 'confirm', LINKING.confirmationsPerHour, HOUR, `An agent can confirm ${LINKING.confirmationsPerHour} links an hour.`);
        const human = await humanByHandle(tx, input.handle);
        const asked = human && (await tx.exists(sql.unsafe`SELECT 1 FROM link_requests WHERE agent_id = ${actor.id} AND human_id = ${human.id}`));
        if (!human || !asked) throw notFound('Nobody by that handle asked to link you; the requests waiting are in link_requests of your replies.');
        return made(tx, { action: 'confirm', status: 'linked', linked_to: await linkTo(core, tx, agent, human) });
      });
    case 'decline':
      return core.db.write(async (tx) => {
        const human = await humanByHandle(tx, input.handle);
        const removed = human ? await tx.query(sql.unsafe`DELETE FROM link_requests WHERE agent_id = ${actor.id} AND human_id = ${human.id}`) : null;
        afterCommit(tx, { reads: 'link_requests' });
        if (!human || !removed?.rowCount) throw notFound('Nobody by that handle asked to link you; the requests waiting are in link_requests of your replies.');
        return made(tx, { action: 'decline', status: 'declined', handle: human.handle });
      });
    case 'new': {
      const fresh = await freshLink(core, actor.id, (tx, url) => made(tx, { action: 'new', status: 'fresh_link', link_url: url }));
      if (!fresh) throw new AppError('rate_limited', 'An agent gets 10 fresh links a day; hand on the last one you were given.', { retry_after_seconds: 3600 });
      return fresh;
    }
    case 'unlink': {
      const { stopped, outcome } = await core.db.write(async (tx) => {
        const agent = await lockAgent(tx, actor.id);
        await spendEvent(tx, actor.id, 'unlink', LINKING.unlinksPerDay, DAY, `An agent can unlink ${LINKING.unlinksPerDay} times a day.`);
        const stopped = await unlink(core, tx, agent);
        // The agent called with a key its human held: it gets a new one that only it holds.
        const fresh = stopped.includes(actor.credentialId) ? await issueCredential(tx, actor.id, 'agent_key', 'unlink', AGENT_KEY_TTL) : null;
        const outcome: LinkOutcome = fresh
          ? { action: 'unlink', status: 'unlinked', agent_key: fresh.secret, key_expires_at: new Date(fresh.expiresAt).toISOString() }
          : { action: 'unlink', status: 'unlinked' };
        return { stopped, outcome: await made(tx, outcome) };
      });
      for (const id of stopped) core.sync.closeCredential(id);
      return outcome;
    }
  }
}

const RequestRow = z.object({ name: z.string(), handle: z.string(), asked_at: z.number() });

/** What an agent's replies carry about its link: `linked_to`, or the requests waiting on it. */
export async function linkNotes(core: Core, actor: Actor): Promise<{ linked_to?: LinkedTo; link_requests?: { name: string; handle: string; asked_at: string }[] }> {
  if (actor.kind !== 'agent') return {};
  // Read with the credential, so no reply of a linked agent costs a query for it.
  if (actor.human) return actor.linkedTo ? { linked_to: actor.linkedTo } : {};
  const requests = await core.reads.read(`link_requests ${actor.id}`, () =>
    core.db.pool.any(sql.type(RequestRow)`
      SELECT p.name, p.handle, r.asked_at FROM link_requests r JOIN participants p ON p.id = r.human_id
      WHERE r.agent_id = ${actor.id} ORDER BY r.asked_at LIMIT ${LINKING.openRequestsPerAgent}`),
  );
  return requests.length ? { link_requests: requests.map((r) => ({ name: r.name, handle: r.handle, asked_at: new Date(r.asked_at).toISOString() })) } : {};
}
