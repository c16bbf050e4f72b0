import { sql, UniqueIntegrityConstraintViolationError, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CountRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, invalid, notFound } from '../../../schema/errors.ts';
import { forgetCredentials } from './credentials.ts';
import { lockParticipant, paceRefused, requireOwnKey } from './ownKey.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

export const HANDLE_CHANGES_PER_DAY = 5;

const NamedRow = z.object({ id: z.string(), kind: z.enum(['human', 'agent']), name: z.string(), handle: z.string() });
export type Named = z.infer<typeof NamedRow>;
const HandleRow = z.object({ handle: z.string() });
const TRow = z.object({ t: z.number() });

/** A plain handle's name: a letter or digit, then up to 29 letters, digits, `-` or `_`. No dots: they mark "under a human". */
const PLAIN = /^[a-z0-9][a-z0-9_-]{0,29}$/i;
const PARTICIPANT_ID = /^(agt|hum|ppl)_[0-9a-f]{8,40}$/;

/**
 * The one resolver for a participant named in an argument: an id (`agt_…`, `hum_…`, `ppl_…`), or a
 * handle with or without its `@`, compared without case, current or given up earlier (an old handle
 * keeps pointing to whoever had it). As SQL, for a caller's own query: `p.id = ${participantIdOf(who)}`.
 */
export function participantIdOf(ref: string) {
  const text = ref.trim();
  if (PARTICIPANT_ID.test(text)) return sql.fragment`${text}::text`;
  const handle = ('@' + text.replace(/^@/, '')).toLowerCase();
  return sql.fragment`(
    SELECT id FROM participants WHERE lower(handle) = ${handle}
    UNION ALL (SELECT participant_id FROM handle_history WHERE lower(handle) = ${handle} ORDER BY retired_at DESC LIMIT 1)
    LIMIT 1)`;
}

/** The participant a reference names (participantIdOf), or null when nobody goes by it. */
export async function resolveParticipant(conn: CommonQueryMethods, ref: string): Promise<Named | null> {
  return conn.maybeOne(sql.type(NamedRow)`SELECT p.id, p.kind, p.name, p.handle FROM participants p WHERE p.id = ${participantIdOf(ref)}`);
}

/** As resolveParticipant, refusing a name nobody goes by with `not_found`. */
export async function requireParticipant(conn: CommonQueryMethods, ref: string): Promise<Named> {
  const found = await resolveParticipant(conn, ref);
  if (!found) throw notFound(`Nobody goes by ${JSON.stringify(ref.trim().slice(0, 100))}: give an id or a @handle.`);
  return found;
}

/**
 * Gives a participant a new handle, refusing one anyone else holds or held. The old one keeps
 * pointing to it: migration 0008 keeps every handle given up, whatever changed it.
 */
export async function moveHandle(tx: CommonQueryMethods, participantId: string, to: string) {
  const key = to.toLowerCase();
  const taken = await tx.maybeOneFirst(sql.type(HandleRow)`
    SELECT handle FROM participants WHERE lower(handle) = ${key} AND id <> ${participantId}
    UNION ALL SELECT handle FROM handle_history WHERE lower(handle) = ${key} AND participant_id <> ${participantId}
    LIMIT 1`);
  if (taken !== null) throw new AppError('conflict', `${to} is taken (handles are compared without case, and old ones keep pointing to their holder); choose another.`);
  try {
    await tx.query(sql.unsafe`UPDATE participants SET handle = ${to} WHERE id = ${participantId}`);
    afterCommit(tx, { reads: 'participants' });
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) throw new AppError('conflict', `${to} was just taken; choose another.`);
    throw error;
  }
}

export type HandleChange = { id: string; handle: string; previous: string; changed: boolean; left: number };
/** Whose handle changes: a human's own, or an agent's, under its linked human's if asked. */
export type HandleHolder = { id: string; kind: 'human' | 'agent'; human: string | null };

/**
 * `set_handle`: a plain `@name`, or `@name.<human>` under the handle of the human the agent is linked
 * to. Handles are unique without case; the old one keeps resolving. 5 changes a day.
 */
export async function setHandle(core: Core, tx: CommonQueryMethods, actor: Actor, wanted: string): Promise<HandleChange> {
  requireOwnKey(actor, 'change the handle');
  return placeHandle(core, tx, actor, wanted);
}

/**
 * A new handle for `who`, by set_handle or by its human under Settings (`rename-handle`,
 * `handle-under`): a plain `@name`, or, for a linked agent, `@name.<its human>`. 5 a day.
 */
export async function placeHandle(core: Core, tx: CommonQueryMethods, who: HandleHolder, wanted: string): Promise<HandleChange> {
  const text = wanted.trim().replace(/^@/, '');
  const dot = text.indexOf('.');
  const name = dot === -1 ? text : text.slice(0, dot);
  if (!PLAIN.test(name)) {
    throw invalid('A handle is @ and 1 to 30 letters, digits, - or _, starting with a letter or digit; an agent adds .<its human> to place it under theirs.', {
      issues: [{ path: 'handle', message: 'Use @name or @name.<human>.' }],
    });
  }
  let handle = `@${name}`;
  if (dot !== -1) {
    const human = who.kind === 'agent' && who.human
      ? await tx.maybeOneFirst(sql.type(HandleRow)`SELECT handle FROM participants WHERE id = ${who.human}`)
      : null;
    if (!human) throw invalid('Only an agent linked to its human can place its handle under theirs: link first.', { issues: [{ path: 'handle', message: 'Not linked.' }] });
    const under = plainName(human);
    if (text.slice(dot + 1).toLowerCase() !== under.toLowerCase()) {
      throw invalid(`Under its human the handle reads @${name}.${under}.`, { issues: [{ path: 'handle', message: `The part after the dot is the human's handle, ${human}.` }] });
    }
    handle = `@${name}.${under}`;
  }
  await lockParticipant(tx, who.id);
  const previous = await tx.oneFirst(sql.type(HandleRow)`SELECT handle FROM participants WHERE id = ${who.id}`);
  const window = sql.fragment`participant_id = ${who.id} AND retired_at > now() - interval '1 day'`;
  const changes = await tx.oneFirst(sql.type(CountRow)`SELECT count(*) AS n FROM handle_history WHERE ${window}`);
  if (previous === handle) return { id: who.id, handle, previous, changed: false, left: Math.max(0, HANDLE_CHANGES_PER_DAY - changes) };
  if (changes >= HANDLE_CHANGES_PER_DAY) {
    const oldest = await tx.oneFirst(sql.type(TRow)`SELECT min(retired_at) AS t FROM handle_history WHERE ${window}`);
    throw paceRefused(`A handle can change ${HANDLE_CHANGES_PER_DAY} times a day.`, oldest + 24 * 3_600_000);
  }
  await moveHandle(tx, who.id, handle);
  forgetCredentials(core);
  return { id: who.id, handle, previous, changed: true, left: HANDLE_CHANGES_PER_DAY - changes - 1 };
}

/** A handle's own name: `@scout.dana` is `scout`. */
export const plainName = (handle: string) => handle.replace(/^@/, '').split('.')[0]!;

const AgentOfRow = z.object({ id: z.string(), handle: z.string() });

/**
 * Settings: a person renames their own handle, or one of their agents' (`agent_id`); `under` places
 * the agent's handle under theirs (`handle-under`). Another person's agent answers as a missing one.
 */
export async function renameHandle(core: Core, person: Actor, input: { agent_id?: string | undefined; handle?: string | undefined; under?: boolean }) {
  return core.db.write(async (tx) => {
    if (input.agent_id === undefined) {
      if (input.under || input.handle === undefined) throw invalid('Give handle: the new @name.', { issues: [{ path: 'handle', message: 'Required.' }] });
      return placeHandle(core, tx, { id: person.id, kind: 'human', human: null }, input.handle);
    }
    const agent = await tx.maybeOne(sql.type(AgentOfRow)`
      SELECT id, handle FROM participants WHERE id = ${input.agent_id} AND kind = 'agent' AND linked_human = ${person.id}`);
    if (!agent) throw notFound('No agent of yours has this id.');
    const wanted = input.under ? `@${plainName(input.handle ?? agent.handle)}.${plainName(person.handle)}` : input.handle;
    if (wanted === undefined) throw invalid('Give handle: the new @name, or @name.<you>.', { issues: [{ path: 'handle', message: 'Required.' }] });
    return placeHandle(core, tx, { id: agent.id, kind: 'agent', human: person.id }, wanted);
  });
}
