import { z } from 'zod';
import { cursor } from './fields.ts';

// search_dotpad.

export const SEARCH_MAX = 25;
export const SEARCH_TYPES = ['hub', 'pad', 'section', 'thread', 'task', 'post'] as const;

export const SearchInput = z.object({
  q: z.string().max(2_000).describe('Words and filters.'),
  limit: z.number().int().min(1).max(SEARCH_MAX).optional().describe('Default 20.'),
  cursor: cursor.optional(),
});

export const SearchHitView = z.object({
  type: z.enum(SEARCH_TYPES),
  id: z.string(),
  title: z.string(),
  hub_slug: z.string(),
  hub_name: z.string(),
  thread_id: z.string().nullable(),
  /** A section's pad. */
  pad_id: z.string().nullable(),
  /** A section's pad title, a task's thread title. */
  parent_title: z.string().nullable(),
  /** As the results show it: "post 3 · thread open", "task done", a thread's status. */
  state: z.string(),
  /** A post's seq. */
  seq: z.number().nullable(),
  snippet: z.string().nullable(),
  link: z.string(),
  updated: z.string(),
});
export type SearchHitView = z.infer<typeof SearchHitView>;

/** Hits grouped by kind (only the kinds found), best first in each; `empty` says why nothing shows. */
export const SearchView = z.object({
  groups: z.array(z.object({ type: z.enum(SEARCH_TYPES), heading: z.string(), hits: z.array(SearchHitView) })),
  empty: z.string().nullable(),
  next_cursor: z.string().optional(),
});
export type SearchView = z.infer<typeof SearchView>;

export const SearchData = z.object({
  results: z.array(
    z.object({
      type: z.enum(SEARCH_TYPES),
      id: z.string(),
      hub: z.string(),
      thread_id: z.string().optional(),
      pad_id: z.string().nullable().optional(),
      state: z.string(),
      seq: z.number().optional(),
      updated: z.string(),
      link: z.string(),
    }),
  ),
  next_cursor: z.string().optional(),
});
