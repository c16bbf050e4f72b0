import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { HubRow, PadRow, Role } from '../../../schema/rows.ts';
import { PAD_EDIT_REASON, PAD_LOCKED_REASON, PAD_MAX_CHARS, PAD_SUGGEST_REASON } from '../../../schema/pad.ts';
import type { Block } from '../../../sync/blocks.ts';
import { blocksAt } from '../../../sync/versions.ts';
import { padLogColumns, padLogJoin, PadLogRow } from '../../../sync/store.ts';
import type { AccessRecheck, SyncAuthenticate } from '../../../sync/padSync.ts';
import type { Actor } from '../kernel/actor.ts';
import { callerOf } from '../kernel/caller.ts';
import { grantsPad } from '../kernel/grants.ts';
import type { Core } from '../kernel/context.ts';
import { answering, type PlannedWrite } from '../../db/plannedWrite.ts';
import { AppError, forbidden, invalid, notFound } from '../../../schema/errors.ts';
import { readsPublic } from '../places/hubAccess.ts';
import { authenticateBearer, authenticateSession, endedCredentials } from '../identity/credentials.ts';
import { allows, requireWriter, type Seat } from '../kernel/rights.ts';
import { newId } from '../kernel/secrets.ts';
import type { EditablePad, PadAccess } from '../kernel/editors.ts';
import { mayLock, requireUnlocked } from '../kernel/locks.ts';
import { sections, type Section } from './sections.ts';
import { afterCommit } from '../kernel/afterCommit.ts';



const PadAccessRow = PadRow.extend({
  hub: HubRow,
  role: Role.nullable(),
  war: z.array(z.string()),
});

/**
 * What `readablePad` reads of the pad `x.pad_id` for the reader `x.reader_id`: the pad (with its
 * current version), its hub, the reader's seat and the sections under an edit war (SPEC part 3: they
 * take suggestions only). Without values of its own, so the statements that read it do not rebuild it.
 */
const padAccessColumns = sql.fragment`
    p.id, p.hub_id, p.thread_id, p.title, p.version, p.created_by, p.created_at, p.updated_at, p.locked_by,
    json_build_object('id', h.id, 'slug', h.slug, 'name', h.name, 'readme', h.readme, 'audience', h.audience,
      'mode', h.mode, 'owner_id', h.owner_id, 'accepts_guests', h.accepts_guests,
      'created_at', floor(extract(epoch FROM h.created_at) * 1000), 'updated_at', floor(extract(epoch FROM h.updated_at) * 1000)) AS hub,
    coalesce(m.role, (SELECT i.role FROM item_members i
      WHERE i.item_id IN (p.id, p.thread_id) AND i.participant_id = x.reader_id LIMIT 1)) AS role,
    ARRAY(SELECT w.section_id FROM section_marks w WHERE w.pad_id = p.id AND w.kind = 'edit_war') AS war`;
const padAccessJoins = sql.fragment`
    JOIN pads p ON p.id = x.pad_id AND p.deleted_at IS NULL
    JOIN hubs h ON h.id = p.hub_id AND h.deleted_at IS NULL
    LEFT JOIN hub_members m ON m.hub_id = p.hub_id AND m.participant_id = x.reader_id`;

/** Private and missing answer the same. */
const padNotFound = () => notFound('No such pad, or it is private.');

/** The row read, if its reader may read the pad. */
function readable<Row extends PadAccess>(core: Core, reader: Actor | null, row: Row | null) {
  if (!row || (row.role === null && !readsPublic(core, row.hub)) || !grantsPad(reader, row)) throw padNotFound();
  const { hub, role, war, ...pad } = row;
  return { pad, hub, seat: role as Seat, war };
}

const PadAccessKeyRow = PadAccessRow.extend({ key: z.string() });

/**
 * Readers' access to pads, many in one statement: each key is a reader's id and a pad's
 * (`core.editors.key`). A key whose pad is gone (or whose hub is) is left out.
 */
async function padAccesses(conn: CommonQueryMethods, keys: readonly string[]): Promise<Map<string, PadAccess>> {
  const pairs = keys.map((key) => key.split(' '));
  const rows = await conn.any(sql.prepared('pad_accesses', PadAccessKeyRow)`
    SELECT x.key, ${padAccessColumns}
    FROM unnest(${sql.array(keys, 'text')}, ${sql.array(pairs.map(([, pad]) => pad!), 'text')}, ${sql.array(pairs.map(([reader]) => reader!), 'text')}) AS x(key, pad_id, reader_id)
    ${padAccessJoins}`);
  return new Map(rows.map(({ key, version: _version, ...access }) => [key, access]));
}

const accessReads = (core: Core) => core.editors.reads((keys) => padAccesses(core.db.pool, keys));

/**
 * The pad as the actor may edit it directly, from what the editor cache keeps of their access (read
 * again ahead of its age, off the edit's path), or null when nothing kept grants it: then
 * `readPadAccess` reads it now. Only a grant is trusted: a refusal kept is read again.
 */
export function keptEditable(core: Core, padId: string, actor: Actor): EditablePad | null {
  const kept = accessReads(core).peek(core.editors.key(actor.id, padId));
  if (!kept) return null;
  try {
    return editableOf(core, actor, kept);
  } catch {
    return null;
  }
}

/**
 * The actor's access to the pad (its hub, their seat, its sections under an edit war), read now on
 * `conn` and kept for the next edit (`keptEditable`); null when the pad is gone. `readableAccess`
 * and `editableOf` decide what it allows.
 */
export async function readPadAccess(core: Core, conn: CommonQueryMethods, padId: string, actor: Actor): Promise<PadAccess | null> {
  const reads = accessReads(core);
  const key = core.editors.key(actor.id, padId);
  const begun = reads.begin();
  const access = (await padAccesses(conn, [key])).get(key) ?? null;
  reads.keep(key, access, begun);
  return access;
}

/** The pad, its hub and the actor's seat, if the actor may read the pad (`readPadAccess`'s). */
export const readableAccess = (core: Core, actor: Actor, access: PadAccess | null) => readable(core, actor, access);

/** The pad as `actor` may edit it directly, or the refusal: not found, not an editor, locked. */
function editableOf(core: Core, actor: Actor, access: PadAccess | null): EditablePad {
  const { pad, hub, seat, war } = readable(core, actor, access);
  requireEditor(seat, hub);
  requireUnlocked('pad', { ...pad, maker: pad.created_by }, hub);
  return { pad, hub, seat, war };
}

/**
 * The pad (with its current version), its hub, the reader's seat and the sections under an edit war,
 * in one query: this sits on the path of every edit, so it is prepared.
 */
export async function readablePad(core: Core, conn: CommonQueryMethods, padId: string, reader: Actor | null) {
  const row = await conn.maybeOne(sql.prepared('readable_pad', PadAccessRow)`
    SELECT ${padAccessColumns} FROM (SELECT ${padId}::text AS pad_id, ${reader?.id ?? null}::text AS reader_id) AS x ${padAccessJoins}`);
  return readable(core, reader, row);
}

const PadAccessLogRow = PadAccessRow.extend(PadLogRow.shape);
/**
 * The log is read only for a reader with a seat or of a public hub: a refused connection costs the
 * access, not a log of up to a megabyte (a key scoped away from the pad, or public reading turned off
 * on this server, may still read it to no use).
 */
const seatedLogJoin = padLogJoin(sql.fragment`(m.role IS NOT NULL OR h.audience = 'public' OR EXISTS (SELECT 1 FROM item_members i
      WHERE i.item_id IN (p.id, p.thread_id) AND i.participant_id = x.reader_id))`);

/**
 * As `readablePad`, with the pad's log (snapshot and updates) in the same statement: a live
 * connection that is about to load the pad reads what it may do and what it will load in one round
 * trip (sync/readAhead.ts). A reader refused is refused as by `readablePad`, and the log dropped.
 */
export async function readablePadWithLog(core: Core, conn: CommonQueryMethods, padId: string, reader: Actor | null) {
  const row = await conn.maybeOne(sql.prepared('readable_pad_log', PadAccessLogRow)`
    SELECT ${padAccessColumns}, ${padLogColumns}
    FROM (SELECT ${padId}::text AS pad_id, ${reader?.id ?? null}::text AS reader_id) AS x ${padAccessJoins} ${seatedLogJoin}`);
  if (!row) throw padNotFound();
  const { state, generation, updates, ids, ...access } = row;
  return { ...readable(core, reader, access), log: { state, generation, updates, ids } };
}

/**
 * A pad the actor may edit directly, with its hub and the actor's seat: a grant from the last few
 * seconds is taken from the editor cache, so a warm edit reads nothing before it goes live. Refuses
 * like readablePad and requireEditor.
 */
export async function editablePad(core: Core, conn: CommonQueryMethods, padId: string, actor: Actor): Promise<EditablePad> {
  return keptEditable(core, padId, actor) ?? editableOf(core, actor, await readPadAccess(core, conn, padId, actor));
}

/** Editing directly: owners and helpers anywhere, members in Open hubs (SPEC part 2). */
export function mayEditPad(seat: Seat, hub: Pick<HubRow, 'mode'>): boolean {
  if (!allows(seat, 'write')) return false;
  return hub.mode === 'open' || seat === 'owner' || seat === 'helper';
}

export function requireEditor(seat: Seat, hub: HubRow) {
  requireWriter(seat, hub);
  if (!mayEditPad(seat, hub)) {
    throw forbidden(`${hub.slug} is a Checked hub: members suggest edits there: edit_pad keeps their change as a suggestion for others to check.`, { yourCapabilities: ['read'] });
  }
}

export const authorOf = (actor: Actor) => ({ id: actor.id, kind: actor.kind, caller: callerOf(actor) });

export type PadPlace = { hub: HubRow; seat: Seat; threadId: string | null };
export type CreatedPad = { pad_id: string; title: string; hub: Pick<HubRow, 'id' | 'slug'>; thread_id: string | null; version: number; blocks: number };

/**
 * A new pad where the policy let the caller write, with its first text: the pad row, its first update
 * and version 1 commit together with what `write` adds, or the live document is rolled back.
 */
export async function createPad(
  core: Core,
  actor: Actor,
  { hub, threadId }: PadPlace,
  input: { title: string; text?: string | undefined },
  write: PlannedWrite<CreatedPad> | undefined,
): Promise<CreatedPad> {
  const text = input.text ?? '';
  if (text.length > PAD_MAX_CHARS) throw new AppError('too_large', `A pad holds at most ${PAD_MAX_CHARS} characters; this text has ${text.length}.`);
  const padId = newId('pad_');
  const created = (version: number, blocks: number): CreatedPad => ({ pad_id: padId, title: input.title, hub: { id: hub.id, slug: hub.slug }, thread_id: threadId, version, blocks });
  const prepare = async (tx: DatabaseTransactionConnection) => {
    await tx.query(sql.unsafe`
      INSERT INTO pads (id, hub_id, thread_id, title, created_by) VALUES (${padId}, ${hub.id}, ${threadId}, ${input.title}, ${actor.id})`);
    await tx.query(sql.unsafe`UPDATE hubs SET updated_at = now() WHERE id = ${hub.id}`);
    afterCommit(tx, { reads: 'hubs' }, ...(threadId === null ? [] : [{ reads: 'pads' as const }]));
  };
  const made = await core.sync.createPad(padId, authorOf(actor), text, prepare, answering(write, (first: { version: number; blocks: number }) => created(first.version, first.blocks)));
  return created(made.version, made.blocks);
}

/** The live blocks and the version they belong to (read after the blocks, so it is never behind them). */
export async function padContent(core: Core, padId: string) {
  const blocks = await core.sync.read(padId);
  return { blocks, version: await core.sync.version(padId) };
}

export type OpenPadInput = {
  pad_id: string;
  mode?: 'outline' | 'sections' | 'changes' | 'full' | undefined;
  sections?: string[] | undefined;
  since?: number | undefined;
};

/** What changed between `since` and now, block by block. */
export async function changesSince(conn: CommonQueryMethods, padId: string, since: number, now: readonly Block[]) {
  const before = (await blocksAt(conn, padId, since))?.blocks;
  if (!before) throw invalid(`This pad has no version ${since}.`, { issues: [{ path: 'since', message: 'Unknown version.' }] });
  const old = new Map(before.map((b) => [b.id, b]));
  const current = new Set(now.map((b) => b.id));
  const changes: { block_id: string; change: 'added' | 'changed' | 'removed'; text: string; before?: string }[] = [];
  for (const block of now) {
    const was = old.get(block.id);
    if (!was) changes.push({ block_id: block.id, change: 'added', text: block.text });
    else if (was.text !== block.text) changes.push({ block_id: block.id, change: 'changed', text: block.text, before: was.text });
  }
  for (const was of before) if (!current.has(was.id)) changes.push({ block_id: was.id, change: 'removed', text: '', before: was.text });
  return changes;
}

export type PadChange = Awaited<ReturnType<typeof changesSince>>[number];

/** What open_pad shows, by mode: the live blocks and their version, and what the mode picks out. */
export type PadReading = {
  pad: PadRow;
  hub: HubRow;
  seat: Seat;
  version: number;
  blocks: Block[];
  sections: Section[];
  canEdit: boolean;
  /** Whether the reader may lock (or, when locked, unlock) the pad with moderate. */
  canLock: boolean;
} & (
  | { mode: 'outline' }
  | { mode: 'sections'; found: Section[]; missing: string[] }
  | { mode: 'changes'; since: number; changes: PadChange[] }
  | { mode: 'full' }
);

export async function padReading(
  core: Core,
  conn: CommonQueryMethods,
  target: { pad: PadRow; hub: HubRow; seat: Seat },
  input: OpenPadInput,
  reader: Actor,
): Promise<PadReading> {
  const { pad, hub, seat } = target;
  // The version is the one read with the pad's row a moment ago (the target), as current as a read of
  // its own would be: the text is the live one.
  const { version } = pad;
  const blocks = await core.sync.read(pad.id);
  const all = sections(blocks);
  const lockable = { ...pad, maker: pad.created_by };
  const canEdit = mayEditPad(seat, hub) && pad.locked_by === null;
  const base = { pad, hub, seat, version, blocks, sections: all, canEdit, canLock: mayLock(reader.id, seat, lockable, pad.locked_by !== null) };
  const mode = input.mode ?? 'outline';
  if (mode === 'sections') {
    const wanted = input.sections ?? [];
    if (!wanted.length) throw invalid('Mode "sections" needs sections: a list of section ids from the outline.', { issues: [{ path: 'sections', message: 'Required for mode "sections".' }] });
    const found = all.filter((s) => wanted.includes(s.id));
    return { ...base, mode, found, missing: wanted.filter((id) => !found.some((s) => s.id === id)) };
  }
  if (mode === 'changes') {
    if (input.since === undefined) throw invalid('Mode "changes" needs since: the version you have.', { issues: [{ path: 'since', message: 'Required for mode "changes".' }] });
    if (input.since > version) throw invalid(`since ${input.since} is newer than the pad (version ${version}).`, { issues: [{ path: 'since', message: 'Newer than the pad.' }] });
    const changes = input.since === version ? [] : await changesSince(conn, pad.id, input.since, blocks);
    return { ...base, mode, since: input.since, changes };
  }
  return { ...base, mode };
}

/**
 * Who may open a pad over WebSocket: an agent key as the provider's token, or the `svc_session`
 * cookie, decided by the same rules as every other way in.
 */
export function syncAuthenticator(core: Core): SyncAuthenticate {
  return async ({ padId, token, cookie, readLog }) => {
    let actor: Actor | null = null;
    // The web app sends no key (its cookie rides on the upgrade request); agents send their key.
    if (token.startsWith('svc')) actor = await authenticateBearer(core, token);
    else {
      const session = /(?:^|;\s*)svc_session=([^;]+)/.exec(cookie ?? '')?.[1];
      // A suspended account's session is refused, not read as signed out (SPEC part 5).
      actor = await authenticateSession(core, session ? decodeURIComponent(session) : undefined, { refuseSuspended: true });
    }
    // A connection that will load the pad reads its log in the same statement (sync/readAhead.ts).
    const { pad, hub, seat, log } = readLog ? await readablePadWithLog(core, core.db.pool, padId, actor) : { ...(await readablePad(core, core.db.pool, padId, actor)), log: undefined };
    const writes = actor !== null && actor.scopes.includes('svc:write');
    const editor = mayEditPad(seat, hub);
    const locked = pad.locked_by !== null;
    return {
      readOnly: !editor || !writes || locked,
      // A locked pad takes no suggestions either: its reader only reads.
      suggests: writes && allows(seat, 'write') && !editor && !locked,
      author: actor ? authorOf(actor) : null,
      credentialId: actor?.credentialId ?? null,
      ...(log ? { log } : {}),
    };
  };
}

const AccessRow = z.object({
  pad_id: z.string(),
  participant_id: z.string().nullable(),
  audience: z.string().nullable(),
  mode: HubRow.shape.mode.nullable(),
  role: Role.nullable(),
  locked: z.boolean(),
});

/**
 * Of the open live connections, the ones whose access ended: the credential was revoked or ran out,
 * or the pad is no longer readable to its participant (removed from the hub, the hub made private,
 * the pad gone). A connection that writes is closed with a reason, and opens again read-only, when
 * the pad was locked (PAD_LOCKED_REASON) or its person may no longer edit it directly (the hub became
 * Checked, they were made a member: PAD_SUGGEST_REASON), so their typing never reaches the accepted
 * text; one read-only because its person suggested, once they may edit directly (the hub Open again,
 * made a helper), with PAD_EDIT_REASON. Two queries for everything an instance holds open.
 */
export function padAccessRecheck(core: Core): AccessRecheck {
  return async (open) => {
    const credentials = [...new Set(open.flatMap((o) => (o.credentialId ? [o.credentialId] : [])))];
    const ended = new Set(await endedCredentials(core, credentials));
    const rows = await core.db.pool.any(sql.type(AccessRow)`
      SELECT x.pad_id, x.participant_id, h.audience, h.mode, p.locked_by IS NOT NULL AS locked,
             coalesce(m.role, (SELECT i.role FROM item_members i
               WHERE i.item_id IN (p.id, p.thread_id) AND i.participant_id = x.participant_id LIMIT 1)) AS role
      FROM unnest(${sql.array(open.map((o) => o.padId), 'text')}::text[], ${sql.array(open.map((o) => o.participantId), 'text')}::text[]) AS x(pad_id, participant_id)
      LEFT JOIN pads p ON p.id = x.pad_id AND p.deleted_at IS NULL
      LEFT JOIN hubs h ON h.id = p.hub_id AND h.deleted_at IS NULL
      LEFT JOIN hub_members m ON m.hub_id = p.hub_id AND m.participant_id = x.participant_id`);
    const keyOf = (padId: string, participantId: string | null) => `${padId} ${participantId ?? ''}`;
    const readable = new Map(
      rows.filter((r) => r.audience !== null && (r.role !== null || readsPublic(core, { audience: r.audience as HubRow['audience'] }))).map((r) => [keyOf(r.pad_id, r.participant_id), r]),
    );
    return open.flatMap((o) => {
      const row = readable.get(keyOf(o.padId, o.participantId));
      if ((o.credentialId !== null && ended.has(o.credentialId)) || !row) return [o];
      const editor = mayEditPad(row.role, { mode: row.mode! });
      if (!o.readOnly && row.locked) return [{ ...o, reason: PAD_LOCKED_REASON }];
      if (!o.readOnly && !editor) return [{ ...o, reason: PAD_SUGGEST_REASON }];
      if (o.suggests && editor && !row.locked) return [{ ...o, reason: PAD_EDIT_REASON }];
      return [];
    });
  };
}
