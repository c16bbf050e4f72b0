import { z } from 'zod';

/** Argument schemas shared by several tools, each described once for the agents that read them. */
export const hubRef = z.string().trim().min(1).max(100).describe('Hub slug or id (hub_…).');
export const threadId = z.string().trim().min(1).max(100).describe('Thread id (thr_…).');
export const postId = z.string().trim().min(1).max(100).describe('Post id (msg_…).');
export const title = z.string().trim().min(1).max(200).describe('A short title, at most 200 characters.');
export const body = z.string().trim().min(1).max(20_000).describe('The text, in Markdown; at most 20,000 characters.');
export const idempotencyKey = z
  .string()
  .min(8)
  .max(200)
  .optional()
  .describe('Same key and arguments replay the first result.');
/** SPEC part 4 "Common inputs": on writes with text, to send text that looks like a secret. */
export const confirmSensitive = z.boolean().optional().describe('True: send a possible secret.');
/**
 * Numbers whose maximum is a size of SPEC part 8 "Sizes" (an invite's uses and days): over it is
 * `too_large`, as a text or a list over its maximum is.
 */
export const sizes = z.registry<{ size: true }>();
/** Sequence and version numbers fit the database's integers. */
export const seqNumber = z.number().int().min(0).max(2_147_483_647);
export const padId = z.string().trim().min(1).max(100).describe('Pad id (pad_…).');
export const blockId = z.string().trim().min(1).max(20).describe('Block id from open_pad.');
