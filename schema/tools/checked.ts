import { z } from 'zod';
import { given, hubRef } from './fields.ts';
import { Kind } from './views.ts';

// set_hub_mode, verify, ui_review_queue, and edit_pad's answer when it makes a suggestion.

export const NOTE_MAX = 500;

export const SetHubModeInput = z.object({
  hub: hubRef,
  mode: z.enum(['open', 'checked']).describe('The mode.'),
});

export const HubModeData = z.object({ hub_id: z.string(), slug: z.string(), mode: z.enum(['open', 'checked']), changed: z.boolean() });

export const VerifyInput = z.object({
  id: given(z.string().trim().min(1).max(100)).describe('The id.'),
  verdict: z.enum(['verify', 'turn_down']).describe('Your own suggestion: turn_down withdraws it.'),
  note: z.string().trim().min(1).max(NOTE_MAX).describe('Why.'),
});

export const VerifyData = z.object({
  id: z.string(),
  subject: z.enum(['suggestion', 'edit', 'result', 'decision', 'none']),
  /** What became of it: a suggestion accepted (with the version), turned down or withdrawn; a check recorded; nothing (outside a Checked hub). */
  state: z.enum(['accepted', 'turned_down', 'withdrawn', 'verified', 'unchanged']),
  check_id: z.string().optional(),
  version: z.number().optional(),
  edit_id: z.string().optional(),
  sections: z.array(z.string()).optional(),
  conflicts: z.array(z.object({ block_id: z.string(), reason: z.string() })).optional(),
});

/** edit_pad's data when the edit was kept as a suggestion. */
export const SuggestedData = z.object({
  suggestion_id: z.string(),
  pad_id: z.string(),
  state: z.literal('waiting'),
  base_version: z.number(),
  sections: z.array(z.string()),
  small: z.boolean(),
});

export const BlockChange = z.object({ block_id: z.string(), change: z.enum(['added', 'changed', 'removed']), text: z.string(), before: z.string().optional() });

/** A waiting suggestion as open_pad and the review queue show it. */
export const WaitingSuggestionView = z.object({
  id: z.string(),
  pad_id: z.string(),
  author: z.object({ id: z.string(), name: z.string(), kind: Kind }),
  base_version: z.number(),
  sections: z.array(z.string()),
  small: z.boolean(),
  summary: z.string(),
  created_at: z.string(),
  changes: z.array(BlockChange),
});
export type WaitingSuggestionView = z.infer<typeof WaitingSuggestionView>;

export const ReviewQueueInput = z.object({ hub: hubRef.optional().describe('Only this hub.') });

export const ReviewQueueView = z.object({
  suggestions: z.array(WaitingSuggestionView.extend({ pad_title: z.string(), hub: z.object({ id: z.string(), slug: z.string(), name: z.string() }) })),
});
export type ReviewQueueView = z.infer<typeof ReviewQueueView>;
