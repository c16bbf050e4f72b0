import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { AppError, invalid } from '../../../schema/errors.ts';
import { PAD_MAX_CHARS } from '../../../schema/pad.ts';
import { blocksAt } from '../../../sync/versions.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import type { Actor } from '../kernel/actor.ts';
import { callerOf } from '../kernel/caller.ts';
import type { Core } from '../kernel/context.ts';
import type { EditablePad } from '../kernel/editors.ts';
import { newId } from '../kernel/secrets.ts';
import { refuseNewSecrets, requireOneKind, type EditPadInput } from '../pads/padEdits.ts';
import { suggestedChange, type BlockChange, type SuggestedEdit } from './suggestedChange.ts';
import { deliver } from '../inbox/inbox.ts';
import { ownersAndHelpers } from '../places/deciders.ts';
import { SuggestionState } from '../../../schema/rows.ts';

/**
 * Suggestions (SPEC part 1, Checked hubs): an edit kept beside the pad, never in its accepted text
 * until someone checks it. Made by edit_pad where the caller may not edit directly (a member in a
 * Checked hub, a section under an edit war) or asks not to (`propose: true`).
 */

/** SPEC part 8 "Write pace": suggested edits waiting on one pad. */
export const WAITING_PER_PARTICIPANT = 5;
export const WAITING_PER_PAD = 20;

export type SuggestionSource = 'edit' | 'proposal' | 'typing' | 'offline';

/** Why an edit became a suggestion: the hub is Checked, the caller proposed, or a section it touches is under an edit war. */
export type SuggestReason = 'checked' | 'proposal' | 'edit_war';

export type Suggested = {
  suggestion_id: string;
  pad_id: string;
  hub: { id: string; slug: string };
  state: 'waiting';
  base_version: number;
  sections: string[];
  small: boolean;
  summary: string;
  reason: SuggestReason;
  /** The characters of new text it holds, counted as an edit's saved text is. */
  saved: number;
};

/** The edit_pad input as a suggestion, checked as editPad checks an edit. */
function suggestedEditOf(input: EditPadInput): SuggestedEdit {
  return requireOneKind(input) ? { text: input.text! } : { edits: input.edits ?? [], inserts: input.inserts ?? [] };
}

/** The blocks of the version a suggestion is made on, refused like an edit's base. */
export async function baseBlocks(conn: CommonQueryMethods, padId: string, baseVersion: number) {
  const base = await blocksAt(conn, padId, baseVersion);
  if (!base) {
    throw invalid(`This pad has no version ${baseVersion}: open_pad gives data.version, the base_version to send.`, { issues: [{ path: 'base_version', message: 'Unknown version.' }] });
  }
  return base.blocks;
}

/** What an edit_pad call would change, against its base version (for the edit-war check and the suggestion). */
export async function changeOf(core: Core, padId: string, input: EditPadInput) {
  return suggestedChange(await baseBlocks(core.db.pool, padId, input.base_version), suggestedEditOf(input));
}

const CountRow = z.object({ mine: z.number(), all: z.number() });

/** Refuses a suggestion past the waiting limits, inside the transaction that would add it (the pad's suggestions locked). */
async function refuseTooManyWaiting(tx: DatabaseTransactionConnection, padId: string, authorId: string) {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`suggestions ${padId}`}, 0))`);
  const { mine, all } = await tx.one(sql.type(CountRow)`
    SELECT count(*) FILTER (WHERE author_id = ${authorId}) AS mine, count(*) AS all
    FROM suggestions WHERE pad_id = ${padId} AND state = 'waiting'`);
  const what = 'Wait for a check, or withdraw one of yours (verify with its id and verdict "turn_down"); open_pad lists those waiting.';
  if (mine >= WAITING_PER_PARTICIPANT) {
    throw new AppError('rate_limited', `You have ${mine} suggestions waiting on this pad, the most one participant may (${WAITING_PER_PARTICIPANT}). ${what}`, {
      waiting: mine,
      limit: WAITING_PER_PARTICIPANT,
    });
  }
  if (all >= WAITING_PER_PAD) {
    throw new AppError('rate_limited', `This pad has ${all} suggestions waiting, the most it takes (${WAITING_PER_PAD}). ${what}`, { waiting: all, limit: WAITING_PER_PAD });
  }
}

/**
 * Keeps an edit_pad call as a suggestion: the whole pad as it would read after the call's edits on its
 * base version, what it changes, whether it is small. Nothing goes into the live document. `write`
 * (the pipeline's count and idempotency record) commits in the same transaction.
 */
export async function suggestEdit(
  core: Core,
  actor: Actor,
  { pad, hub }: EditablePad,
  input: EditPadInput & { decision?: string | undefined },
  reason: SuggestReason,
  write: PlannedWrite<Suggested> | undefined,
  source: SuggestionSource = reason === 'proposal' ? 'proposal' : 'edit',
): Promise<Suggested> {
  const edit = suggestedEditOf(input);
  if ('text' in edit && edit.text.length > PAD_MAX_CHARS) throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters.`);
  const current = await core.sync.version(pad.id);
  if (input.base_version > current) {
    throw invalid(`base_version ${input.base_version} is newer than the pad (version ${current}).`, { issues: [{ path: 'base_version', message: 'Newer than the pad.' }] });
  }
  if (!input.confirm_sensitive) await refuseNewSecrets(core, pad.id, input);
  const change = suggestedChange(await baseBlocks(core.db.pool, pad.id, input.base_version), edit);
  if (!change.changed.length) {
    throw invalid(`This changes nothing against version ${input.base_version}, so there is nothing to suggest.`, { issues: [{ path: 'text' in edit ? 'text' : 'edits', message: 'No change.' }] });
  }
  if (change.text.length > PAD_MAX_CHARS) throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters; this suggestion would make it longer.`);
  const id = newId('sug_');
  const out: Suggested = {
    suggestion_id: id,
    pad_id: pad.id,
    hub: { id: hub.id, slug: hub.slug },
    state: 'waiting',
    base_version: input.base_version,
    sections: change.sections,
    small: change.small,
    summary: change.summary,
    reason,
    saved: change.saved,
  };
  return core.db.write(async (tx) => {
    await refuseTooManyWaiting(tx, pad.id, actor.id);
    await tx.query(sql.unsafe`
      INSERT INTO suggestions (id, pad_id, hub_id, author_id, caller, source, base_version, text, changed, sections, small, summary, decision)
      VALUES (${id}, ${pad.id}, ${hub.id}, ${actor.id}, ${callerOf(actor)}, ${source}, ${input.base_version}, ${change.text},
              ${sql.array(change.changed, 'text')}, ${sql.array(change.sections, 'text')}, ${change.small}, ${change.summary}, ${input.decision ?? null})`);
    // The hub's owner and helpers hear of it; members with a track record find it on their home.
    const checkers = await ownersAndHelpers(tx, hub.id);
    const summary = `${pad.title} (pad ${pad.id}): ${change.summary}`;
    await deliver(tx, checkers.map((to) => ({ to, kind: 'suggestion' as const, from: actor.id, hub_id: hub.id, summary })));
    await write?.commit(tx, out);
    return out;
  });
}

export const SuggestionRow = z.object({
  id: z.string(),
  pad_id: z.string(),
  hub_id: z.string(),
  author_id: z.string(),
  caller: z.string().nullable(),
  source: z.enum(['edit', 'proposal', 'typing', 'offline']),
  base_version: z.number(),
  text: z.string(),
  changed: z.array(z.string()),
  sections: z.array(z.string()),
  small: z.boolean(),
  summary: z.string(),
  decision: z.string().nullable(),
  state: SuggestionState,
  note: z.string().nullable(),
  decided_by: z.string().nullable(),
  accepted_version: z.number().nullable(),
  created_at: z.number(),
});
export type SuggestionRow = z.infer<typeof SuggestionRow>;

export const SUGGESTION_COLUMNS = sql.fragment`s.id, s.pad_id, s.hub_id, s.author_id, s.caller, s.source, s.base_version, s.text, s.changed, s.sections,
  s.small, s.summary, s.decision, s.state, s.note, s.decided_by, s.accepted_version, floor(extract(epoch FROM s.created_at) * 1000) AS created_at`;

/** One suggestion, locked for the caller's transaction when `lock`; null when there is none by that id. */
export async function findSuggestion(conn: CommonQueryMethods, id: string, lock = false): Promise<SuggestionRow | null> {
  return conn.maybeOne(sql.type(SuggestionRow)`SELECT ${SUGGESTION_COLUMNS} FROM suggestions s WHERE s.id = ${id} ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
}

/** A waiting suggestion as a reader reviews it: who made it, on which version, and block by block what it changes. */
export type WaitingSuggestion = {
  id: string;
  pad_id: string;
  pad_title: string;
  hub: { id: string; slug: string; name: string };
  author: { id: string; name: string; kind: 'human' | 'agent' };
  base_version: number;
  sections: string[];
  small: boolean;
  summary: string;
  created_at: number;
  changes: BlockChange[];
};

const WaitingRow = SuggestionRow.extend({
  author_name: z.string(),
  author_kind: z.enum(['human', 'agent']),
  pad_title: z.string(),
  hub_slug: z.string(),
  hub_name: z.string(),
});

/**
 * The waiting suggestions of a pad, or of some hubs but those by `except` (oldest first), with their
 * changes against their base versions.
 */
export async function waitingSuggestions(
  conn: CommonQueryMethods,
  where: { padId: string } | { hubIds: readonly string[]; except: string },
  limit = 50,
): Promise<WaitingSuggestion[]> {
  const scope =
    'padId' in where
      ? sql.fragment`s.pad_id = ${where.padId}`
      : sql.fragment`s.hub_id = ANY(${sql.array([...where.hubIds], 'text')}) AND s.author_id <> ${where.except}`;
  const rows = await conn.any(sql.type(WaitingRow)`
    SELECT ${SUGGESTION_COLUMNS}, a.name AS author_name, a.kind AS author_kind, p.title AS pad_title, h.slug AS hub_slug, h.name AS hub_name
    FROM suggestions s JOIN participants a ON a.id = s.author_id JOIN pads p ON p.id = s.pad_id AND p.deleted_at IS NULL JOIN hubs h ON h.id = s.hub_id
    WHERE ${scope} AND s.state = 'waiting' ORDER BY s.created_at, s.id LIMIT ${limit}`);
  const bases = new Map<string, Awaited<ReturnType<typeof baseBlocks>>>();
  const out: WaitingSuggestion[] = [];
  for (const row of rows) {
    const key = `${row.pad_id} ${row.base_version}`;
    if (!bases.has(key)) bases.set(key, (await blocksAt(conn, row.pad_id, row.base_version))?.blocks ?? []);
    out.push({
      id: row.id,
      pad_id: row.pad_id,
      pad_title: row.pad_title,
      hub: { id: row.hub_id, slug: row.hub_slug, name: row.hub_name },
      author: { id: row.author_id, name: row.author_name, kind: row.author_kind },
      base_version: row.base_version,
      sections: row.sections,
      small: row.small,
      summary: row.summary,
      created_at: row.created_at,
      changes: suggestedChange(bases.get(key)!, { text: row.text }).blocks,
    });
  }
  return out;
}
