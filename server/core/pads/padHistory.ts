import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { Block } from '../../../sync/blocks.ts';
import { blocksAt, editIdOf } from '../../../sync/versions.ts';
import type { VersionBlock } from '../../../sync/blockLists.ts';
import { notFound } from '../../../schema/errors.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { mayEditPad, padContent, padReading, type OpenPadInput, type PadReading } from './pads.ts';
import { allows, type Seat } from '../kernel/rights.ts';
import { statusColumns, statusOf, StatusRow, type PadStatus, type Section } from './sections.ts';
import type { HubRow, PadRow } from '../../../schema/rows.ts';
import { linkForm } from '../kernel/framing.ts';
import { readsVerifiedSql } from '../identity/standing.ts';

/**
 * Who wrote what in a pad, read from its versions: each block's last writer (the view
 * `pad_block_authors`, the latest version that changed the block), each section's (the latest of its
 * blocks'), and the run of versions with their writer, kind, time and a short summary.
 */

/** A person (`human`, as participants' kinds are named everywhere in data), or an agent. */
export type WriterKind = 'human' | 'agent';
/** `caller`: which way the change came in (kernel/caller.ts), when it was kept. */
export type Writer = { id: string; name: string; kind: WriterKind; caller?: string };
/** A block's last writer, the version they wrote it in, and whether they read verified (their links stay live). */
export type BlockWriter = Writer & { version: number; reach: boolean };

const writerKind = (actorKind: string | null): WriterKind => (actorKind === 'agent' ? 'agent' : 'human');

type Known = { version: number; writers: Map<string, { id: string; kind: WriterKind; caller?: string; version: number } | null> };

/**
 * Each block's last writer as far as this instance has read a pad's versions: a read folds in only
 * the versions after those (committed versions never change, and each commits after the one before
 * it), so a pad with a long history costs its new versions, not all of them. Pads read least lately
 * are forgotten past KNOWN_PADS.
 */
const known = new Map<string, Known>();
const KNOWN_PADS = 1_000;

const FreshRow = z.object({
  writers: z.object({
    fresh: z.array(z.object({ version: z.number(), actor_id: z.string().nullable(), actor_kind: z.string().nullable(), caller: z.string().nullable(), ids: z.array(z.string()) })),
    names: z.record(z.string(), z.object({ name: z.string(), reach: z.boolean() })).nullable(),
  }),
});

/**
 * The column `writers` (`FreshRow`) of a pad's block writers, for a statement of the caller's: the
 * versions after those this instance has folded, each with the blocks it changed (its `changed`, or
 * the ids its delta names), and the names and reach of everyone who wrote any of them; and `base`,
 * what this instance knew then, for `writersOf` to fold them into.
 */
function writerColumns(padId: string): { sql: FragmentSqlToken; base: Known | undefined } {
  // The version and the writers known are read through a subquery and `text_list` (migration 0042),
  // which a plan cannot see into, generic or not: so Postgres keeps the prepared statements these
  // columns join a generic plan for, and plans them once per connection rather than on every read.
  const cached = known.get(padId);
  const actors = [...new Set([...(cached?.writers.values() ?? [])].flatMap((w) => (w ? [w.id] : [])))];
  const columns = sql.fragment`
    (WITH fresh AS (
      SELECT v.version, v.actor_id, v.actor_kind, v.caller,
             coalesce(v.changed, ARRAY(SELECT e->>0 FROM jsonb_array_elements(v.delta) AS e)) AS ids
      FROM pad_versions v WHERE v.pad_id = ${padId} AND v.version > (SELECT ${cached?.version ?? 0}::int4))
    SELECT json_build_object(
      'fresh', coalesce((SELECT json_agg(fresh ORDER BY version) FROM fresh), '[]'),
      'names', (SELECT json_object_agg(p.id, json_build_object('name', p.name, 'reach', ${readsVerifiedSql('p')})) FROM participants p
                WHERE p.id IN (SELECT text_list(${sql.array(actors, 'text')}) UNION SELECT actor_id FROM fresh)))) AS writers`;
  return { sql: columns, base: cached };
}

/** The last writer of each of `blocks` that someone wrote (a block last touched by the service has none), from a pad's `writerColumns`. */
function writersOf(padId: string, base: Known | undefined, { writers: row }: z.infer<typeof FreshRow>, blocks: readonly Pick<Block, 'id'>[]): Map<string, BlockWriter> {
  // Another read may have folded past `base` meanwhile: its versions are skipped below.
  const now = known.get(padId);
  const cached = now && now.version >= (base?.version ?? 0) ? now : base;
  const writers = new Map(cached?.writers);
  let version = cached?.version ?? 0;
  for (const v of row.fresh) {
    if (v.version <= version) continue;
    version = v.version;
    const writer = v.actor_id ? { id: v.actor_id, kind: writerKind(v.actor_kind), ...(v.caller ? { caller: v.caller } : {}), version: v.version } : null;
    for (const id of v.ids) writers.set(id, writer);
  }
  known.delete(padId);
  known.set(padId, { version, writers });
  if (known.size > KNOWN_PADS) known.delete(known.keys().next().value!);
  const out = new Map<string, BlockWriter>();
  for (const block of blocks) {
    const writer = writers.get(block.id);
    const named = writer && row.names?.[writer.id];
    if (writer) out.set(block.id, { ...writer, name: named ? named.name : 'Someone', reach: named ? named.reach : false });
  }
  return out;
}

/** The last writer of each of `blocks` that someone wrote (a block last touched by the service has none): one query. */
export async function blockWriters(conn: CommonQueryMethods, padId: string, blocks: readonly Pick<Block, 'id'>[]): Promise<Map<string, BlockWriter>> {
  const columns = writerColumns(padId);
  return writersOf(padId, columns.base, await conn.one(sql.prepared('block_writers', FreshRow)`SELECT ${columns.sql}`), blocks);
}

const PadSideRow = StatusRow.extend(FreshRow.shape).extend({ suggested: z.boolean() });

/**
 * What a reading of a pad shows beside its text, in one query: the status of its sections
 * (`padStatus`), the last writer of each of `blocks` (`blockWriters`), and whether suggestions to it
 * wait for a check.
 */
export async function padSide(conn: CommonQueryMethods, padId: string, blocks: readonly Pick<Block, 'id'>[]) {
  const writers = writerColumns(padId);
  // Prepared once per connection: agents poll open_pad, and planning this statement cost about a
  // millisecond of the database's time on every read, several times what running it costs.
  const row = await conn.one(sql.prepared('pad_side', PadSideRow)`
    SELECT ${statusColumns(padId)}, ${writers.sql},
           EXISTS (SELECT 1 FROM suggestions s WHERE s.pad_id = ${padId} AND s.state = 'waiting') AS suggested`);
  return { status: statusOf(row), writers: writersOf(padId, writers.base, row, blocks), suggested: row.suggested };
}

/**
 * Blocks as readers see them (SPEC part 4 "Markdown views"): a block's links stay live where its
 * last writer reads verified, as a post's do by its author, and read `[link to <host>]` otherwise.
 */
export const textByReach = (blocks: readonly Pick<Block, 'id' | 'text'>[], writers: ReadonlyMap<string, BlockWriter>) =>
  blocks.map((block) => (writers.get(block.id)?.reach ? block.text : linkForm(block.text))).join('\n\n');

/** Each section's last writer: whoever wrote the most recently changed of its blocks (its heading included). */
function sectionWriters(all: readonly Section[], writers: ReadonlyMap<string, BlockWriter>): Map<string, BlockWriter> {
  const out = new Map<string, BlockWriter>();
  for (const section of all) {
    let latest: BlockWriter | undefined;
    for (const block of section.blocks) {
      const writer = writers.get(block.id);
      if (writer && (!latest || writer.version > latest.version)) latest = writer;
    }
    if (latest) out.set(section.id, latest);
  }
  return out;
}

const VersionListRow = z.object({
  version: z.number(),
  kind: z.enum(['create', 'edit', 'undo', 'live', 'restore']),
  restored: z.number().nullable(),
  actor_id: z.string().nullable(),
  actor_kind: z.string().nullable(),
  caller: z.string().nullable(),
  name: z.string().nullable(),
  edit_id: z.string().nullable(),
  created_at: z.number(),
  blocks: z.number(),
  added: z.number(),
  removed: z.number(),
  snippet: z.string().nullable(),
});

export type VersionEntry = {
  version: number;
  kind: 'create' | 'edit' | 'undo' | 'live' | 'restore';
  /** A restore: the version it brought back. */
  restored: number | null;
  writer: Writer | null;
  at: number;
  /** How many blocks it touched, and of those how many it placed (added or moved) or removed. */
  blocks: number;
  added: number;
  removed: number;
  /** The start of the first text it wrote, when its row keeps texts (participant text). */
  snippet: string | null;
  /** For undo_edit: every version but the pad's first (a batch of typing and a restore included). */
  editId: string | null;
  /** Whether the reader may undo it: their own, or anyone's for owners and helpers, where they may edit. */
  undoable: boolean;
};

export type PadHistory = {
  pad: PadRow;
  hub: HubRow;
  version: number;
  versions: VersionEntry[];
  /** Where the next page starts (`before`), when older versions remain. */
  nextBefore: number | null;
  writers: Map<string, BlockWriter>;
  blocks: Block[];
};

export const HISTORY_PAGE = 50;

/** The pad's versions, newest first (50 a page, before `before`), and the last writer of each current block. */
export async function padHistory(core: Core, conn: CommonQueryMethods, actor: Actor, target: { pad: PadRow; hub: HubRow; seat: Seat }, before?: number): Promise<PadHistory> {
  const { pad, hub, seat } = target;
  const upTo = before ?? 2_147_483_647;
  const rows = await conn.any(sql.type(VersionListRow)`
    SELECT v.version, v.kind, v.restored, v.actor_id, v.actor_kind, v.caller, p.name, v.edit_id, v.created_at,
           coalesce(cardinality(v.changed), jsonb_array_length(v.delta), 0) AS blocks,
           (SELECT count(*) FROM jsonb_array_elements(v.delta) e WHERE jsonb_array_length(e) = 3)::int AS added,
           (SELECT count(*) FROM jsonb_array_elements(v.delta) e WHERE jsonb_array_length(e) = 1)::int AS removed,
           (SELECT left(e->>(jsonb_array_length(e) - 1), 120) FROM jsonb_array_elements(v.delta) e
            WHERE jsonb_array_length(e) > 1 AND e->>(jsonb_array_length(e) - 1) <> '' LIMIT 1) AS snippet
    FROM pad_versions v LEFT JOIN participants p ON p.id = v.actor_id
    WHERE v.pad_id = ${pad.id} AND v.version < ${upTo}
    ORDER BY v.version DESC LIMIT ${HISTORY_PAGE + 1}`);
  const canEdit = mayEditPad(seat, hub) && target.pad.locked_by === null;
  const moderates = allows(seat, 'moderate');
  const versions = rows.slice(0, HISTORY_PAGE).map((r): VersionEntry => {
    const undoableKind = r.kind !== 'create';
    return {
      version: r.version,
      kind: r.kind,
      restored: r.restored,
      writer: r.actor_id ? { id: r.actor_id, name: r.name ?? 'Someone', kind: writerKind(r.actor_kind), ...(r.caller ? { caller: r.caller } : {}) } : null,
      at: r.created_at,
      blocks: r.blocks,
      added: r.added,
      removed: r.removed,
      snippet: r.snippet,
      editId: undoableKind ? (r.edit_id ?? editIdOf(pad.id, r.version)) : null,
      undoable: undoableKind && canEdit && (r.actor_id === actor.id || moderates),
    };
  });
  const { blocks, version } = await padContent(core, pad.id);
  return {
    pad,
    hub,
    version,
    versions,
    nextBefore: rows.length > HISTORY_PAGE ? versions.at(-1)!.version : null,
    writers: await blockWriters(conn, pad.id, blocks),
    blocks,
  };
}

/** The pad's blocks as they were at `version` (its history lists those it has). */
export async function padAtVersion(conn: CommonQueryMethods, target: { pad: PadRow }, version: number): Promise<{ pad: PadRow; version: number; blocks: VersionBlock[] }> {
  const at = await blocksAt(conn, target.pad.id, version);
  if (!at) throw notFound(`${target.pad.id} has no version ${version}; ui_pad_history lists those it has.`);
  return { pad: target.pad, version, blocks: at.blocks };
}

/** `suggested`: whether suggestions to the pad wait for a check (the caller reads them when so). */
export type OpenedPad = PadReading & { status: PadStatus; suggested: boolean; writers?: Map<string, BlockWriter>; blockWriters?: Map<string, BlockWriter> };

/**
 * open_pad: the reading and the status of the pad's sections, and, but for `changes`, whose text each
 * section is (its last writer), so an agent knows whose words it is about to change. Beside the pad's
 * own row (the caller's target), one query.
 */
export async function openPad(core: Core, conn: CommonQueryMethods, actor: Actor, target: { pad: PadRow; hub: HubRow; seat: Seat }, input: OpenPadInput): Promise<OpenedPad> {
  const reading = await padReading(core, conn, target, input, actor);
  const side = await padSide(conn, reading.pad.id, reading.blocks);
  const opened = { ...reading, status: side.status, suggested: side.suggested };
  if (reading.mode === 'changes') return opened;
  return { ...opened, writers: sectionWriters(reading.sections, side.writers), blockWriters: side.writers };
}
