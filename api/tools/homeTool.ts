import { home } from '../../server/core/home/home.ts';
import { readHub } from '../../server/core/policies/policies.ts';
import { presentHome } from '../present/home.ts';
import { readTool } from './defineTool.ts';
import { ShowDotpadInput } from '../../schema/tools/home.ts';

export const showDotpadTool = readTool({
  name: 'show_dotpad',
  card: true,
  title: 'Home',
  kind: 'read',
  description: 'Start here: your threads (newest activity, new posts), tasks needing you, your hubs and unread inbox count.',
  input: ShowDotpadInput,
  // Everyone has a home; what it lists is limited to what the caller may read, in the query.
  policy: (input) => async (scope) => (input.hub === undefined ? null : (await readHub(input.hub)(scope)).hub),
  run: ({ core, actor, conn }, _input, hub) => home(core, conn, actor, hub),
  present: presentHome,
});
