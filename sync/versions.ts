import { hash } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import * as Y from 'yjs';
import { z } from 'zod';
import type { Block } from './blocks.ts';
import { VersionRow } from '../schema/rows.ts';

/**
 * Versions of a pad: a number that rises with every committed change. Each version keeps the block
 * list after it (ids and text hashes, texts stored once by hash) and the blocks it touched, which is
 * enough to answer `changes` since a version, to undo one edit, and to know each block's last writer.
 */
export type Author = { id: string; kind: 'human' | 'agent' } | null;
export type VersionKind = 'create' | 'edit' | 'undo' | 'live';
export type BlockRef = [id: string, hash: string];

export const hashText = (text: string) => hash('sha256', text, 'hex').slice(0, 16);

const BlockRefs = z.array(z.tuple([z.string(), z.string()]));
const VersionBlocksRow = z.object({ version: z.number(), blocks: BlockRefs });
const BlockIdRow = z.object({ block_id: z.string() });

/** Blocks whose text or presence differs between two block lists. */
export function diffRefs(before: readonly BlockRef[], after: readonly BlockRef[]): string[] {
  const old = new Map(before);
  const now = new Map(after);
  const changed = new Set<string>();
  for (const [id, hash] of after) if (old.get(id) !== hash) changed.add(id);
  for (const [id] of before) if (!now.has(id)) changed.add(id);
  return [...changed];
}

/** Hashes of blocks already hashed: a block read from a live pad is the same object until it changes. */
const hashed = new WeakMap<Pick<Block, 'text'>, string>();
const hashOf = (block: Pick<Block, 'text'>) => {
  let hash = hashed.get(block);
  if (hash === undefined) hashed.set(block, (hash = hashText(block.text)));
  return hash;
};

export const toRefs = (blocks: readonly Pick<Block, 'id' | 'text'>[]): BlockRef[] => blocks.map((block) => [block.id, hashOf(block)]);

async function latestVersion(conn: CommonQueryMethods, padId: string): Promise<{ version: number; blocks: BlockRef[] } | null> {
  return conn.maybeOne(sql.type(VersionBlocksRow)`
    SELECT version, blocks FROM pad_versions WHERE pad_id = ${padId} ORDER BY version DESC LIMIT 1`);
}

/** The version a write was based on is no longer the pad's: someone else (another instance) wrote since. */
export class StaleVersion extends Error {
  constructor(padId: string, expected?: number) {
    super(expected === undefined ? `pad ${padId} moved on before this write` : `pad ${padId} is past version ${expected}`);
    this.name = 'StaleVersion';
  }
}

export type VersionInput = {
  padId: string;
  kind: VersionKind;
  author: Author;
  editId?: string | undefined;
  /** The pad's blocks after the change. */
  blocks: readonly Block[];
  /** The blocks the change touched; by default, those that differ from the previous version. */
  changed?: readonly string[];
  /** The Yjs update of the change, appended to the pad's log in the same statement. */
  update?: Uint8Array | null;
  /**
   * The version the change was made on and its blocks, when the caller knows them: the write is then
   * one statement that needs no transaction, and throws StaleVersion if the pad has moved on since.
   * Without it, the current version is read and locked in the caller's transaction first.
   */
  previous?: { version: number; blocks: readonly BlockRef[] };
};

/**
 * Records a version: the pad's number rises by one, the new block texts, the version row, the last
 * writers and the change's update in the log are written by one statement, so it commits whole or not
 * at all. Returns the new version, or null when a live batch changed nothing and needs no version.
 */
export async function recordVersion(conn: CommonQueryMethods, input: VersionInput): Promise<{ version: number; changed: string[] } | null> {
  const previous = input.previous ?? (await lockedLatest(conn, input.padId));
  const refs = toRefs(input.blocks);
  // Blocks that differ from the last version: they include live typing not yet versioned, whose
  // texts must be stored now even when this version is an API edit of other blocks.
  const differing = diffRefs(previous.blocks, refs);
  const changed = input.changed ? [...new Set(input.changed)] : differing;
  if (changed.length === 0 && input.kind === 'live') return null;
  const needText = new Set([...changed, ...differing]);
  const texts = input.blocks.filter((block) => needText.has(block.id)).map((block) => [hashOf(block), block.text] as const);
  const author = { id: input.author?.id ?? null, kind: input.author?.kind ?? null };
  const update = input.update
    ? sql.fragment`, logged AS (
        INSERT INTO pad_updates (pad_id, update, state_vector)
        SELECT ${input.padId}, ${sql.binary(Buffer.from(input.update))}, ${sql.binary(Buffer.from(Y.encodeStateVectorFromUpdate(input.update)))} FROM bumped)`
    : sql.fragment``;
  // Each part selects from the bumped pad row: when the pad is past `previous`, nothing is written.
  // Prepared once per connection (one name per shape of the text): the hot path of every edit skips
  // parsing and planning its five writes.
  const statement = sql.prepared(input.update ? 'record_version_logged' : 'record_version', VersionRow);
  const version = await conn.maybeOneFirst(statement`
    WITH bumped AS (
      UPDATE pads SET version = version + 1, updated_at = now()
      WHERE id = ${input.padId} AND version = ${previous.version}
      RETURNING version)
    ${update},
    texts AS (
      INSERT INTO pad_block_texts (pad_id, hash, text)
      SELECT ${input.padId}, t.hash, t.text FROM bumped, ${sql.unnest(texts, ['text', 'text'])} AS t(hash, text)
      ON CONFLICT DO NOTHING),
    versioned AS (
      INSERT INTO pad_versions (pad_id, version, kind, actor_id, actor_kind, edit_id, blocks, changed)
      SELECT ${input.padId}, version, ${input.kind}, ${author.id}, ${author.kind}, ${input.editId ?? null}, ${sql.jsonb(refs)}, ${sql.array(changed, 'text')}
      FROM bumped),
    authored AS (
      INSERT INTO pad_block_authors (pad_id, block_id, actor_id, actor_kind, version)
      SELECT ${input.padId}, block_id, ${author.id}, ${author.kind}, version
      FROM bumped, unnest(${sql.array(changed, 'text')}) AS block_id
      ON CONFLICT (pad_id, block_id) DO UPDATE SET actor_id = excluded.actor_id, actor_kind = excluded.actor_kind, version = excluded.version)
    SELECT version FROM bumped`);
  if (version === null) throw new StaleVersion(input.padId, previous.version);
  return { version, changed };
}

/** The pad's current version, locked for the caller's transaction, and that version's blocks. */
async function lockedLatest(conn: CommonQueryMethods, padId: string): Promise<{ version: number; blocks: BlockRef[] }> {
  const version = await conn.oneFirst(sql.type(VersionRow)`
    SELECT version FROM pads WHERE id = ${padId} FOR UPDATE`);
  const latest = await latestVersion(conn, padId);
  return { version, blocks: latest?.blocks ?? [] };
}

const BlockAtRow = z.object({ version: z.number(), id: z.string().nullable(), hash: z.string().nullable(), text: z.string().nullable() });

/**
 * The pad's blocks at `version` (or at its latest version), with their texts, in one query.
 * Null when the pad has no such version.
 */
export async function blocksAt(conn: CommonQueryMethods, padId: string, version?: number): Promise<{ version: number; blocks: { id: string; hash: string; text: string }[] } | null> {
  const rows = await conn.any(sql.type(BlockAtRow)`
    SELECT v.version, e.ref->>0 AS id, e.ref->>1 AS hash, t.text
    FROM (SELECT version, blocks FROM pad_versions WHERE pad_id = ${padId}
          ${version === undefined ? sql.fragment`ORDER BY version DESC LIMIT 1` : sql.fragment`AND version = ${version}`}) v
    LEFT JOIN LATERAL jsonb_array_elements(v.blocks) WITH ORDINALITY AS e(ref, ord) ON true
    LEFT JOIN pad_block_texts t ON t.pad_id = ${padId} AND t.hash = e.ref->>1
    ORDER BY e.ord`);
  const first = rows[0];
  if (!first) return null;
  return {
    version: first.version,
    blocks: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, hash: r.hash!, text: r.text ?? '' })),
  };
}

/** Blocks that someone other than `author` changed after `version`. */
export async function changedByOthersSince(conn: CommonQueryMethods, padId: string, version: number, authorId: string): Promise<Set<string>> {
  const ids = await conn.anyFirst(sql.type(BlockIdRow)`
    SELECT DISTINCT unnest(changed) AS block_id FROM pad_versions
    WHERE pad_id = ${padId} AND version > ${version} AND actor_id IS DISTINCT FROM ${authorId}`);
  return new Set(ids);
}

export const EditRow = z.object({ pad_id: z.string(), version: z.number(), actor_id: z.string().nullable(), changed: z.array(z.string()) });

export async function findEdit(conn: CommonQueryMethods, editId: string) {
  return conn.maybeOne(sql.type(EditRow)`
    SELECT pad_id, version, actor_id, changed FROM pad_versions WHERE edit_id = ${editId}`);
}
