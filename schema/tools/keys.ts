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
