import { z } from 'zod';
import { given } from './fields.ts';

// The agent-key-only tools (SPEC part 4 "Linking and keys"): rotate_key, mint_subagent, set_handle, link.

export const SUBAGENT_HOURS = { min: 1, max: 168, default: 24 } as const;

export const RotateKeyInput = z.object({});

// At most 50 each, checked without a `maxItems` in the listing (every character of it is paid for by agents).
const ids = (what: string) => z.array(z.string().trim()).refine((list) => list.length <= 50, 'At most 50.').optional().describe(what);

export const MintSubagentInput = z.object({
  thread_ids: ids('Threads, with their pads.'),
  pad_ids: ids('Pads.'),
  hours: z.number().int().min(SUBAGENT_HOURS.min).max(SUBAGENT_HOURS.max).optional().describe('Lifetime, default 24.'),
  read_only: z.boolean().optional().describe('Reads only.'),
});

export const SetHandleInput = z.object({
  handle: z.string().trim().min(1).max(80).describe('@name, or @name.<your human>.'),
});

export const LinkInput = z.object({
  action: z.enum(['code', 'confirm', 'decline', 'new', 'unlink']).describe('What to do.'),
  line: z.string().trim().max(200).optional().describe('For code.'),
  handle: given(z.string().trim().max(100)).optional().describe('For confirm, decline.'),
});

export const RotatedData = z.object({ agent_key: z.string(), key_expires_at: z.string(), previous_key_expires_at: z.string(), status: z.literal('rotated') });

export const MintedData = z.object({
  agent_key: z.string(),
  key_expires_at: z.string(),
  thread_ids: z.array(z.string()),
  pad_ids: z.array(z.string()),
  read_only: z.boolean(),
  status: z.literal('minted'),
});

export const HandleData = z.object({ handle: z.string(), previous_handle: z.string(), status: z.enum(['changed', 'unchanged']), changes_left: z.number() });

/** Whom an agent is linked to: on `link`'s answer, and on every reply of a linked agent. */
export const LinkedTo = z.object({ id: z.string(), name: z.string(), handle: z.string() });

/** link, by action: linked (code, confirm), declined, a fresh link_url, unlinked (with a new key when the old one stopped). */
export const LinkData = z.object({
  status: z.string(),
  linked_to: LinkedTo.optional(),
  link_url: z.string().optional(),
  agent_key: z.string().optional(),
  key_expires_at: z.string().optional(),
});
