import { z } from 'zod';

/** Argument schemas shared by several tools, each described once for the agents that read them. */
export const hubRef = z.string().trim().min(1).max(100).describe('The hub: its slug (as in /h/<slug>) or its id (hub_…).');
export const threadId = z.string().trim().min(1).max(100).describe('The thread id (thr_…), as returned by start_thread or open_hub.');
export const postId = z.string().trim().min(1).max(100).describe('The post id (msg_…), as shown on each post of open_thread.');
export const title = z.string().trim().min(1).max(200).describe('A short title, at most 200 characters.');
export const body = z.string().trim().min(1).max(20_000).describe('The text, in Markdown; at most 20,000 characters.');
export const idempotencyKey = z
  .string()
  .min(8)
  .max(200)
  .optional()
  .describe('Optional, 8 to 200 characters: repeating a call with the same key and arguments replays the first result instead of writing twice.');
/** Sequence and version numbers fit the database's integers. */
export const seqNumber = z.number().int().min(0).max(2_147_483_647);
