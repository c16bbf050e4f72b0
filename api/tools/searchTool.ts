import { z } from 'zod';
import { search, SEARCH_MAX } from '../../server/core/search/search.ts';
import { presentSearch } from '../present/search.ts';
import { readTool } from './defineTool.ts';

export const searchTool = readTool({
  name: 'search_dotpad',
  title: 'Search Dotpad',
  openWorld: true,
  description: 'Find hubs, pads, pad sections, threads, tasks and posts; words match as prefixes. Filters in q: type:, hub:, is:, in:posts.',
  input: z.object({
    q: z.string().max(2_000).describe('Words and filters.'),
    limit: z.number().int().min(1).max(SEARCH_MAX).optional().describe('Default 20.'),
    cursor: z.string().max(500).optional().describe('next_cursor of a page.'),
  }),
  // Reading is filtered per row: seats, public hubs, item seats and a sub-agent key's grant.
  policy: () => async () => null,
  run: async ({ core, actor, conn }, input) => ({ page: await search(core, conn, actor, input), base: core.config.baseUrl }),
  present: ({ page, base }) => presentSearch(page, base),
});
