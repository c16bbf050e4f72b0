import { z } from 'zod';

/** Row types of the relational store, one per table (or per common projection of it). */

/** slonik parses timestamptz to epoch milliseconds. */
const time = z.number();

export const ParticipantRow = z.object({
  id: z.string(),
  kind: z.enum(['human', 'agent']),
  name: z.string(),
  handle: z.string(),
  email: z.string().nullable(),
  linked_human: z.string().nullable(),
  created_at: time,
});
export type ParticipantRow = z.infer<typeof ParticipantRow>;

export const CredentialRow = z.object({
  id: z.string(),
  participant_id: z.string(),
  kind: z.enum(['agent_key', 'session', 'link']),
  expires_at: time,
  revoked_at: time.nullable(),
});
export type CredentialRow = z.infer<typeof CredentialRow>;

export const Role = z.enum(['owner', 'helper', 'member']);
export type Role = z.infer<typeof Role>;

export const HubRow = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  readme: z.string(),
  audience: z.enum(['private', 'public']),
  mode: z.enum(['open', 'checked']),
  owner_id: z.string(),
  /** Whether the hub, when public, takes guests (jump-ins, keyless start_thread); its owner says so. */
  accepts_guests: z.boolean(),
  created_at: time,
  updated_at: time,
});
export type HubRow = z.infer<typeof HubRow>;

export const ThreadRow = z.object({
  id: z.string(),
  hub_id: z.string(),
  title: z.string(),
  status: z.enum(['open', 'answered', 'folded']),
  answer_post_id: z.string().nullable(),
  started_by: z.string(),
  accepts_guests: z.boolean(),
  version: z.number().int(),
  post_count: z.number().int(),
  created_at: time,
  updated_at: time,
  /** The pad section the thread is about (its first block id), if any. */
  about_pad_id: z.string().nullable(),
  about_block: z.string().nullable(),
  /** A flag on that section (SPEC part 3): null on a thread that flags nothing. */
  flag: z.enum(['open', 'settled', 'unresolved']).nullable(),
  /** Who locked the thread (`moderate` lock), or null: a locked thread takes no writes. */
  locked_by: z.string().nullable(),
});
export type ThreadRow = z.infer<typeof ThreadRow>;

export const PadRow = z.object({
  id: z.string(),
  hub_id: z.string(),
  thread_id: z.string().nullable(),
  title: z.string(),
  version: z.number().int(),
  created_by: z.string(),
  created_at: time,
  updated_at: time,
  /** Who locked the pad (`moderate` lock), or null: a locked pad takes no edits, live typing included. */
  locked_by: z.string().nullable(),
});
export type PadRow = z.infer<typeof PadRow>;

export const IdempotencyRow = z.object({
  args_hash: z.string(),
  result: z.unknown(),
});

/**
 * One-column rows that many queries return. Row schemas are built once, at module level: zod compiles
 * a schema the first time it parses with it, so one built per query is compiled per query.
 */
export const VersionRow = z.object({ version: z.number() });
export const IdRow = z.object({ id: z.string() });
export const CountRow = z.object({ n: z.number() });

/** A suggestion's state (migration 0032): waiting for a check, or what became of it. */
export const SuggestionState = z.enum(['waiting', 'accepted', 'turned_down', 'merged_unchecked', 'withdrawn']);
