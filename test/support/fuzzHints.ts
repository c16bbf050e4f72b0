import fc from 'fast-check';
import { Ref, type Hints, type JsonSchema } from './arbitraryFromSchema.ts';

/** The things a seeded world holds, that inputs name by Ref. */
export const KINDS = ['hub', 'thread', 'post', 'pad', 'edit', 'block'] as const;
export type Kind = (typeof KINDS)[number];

/** Field names that hold a reference, as the tools name them (older names too). */
const ID_FIELDS: Record<string, Kind> = {
  hub: 'hub',
  board: 'hub',
  thread_id: 'thread',
  post_id: 'post',
  reply_to: 'post',
  pad_id: 'pad',
  page_id: 'pad',
  edit_id: 'edit',
  block_id: 'block',
  anchor_block: 'block',
  after: 'block',
  sections: 'block',
};
/** A field the table does not name is still an id when its description shows the prefix: "(thr_…)". */
const PREFIXES: Record<string, Kind> = { hub: 'hub', thr: 'thread', msg: 'post', pad: 'pad', edt: 'edit' };
const NUMBER_FIELDS = new Set(['version', 'base_version', 'since', 'before_seq', 'after_seq']);

/** Ids of every kind that exist nowhere, and malformed ones. */
export const MADE_UP = [
  'hub_00000000000000000000',
  'thr_00000000000000000000',
  'msg_00000000000000000000',
  'pad_00000000000000000000',
  'edt_00000000000000000000',
  'agt_00000000000000000000',
  'ppl_00000000000000000000',
  'thr_',
  'pad_x',
  '00000000',
  'no-such-hub',
  'thr_0000\u00000000',
  'pad_\ud800',
  'HUB_00000000000000000000',
  ' thr_00000000000000000000 ',
];

function kindOf(field: string, schema: JsonSchema): Kind | undefined {
  const named = ID_FIELDS[field];
  if (named) return named;
  const prefix = /\((hub|thr|msg|pad|edt)_…\)/.exec(schema.description ?? '')?.[1];
  return prefix ? PREFIXES[prefix] : undefined;
}

/**
 * What the fuzz knows beyond the schemas, by field name, so a new tool that reuses these names is
 * aimed at the seeded world without new test code: ids (of the right kind, of other kinds, made up),
 * small version numbers, a few idempotency keys that repeat, and a long poll's timeout kept at its
 * minimum (a valid wait then lasts one second, not twenty).
 */
export function fieldHints(counts: Record<Kind, number>): Hints {
  const refs = (kinds: readonly Kind[]) => kinds.flatMap((kind) => Array.from({ length: counts[kind] }, (_, i) => new Ref(kind, i)));
  return (field, schema) => {
    const kind = kindOf(field, schema);
    if (kind && schema.type === 'string') {
      const own = refs([kind]);
      const others = refs(KINDS.filter((k) => k !== kind));
      return {
        pool: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...own, ...(kind === 'block' ? ['start'] : [])) },
          { weight: 2, arbitrary: fc.constantFrom(...others) },
          { weight: 2, arbitrary: fc.constantFrom(...MADE_UP) },
        ),
      };
    }
    if (NUMBER_FIELDS.has(field) && (schema.type === 'integer' || schema.type === 'string')) {
      const numbers = [0, 1, 2, 3, 4, 5, 8];
      return { pool: fc.constantFrom(...(schema.type === 'string' ? numbers.map(String) : numbers)) };
    }
    if (field === 'idempotency_key' && schema.type === 'string') {
      return { pool: fc.constantFrom('fuzz-key-0001', 'fuzz-key-0002', 'fuzz-key-😀-003') };
    }
    if (field === 'timeout_seconds' && schema.type === 'integer') {
      return { pool: fc.constant(schema.minimum ?? 1), pinned: true };
    }
    return undefined;
  };
}
