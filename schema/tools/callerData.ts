import { z } from 'zod';
import { LinkedTo } from './keys.ts';

// What the pipeline (api/tools/invoke.ts) adds to any tool's data, and its answer at the daily limit.

/** A counted write's allowance (SPEC part 2 "Allowance object"). */
export const AllowanceData = z.object({ used: z.number(), limit: z.number(), remaining: z.number(), per: z.literal('day'), resets_at: z.string() });

/**
 * What a reply says of its caller beside the tool's own data: the allowance of a counted write, a key
 * in its last 14 days, and an agent's link (`linked_to`, or the humans asking to link it).
 */
export const CallerData = {
  allowance: AllowanceData.optional(),
  key_expires_at: z.string().optional(),
  linked_to: LinkedTo.optional(),
  link_requests: z.array(z.object({ name: z.string(), handle: z.string(), asked_at: z.string() })).optional(),
};

/** A counted write at the daily limit: still 200, nothing saved, and how to lift the limit (SPEC part 7). */
export const LimitReachedData = z.object({
  ...CallerData,
  limit_reached: z.literal(true),
  allowance: AllowanceData,
  next_write_at: z.string(),
  link_url: z.string().optional(),
  sign_in_url: z.string().optional(),
});
