import { hash } from 'node:crypto';
import { sql, type CommonQueryMethods, type FragmentSqlToken, type IdentifierSqlToken } from 'slonik';
import * as Y from 'yjs';
import { z } from 'zod';
import { VersionRow } from '../schema/rows.ts';
import { applyDeltas, type Delta, type VersionBlock } from './blockLists.ts';
import type { SectionChange } from './padSections.ts';
import type { PaceCount } from '../server/db/plannedWrite.ts';

/**
 * Versions of a pad in the database: a number that rises with every committed change. A version row
 * keeps the blocks it changed (`delta`, texts inline) or, now and then, the whole block list
 * (`blocks`, a checkpoint: ids and text hashes, the texts stored once by hash). The list at a version
 * is its nearest checkpoint at or before it with the deltas after that folded in.
 */
/** Who made a version, and which way it came in (`caller`: server/core/kernel/caller.ts), kept for attribution. */
export type Author = { id: string; kind: 'human' | 'agent'; caller?: string | undefined } | null;
export type VersionKind = 'create' | 'edit' | 'undo' | 'live' | 'restore';

export const hashText = (text: string) => hash('sha256', text, 'hex').slice(0, 16);

/** The version a write was based on is no longer the pad's: someone else (another instance) wrote since. */
export class StaleVersion extends Error {
  constructor(padId: string, expected?: number) {
    super(expected === undefined ? `pad ${padId} moved on before this write` : `pad ${padId} is past version ${expected}`);
    this.name = 'StaleVersion';
  }
}

export type VersionWrite = {
  padId: string;
  kind: VersionKind;
  author: Author;
  /** The version this one follows: the write throws StaleVersion if the pad is no longer at it. */
  previous: number;
  /** The blocks the change touched. */
  changed: readonly string[];
  /** A restore: the earlier version whose blocks it brought back. */
  restored?: number | undefined;
  /** What the version stores: the change, or (a checkpoint) the whole list after it. */
  body: { delta: Delta } | { checkpoint: readonly VersionBlock[] };
  /** The Yjs update of the change, appended to the pad's log by the same statement. */
  update?: Uint8Array | null | undefined;
  /** The sections search keeps (`pad_sections`) that the change rewrote or removed, written by the same statement (their text later). */
  sections?: SectionChange | undefined;
  /**
   * An expression of the caller's, run by the same statement once the version is made (never when the
   * pad was past `previous`): what the write counts beside it (server/db/plannedWrite.ts `inline`).
   */
  alongside?: FragmentSqlToken | undefined;
};

const RecordedRow = z.object({ version: z.number(), threaded: z.boolean(), alongside: z.unknown().optional() });
/** A version recorded: its number, and whether its pad belongs to a thread (whose reading shows the version). */
export type Recorded = { version: number; threaded: boolean };

/**
 * A version's writes as the common table expressions of one statement, each named `name(part)`:
 * the pad's number bumped (`bumped`), the version row, the last writers, the change's update in the
 * log and its sections. Each part selects from the bumped pad row: when the pad is past `previous`,
 * nothing is written.
 */
function versionWrites(input: VersionWrite, name: (part: string) => IdentifierSqlToken) {
  const author = authorOf(input);
  const ids = [...new Set(input.changed)];
  const changed = sql.fragment`NULLIF(${sql.array(inPlace(input) ? [] : ids, 'text')}, '{}')`;
  const bumped = name('bumped');
  const logged = input.update
    ? sql.fragment`, ${name('logged')} AS (
        INSERT INTO pad_updates (pad_id, update, state_vector)
        SELECT ${input.padId}, ${sql.binary(Buffer.from(input.update))}, ${sql.binary(Buffer.from(Y.encodeStateVectorFromUpdate(input.update)))} FROM ${bumped})`
    : sql.fragment``;
  let texts = sql.fragment``;
  if (!('delta' in input.body)) {
    // A checkpoint's texts are stored once by hash: the ones already there are skipped.
    const byHash = new Map(input.body.checkpoint.map((block) => [hashText(block.text), block.text]));
    texts = sql.fragment`, ${name('texts')} AS (
        INSERT INTO pad_block_texts (pad_id, hash, text)
        SELECT ${input.padId}, t.hash, t.text FROM ${bumped}, ${sql.unnest([...byHash], ['text', 'text'])} AS t(hash, text)
        ON CONFLICT DO NOTHING)`;
  }
  const sectioned = input.sections ? sectionWrites(input.padId, input.sections, name) : null;
  const blocks = 'delta' in input.body ? null : JSON.stringify(input.body.checkpoint.map((block) => [block.id, hashText(block.text)]));
  const delta = 'delta' in input.body ? JSON.stringify(input.body.delta) : null;
  return {
    /** What tells the statement's shape apart, for naming it once prepared. */
    shape: `${'delta' in input.body ? 'delta' : 'checkpoint'}${input.update ? '_logged' : ''}${sectioned ? `_sectioned_${sectioned.shape}` : ''}`,
    bumped,
    sql: sql.fragment`${bumped} AS (
      UPDATE pads SET version = version + 1, updated_at = now()
      WHERE id = ${input.padId} AND version = ${input.previous}
      RETURNING version, thread_id)
    ${logged}${texts}${sectioned?.sql ?? sql.fragment``},
    ${name('versioned')} AS (
      INSERT INTO pad_versions (pad_id, version, kind, actor_id, actor_kind, caller, changed, blocks, delta, restored)
      SELECT ${input.padId}, version, ${input.kind}, ${author.id}, ${author.kind}, ${author.caller}, ${changed}, ${blocks}::jsonb, ${delta}::jsonb, ${input.restored ?? null}::int4
      FROM ${bumped})`,
  };
}

/**
 * Records a version: the pad's number rises by one, the version row, the last writers and the
 * change's update in the log are written by one statement, so it commits whole or not at all. When
 * the pad is past `previous`, nothing is written and it throws StaleVersion.
 */
export async function recordVersion(conn: CommonQueryMethods, input: VersionWrite): Promise<Recorded> {
  const writes = versionWrites(input, (part) => sql.identifier([part]));
  // Prepared once per connection (one name per shape of the text): the hot path of every edit skips
  // parsing and planning its writes.
  // What runs alongside names its statement by its text, which each caller keeps to one shape.
  const beside = input.alongside ? `_${hash('sha256', input.alongside.sql, 'hex').slice(0, 12)}` : '';
  const statement = sql.prepared(`record_version_${writes.shape}${beside}`, RecordedRow);
  const alongside = input.alongside ? sql.fragment`, (SELECT ${input.alongside}) AS alongside` : sql.fragment``;
  const recorded = await conn.maybeOne(statement`
    WITH ${writes.sql}
    SELECT version, thread_id IS NOT NULL AS threaded${alongside} FROM bumped`);
  if (recorded === null) throw new StaleVersion(input.padId, input.previous);
  return { version: recorded.version, threaded: recorded.threaded };
}

const RecordedEachRow = z.object({ i: z.number(), version: z.number(), threaded: z.boolean() });

/**
 * Records versions of several pads (one each, nothing `alongside`) by one statement, as
 * `recordVersion` records one: each pad's writes are its own, and a pad past its `previous` writes
 * nothing while the others are written. Fewer, larger statements: live typing on hundreds of pads
 * sends one statement per batch rather than one per pad. Each pad's answer is its Recorded, or
 * null when the pad was past `previous`.
 */
export async function recordVersions(conn: CommonQueryMethods, inputs: readonly VersionWrite[]): Promise<(Recorded | null)[]> {
  const writes = inputs.map((input, i) => versionWrites(input, (part) => sql.identifier([`${part}_${i}`])));
  const rows = await conn.any(sql.type(RecordedEachRow)`
    WITH ${sql.join(writes.map((write) => write.sql), sql.fragment`,
    `)}
    ${sql.join(writes.map((write, i) => sql.fragment`SELECT ${i}::int4 AS i, version, thread_id IS NOT NULL AS threaded FROM ${write.bumped}`), sql.fragment` UNION ALL `)}`);
  const recorded: (Recorded | null)[] = inputs.map(() => null);
  for (const row of rows) recorded[row.i] = { version: row.version, threaded: row.threaded };
  return recorded;
}

/**
 * The section rows a version writes: new ones (every one at a checkpoint) upserted whole, a row left
 * as it was not written again; the changed ones given their title, level, place and the version, a
 * heap-only update of a few bytes, with their pad named in `pad_sections_stale` for their text to
 * follow (migration 0038); the removed ones deleted, and on a checkpoint every row the list no longer has.
 */
function sectionWrites(padId: string, change: SectionChange, name: (part: string) => IdentifierSqlToken) {
  const bumped = name('bumped');
  const rows = change.rows.map((row) => [row.id, row.after, row.title, row.level, row.body]);
  const moved = (column: 'id' | 'after' | 'title' | 'level', type: 'text' | 'int4') => sql.array(change.changed.map((row) => row[column]), type);
  // The lists are read through functions of one row (migration 0042), so that the statement's generic
  // plan is as cheap as a custom one and Postgres stops planning it on every edit.
  const gone = change.whole
    ? sql.fragment`section_id <> ALL(${sql.array(change.rows.map((row) => row.id), 'text')})`
    : sql.fragment`section_id IN (SELECT text_list(${sql.array(change.removed, 'text')}))`;
  // A part with nothing to do for this change is left out of the statement (each of its plan nodes
  // costs start-up on every run): an edit inside one section writes only its row and the stale mark.
  // Its name is part of the statement's, one prepared statement per shape.
  const parts: { name: string; sql: FragmentSqlToken }[] = [];
  if (rows.length) {
    parts.push({
      name: 'n',
      sql: sql.fragment`${name('sectioned')} AS (
      INSERT INTO pad_sections (pad_id, section_id, after_id, title, level, body, version)
      SELECT ${padId}, s.id, s.after, s.title, s.level, s.body, ${bumped}.version
      FROM ${bumped}, ${sql.unnest(rows, ['text', 'text', 'text', 'int4', 'text'])} AS s(id, after, title, level, body)
      ON CONFLICT (pad_id, section_id) DO UPDATE SET after_id = EXCLUDED.after_id, title = EXCLUDED.title, level = EXCLUDED.level,
        body = EXCLUDED.body, version = EXCLUDED.version, updated_at = now(), search_tsv = EXCLUDED.search_tsv
      WHERE (pad_sections.after_id, pad_sections.title, pad_sections.level, pad_sections.body, pad_sections.search_tsv)
        IS DISTINCT FROM (EXCLUDED.after_id, EXCLUDED.title, EXCLUDED.level, EXCLUDED.body, EXCLUDED.search_tsv))`,
    });
  }
  if (change.changed.length) {
    parts.push({
      name: 'c',
      sql: sql.fragment`${name('resectioned')} AS (
      UPDATE pad_sections p SET after_id = s.after, title = s.title, level = s.level, version = ${bumped}.version, updated_at = now()
      FROM ${bumped}, section_moves(${moved('id', 'text')}, ${moved('after', 'text')}, ${moved('title', 'text')}, ${moved('level', 'int4')}) AS s(id, after, title, level)
      WHERE p.pad_id = ${padId} AND p.section_id = s.id)`,
    });
  }
  if (change.textBehind) {
    parts.push({
      name: 't',
      sql: sql.fragment`${name('text_behind')} AS (
      INSERT INTO pad_sections_stale (pad_id) SELECT ${padId} FROM ${bumped}
      ON CONFLICT DO NOTHING)`,
    });
  }
  if (change.whole || change.removed.length) {
    parts.push({
      name: 'r',
      sql: sql.fragment`${name('unsectioned')} AS (
      DELETE FROM pad_sections WHERE pad_id = ${padId} AND EXISTS (SELECT 1 FROM ${bumped}) AND ${gone})`,
    });
  }
  return {
    shape: parts.map((part) => part.name).join(''),
    sql: parts.length ? sql.fragment`, ${sql.join(parts.map((part) => part.sql), sql.fragment`,
    `)}` : sql.fragment``,
  };
}

const sameIds = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id) => b.includes(id));

const authorOf = (input: VersionWrite) => ({ id: input.author?.id ?? null, kind: input.author?.kind ?? null, caller: input.author?.caller ?? null });

/**
 * Most versions change blocks in place and nothing else: their delta already names them, and
 * `changed` is left null (read back by `changedIds`).
 */
function inPlace(input: VersionWrite): boolean {
  if (!('delta' in input.body)) return false;
  const ids = [...new Set(input.changed)];
  return input.body.delta.every((entry) => entry.length < 3) && sameIds(ids, input.body.delta.map((entry) => entry[0]));
}

/**
 * A version `recordVersionGroup` writes, with the windows its write counts (none: nothing counted), and
 * whether it stands only while its pad has no open flag (as `unflaggedOnly` beside one version).
 */
export type GroupedWrite = { input: VersionWrite; windows: PaceCount | null; onlyUnflagged?: boolean };

/** pad_flags_refuse's error (migration 0047): a pad of a write that stands only while it has no open flag has one. */
const FLAGS_OPEN = 'DP409';

/** Whether `error` is a statement's refusal of a write whose pad has an open flag (`unflaggedOnly`). */
export const flagsOpen = (error: unknown) => (error as { code?: unknown } | null)?.code === FLAGS_OPEN;

/** An expression, beside a version's write, that refuses its statement (FLAGS_OPEN) while the pad has an open flag. */
export const unflaggedOnly = (padId: string) => sql.fragment`pad_flags_refuse(ARRAY[${padId}]::text[])`;

/**
 * Whether `recordVersionGroup` can write this version: the most common edit, blocks changed in place
 * (a delta, the change's update, and of search's sections only rows changed in place and the mark that
 * their text follows), with nothing else beside it but the windows it counts. Any other is written alone.
 */
export function groupable(input: VersionWrite): boolean {
  const sections = input.sections;
  return (
    inPlace(input) &&
    !!input.update &&
    input.restored === undefined &&
    (!sections || (!sections.whole && !sections.rows.length && !sections.removed.length))
  );
}

const GroupRow = z.object({ i: z.number(), version: z.number(), threaded: z.boolean() });

/**
 * Records versions of several pads (each `groupable`) by one statement, prepared once: the same rows
 * `recordVersion` writes for each, as sets, each pad's written or not on its own (a pad past its
 * `previous` writes nothing, its answer null), and the windows of the versions made counted, every
 * lock taken first in one order (`pace_count_or_refuse_many`, migrations 0045 and 0046). One window
 * full, or an open flag on the pad of a version made `onlyUnflagged`, fails the whole statement, as
 * for one version: its caller writes each again alone. Fewer, larger
 * statements: durable edits of many writers at once send one statement, one commit, rather than one each.
 */
export async function recordVersionGroup(conn: CommonQueryMethods, writes: readonly GroupedWrite[]): Promise<(Recorded | null)[]> {
  const inputs = writes.map((write) => write.input);
  const column = <T>(pick: (input: VersionWrite) => T) => inputs.map(pick);
  const moved = inputs.flatMap((input, i) => (input.sections?.changed ?? []).map((row) => ({ i: i + 1, ...row })));
  const rules = writes.map((write) => write.windows);
  const from: number[] = [];
  let next = 1;
  for (const counted of rules) {
    from.push(next);
    next += counted?.keys.length ?? 0;
  }
  const all = <K extends keyof Omit<PaceCount, 'at'>>(key: K) => rules.flatMap((counted) => (counted ? [...counted[key]] : [])) as PaceCount[K][number][];
  const rows = await conn.any(sql.prepared('record_version_group', GroupRow)`
    WITH x AS MATERIALIZED (
      SELECT * FROM unnest(${sql.array(column((input) => input.padId), 'text')}, ${sql.array(column((input) => input.previous), 'int4')},
        ${sql.array(column((input) => input.kind), 'text')}, ${sql.array(column((input) => authorOf(input).id), 'text')},
        ${sql.array(column((input) => authorOf(input).kind), 'text')}, ${sql.array(column((input) => authorOf(input).caller), 'text')},
        ${sql.array(column((input) => JSON.stringify((input.body as { delta: Delta }).delta)), 'text')},
        ${sql.array(column((input) => Buffer.from(input.update!)), 'bytea')},
        ${sql.array(column((input) => Buffer.from(Y.encodeStateVectorFromUpdate(input.update!))), 'bytea')},
        ${sql.array(column((input) => input.sections?.textBehind ?? false), 'bool')}, ${sql.array(writes.map((write) => write.onlyUnflagged === true), 'bool')})
        WITH ORDINALITY AS x(pad_id, previous, kind, actor_id, actor_kind, caller, delta, update, state_vector, text_behind, only_unflagged, i)
      ORDER BY pad_id),
    bumped AS (
      UPDATE pads p SET version = p.version + 1, updated_at = now()
      FROM x WHERE p.id = x.pad_id AND p.version = x.previous
      RETURNING x.i, p.id, p.version, p.thread_id),
    logged AS (
      INSERT INTO pad_updates (pad_id, update, state_vector)
      SELECT b.id, x.update, x.state_vector FROM bumped b JOIN x ON x.i = b.i ORDER BY b.i),
    resectioned AS (
      UPDATE pad_sections p SET after_id = s.after, title = s.title, level = s.level, version = b.version, updated_at = now()
      FROM bumped b JOIN unnest(${sql.array(moved.map((row) => row.i), 'int4')}, ${sql.array(moved.map((row) => row.id), 'text')},
          ${sql.array(moved.map((row) => row.after), 'text')}, ${sql.array(moved.map((row) => row.title), 'text')},
          ${sql.array(moved.map((row) => row.level), 'int4')}) AS s(i, id, after, title, level) ON s.i = b.i
      WHERE p.pad_id = b.id AND p.section_id = s.id),
    text_behind AS (
      INSERT INTO pad_sections_stale (pad_id) SELECT b.id FROM bumped b JOIN x ON x.i = b.i WHERE x.text_behind
      ON CONFLICT DO NOTHING),
    versioned AS (
      INSERT INTO pad_versions (pad_id, version, kind, actor_id, actor_kind, caller, delta)
      SELECT b.id, b.version, x.kind, x.actor_id, x.actor_kind, x.caller, x.delta::jsonb FROM bumped b JOIN x ON x.i = b.i)
    SELECT b.i::int4 AS i, b.version, b.thread_id IS NOT NULL AS threaded,
      (SELECT pace_count_or_refuse_many((SELECT array_agg(i::int4 ORDER BY i) FROM bumped), ${sql.array(from, 'int4')},
        ${sql.array(rules.map((counted) => counted?.keys.length ?? 0), 'int4')}, ${sql.array(all('keys'), 'text')},
        ${sql.array(all('max'), 'int8')}, ${sql.array(all('windowMs'), 'int8')}, ${sql.array(all('place'), 'text')},
        ${sql.array(all('weight'), 'int8')}, ${sql.array(all('bucketMs'), 'int8')},
        ${sql.array(rules.map((counted) => counted?.at ?? 0), 'int8')})) AS counted,
      (SELECT pad_flags_refuse(array_agg(b.id)) FROM bumped b JOIN x ON x.i = b.i WHERE x.only_unflagged) AS unflagged
    FROM bumped b`);
  const recorded: (Recorded | null)[] = inputs.map(() => null);
  for (const row of rows) recorded[row.i - 1] = { version: row.version, threaded: row.threaded };
  return recorded;
}

/** A version row's changed blocks as SQL: `changed`, or when that is null the ids its delta names. */
const changedIds = (alias: string) =>
  sql.fragment`coalesce(${sql.identifier([alias, 'changed'])}, ARRAY(SELECT e->>0 FROM jsonb_array_elements(${sql.identifier([alias, 'delta'])}) AS e))`;

const Blocks = z.array(z.tuple([z.string(), z.string()]));
const ListAtRow = z.object({
  version: z.number().nullable(),
  checkpoint: z.number().nullable(),
  blocks: Blocks.nullable(),
  deltas: z.array(z.array(z.array(z.string().nullable()))),
});

export type ListAt = { version: number; blocks: VersionBlock[]; /** Delta entries since the checkpoint it was read from. */ sinceCheckpoint: number };

/**
 * The pad's blocks at `version` (or at its latest version), in one query: the nearest checkpoint
 * with its texts, and the deltas after it. Null when the pad has no such version.
 */
export async function blocksAt(conn: CommonQueryMethods, padId: string, version?: number): Promise<ListAt | null> {
  const upTo = version ?? 2_147_483_647;
  const row = await conn.one(sql.type(ListAtRow)`
    WITH cp AS (
      SELECT version, blocks FROM pad_versions
      WHERE pad_id = ${padId} AND version <= ${upTo} AND blocks IS NOT NULL
      ORDER BY version DESC LIMIT 1)
    SELECT
      (SELECT max(version) FROM pad_versions WHERE pad_id = ${padId} AND version <= ${upTo}) AS version,
      (SELECT version FROM cp) AS checkpoint,
      (SELECT jsonb_agg(jsonb_build_array(e.ref->>0, coalesce(t.text, '')) ORDER BY e.ord)
       FROM cp CROSS JOIN LATERAL jsonb_array_elements(cp.blocks) WITH ORDINALITY AS e(ref, ord)
       LEFT JOIN pad_block_texts t ON t.pad_id = ${padId} AND t.hash = e.ref->>1) AS blocks,
      coalesce((SELECT jsonb_agg(d.delta ORDER BY d.version) FROM pad_versions d
       WHERE d.pad_id = ${padId} AND d.version > (SELECT version FROM cp) AND d.version <= ${upTo}), '[]') AS deltas`);
  if (row.version === null || row.checkpoint === null || (version !== undefined && row.version !== version)) return null;
  const deltas = row.deltas as Delta[];
  const start = (row.blocks ?? []).map(([id, text]) => ({ id, text }));
  return { version: row.version, blocks: applyDeltas(start, deltas), sinceCheckpoint: deltas.reduce((n, delta) => n + delta.length, 0) };
}

/** The pad's current version, locked for the caller's transaction, and its blocks. */
export async function lockedLatest(conn: CommonQueryMethods, padId: string): Promise<ListAt> {
  const version = await conn.oneFirst(sql.type(VersionRow)`SELECT version FROM pads WHERE id = ${padId} FOR UPDATE`);
  return (await blocksAt(conn, padId, version)) ?? { version, blocks: [], sinceCheckpoint: 0 };
}

/** The pad's current version number, as the database has it. */
export async function storedVersion(conn: CommonQueryMethods, padId: string): Promise<number> {
  return conn.oneFirst(sql.type(VersionRow)`SELECT version FROM pads WHERE id = ${padId}`);
}

const BlockIdRow = z.object({ block_id: z.string() });

/** Blocks that someone other than `authorId` changed after `version`. */
export async function changedByOthersSince(conn: CommonQueryMethods, padId: string, version: number, authorId: string): Promise<Set<string>> {
  const ids = await conn.anyFirst(sql.type(BlockIdRow)`
    SELECT DISTINCT unnest(${changedIds('v')}) AS block_id FROM pad_versions v
    WHERE pad_id = ${padId} AND version > ${version} AND actor_id IS DISTINCT FROM ${authorId}`);
  return new Set(ids);
}

export const EditRow = z.object({ pad_id: z.string(), version: z.number(), actor_id: z.string().nullable(), changed: z.array(z.string()) });
export type EditRow = z.infer<typeof EditRow>;

/**
 * An edit is a version, and its id says which: found by the version's key, with no index of its own
 * to write on every edit. Ids made before (random, stored in `edit_id`) are still found. Every
 * version but a pad's first is one: a batch of typing and a restore are undone like an API edit.
 */
export const editIdOf = (padId: string, version: number) => `edt_${padId.slice('pad_'.length)}-${version}`;

export async function findEdit(conn: CommonQueryMethods, editId: string): Promise<EditRow | null> {
  const made = /^edt_([0-9a-f]{20})-(\d{1,9})$/.exec(editId);
  if (!made) {
    return conn.maybeOne(sql.type(EditRow)`
      SELECT pad_id, version, actor_id, ${changedIds('v')} AS changed FROM pad_versions v WHERE edit_id = ${editId}`);
  }
  return conn.maybeOne(sql.type(EditRow)`
    SELECT pad_id, version, actor_id, ${changedIds('v')} AS changed FROM pad_versions v
    WHERE pad_id = ${`pad_${made[1]}`} AND version = ${Number(made[2])} AND kind <> 'create'`);
}
