import { createHash } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Block } from './blocks.ts';

/**
 * Versions of a pad: a number that rises with every committed change. Each version keeps the block
 * list after it (ids and text hashes, texts stored once by hash) and the blocks it touched, which is
 * enough to answer `changes` since a version, to undo one edit, and to know each block's last writer.
 */
export type Author = { id: string; kind: 'human' | 'agent' } | null;
export type VersionKind = 'create' | 'edit' | 'undo' | 'live';
export type BlockRef = [id: string, hash: string];

export const hashText = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

const BlockRefs = z.array(z.tuple([z.string(), z.string()]));

/** Blocks whose text or presence differs between two block lists. */
export function diffRefs(before: readonly BlockRef[], after: readonly BlockRef[]): string[] {
  const old = new Map(before);
  const now = new Map(after);
  const changed = new Set<string>();
  for (const [id, hash] of after) if (old.get(id) !== hash) changed.add(id);
  for (const [id] of before) if (!now.has(id)) changed.add(id);
  return [...changed];
}

export const toRefs = (blocks: readonly Block[]): BlockRef[] => blocks.map((block) => [block.id, hashText(block.text)]);

export async function latestVersion(conn: CommonQueryMethods, padId: string): Promise<{ version: number; blocks: BlockRef[] } | null> {
  return conn.maybeOne(sql.type(z.object({ version: z.number(), blocks: BlockRefs }))`
    SELECT version, blocks FROM pad_versions WHERE pad_id = ${padId} ORDER BY version DESC LIMIT 1`);
}

/**
 * Records a version in the caller's transaction: locks the pad row so versions of one pad are
 * numbered one after another across instances, stores new block texts and last writers. Returns the
 * new version, or null when `changed` is empty and nothing needs recording.
 */
export async function recordVersion(
  tx: CommonQueryMethods,
  input: { padId: string; kind: VersionKind; author: Author; editId?: string | undefined; blocks: readonly Block[]; changed?: readonly string[] },
): Promise<{ version: number; changed: string[] } | null> {
  const current = await tx.one(sql.type(z.object({ version: z.number() }))`
    SELECT version FROM pads WHERE id = ${input.padId} FOR UPDATE`);
  const refs = toRefs(input.blocks);
  const previous = await latestVersion(tx, input.padId);
  // Blocks that differ from the last version: they include live typing not yet versioned, whose
  // texts must be stored now even when this version is an API edit of other blocks.
  const differing = diffRefs(previous?.blocks ?? [], refs);
  const changed = input.changed ? [...input.changed] : differing;
  if (changed.length === 0 && input.kind === 'live') return null;
  const version = current.version + 1;
  const needText = new Set([...changed, ...differing]);
  const texts = input.blocks.filter((block) => needText.has(block.id)).map((block) => [hashText(block.text), block.text] as const);
  if (texts.length) {
    await tx.query(sql.unsafe`
      INSERT INTO pad_block_texts (pad_id, hash, text)
      SELECT ${input.padId}, hash, text FROM ${sql.unnest(texts, ['text', 'text'])} AS t(hash, text)
      ON CONFLICT DO NOTHING`);
  }
  await tx.query(sql.unsafe`
    INSERT INTO pad_versions (pad_id, version, kind, actor_id, actor_kind, edit_id, blocks, changed)
    VALUES (${input.padId}, ${version}, ${input.kind}, ${input.author?.id ?? null}, ${input.author?.kind ?? null},
            ${input.editId ?? null}, ${sql.jsonb(refs)}, ${sql.array(changed, 'text')})`);
  if (changed.length) {
    await tx.query(sql.unsafe`
      INSERT INTO pad_block_authors (pad_id, block_id, actor_id, actor_kind, version)
      SELECT ${input.padId}, block_id, ${input.author?.id ?? null}, ${input.author?.kind ?? null}, ${version}
      FROM unnest(${sql.array(changed, 'text')}) AS block_id
      ON CONFLICT (pad_id, block_id) DO UPDATE SET actor_id = excluded.actor_id, actor_kind = excluded.actor_kind, version = excluded.version`);
  }
  await tx.query(sql.unsafe`UPDATE pads SET version = ${version}, updated_at = now() WHERE id = ${input.padId}`);
  return { version, changed };
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
  const ids = await conn.anyFirst(sql.type(z.object({ block_id: z.string() }))`
    SELECT DISTINCT unnest(changed) AS block_id FROM pad_versions
    WHERE pad_id = ${padId} AND version > ${version} AND actor_id IS DISTINCT FROM ${authorId}`);
  return new Set(ids);
}

export const EditRow = z.object({ pad_id: z.string(), version: z.number(), actor_id: z.string().nullable(), changed: z.array(z.string()) });

export async function findEdit(conn: CommonQueryMethods, editId: string) {
  return conn.maybeOne(sql.type(EditRow)`
    SELECT pad_id, version, actor_id, changed FROM pad_versions WHERE edit_id = ${editId}`);
}
