import { search } from '../../server/core/search/search.ts';
import { presentSearch } from '../present/search.ts';
import { readTool } from './defineTool.ts';
import { SearchInput } from '../../schema/tools/search.ts';

export const searchTool = readTool({
  name: 'search_dotpad',
  title: 'Search Dotpad',
  kind: 'read, open world',
  description: 'Find hubs, pads, pad sections, threads, tasks and posts; words match as prefixes. Filters in q: type:, hub:, is:, in:posts.',
  input: SearchInput,
  // Reading is filtered per row: seats, public hubs, item seats and a sub-agent key's grant.
  policy: () => async () => null,
  run: async ({ core, actor, conn }, input) => ({ page: await search(core, conn, actor, input), base: core.config.baseUrl }),
  present: ({ page, base }) => presentSearch(page, base),
});
