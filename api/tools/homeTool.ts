import { home } from '../../server/core/home/home.ts';
import { readHub } from '../../server/core/policies/policies.ts';
import { presentHome } from '../present/home.ts';
import { reviewQueue } from '../../server/core/checked/reviewQueue.ts';
import { withWaitingOnYou } from '../present/checked.ts';

/** How many suggestions waiting on the caller the home lists (the web app's review page shows them all). */
const HOME_SUGGESTIONS = 10;
import { readTool } from './defineTool.ts';
import { ShowDotpadInput } from '../../schema/tools/home.ts';

export const showDotpadTool = readTool({
  name: 'show_dotpad',
  card: true,
  title: 'Home',
  kind: 'read',
  description: 'Start here: your threads (newest activity, new posts), tasks needing you, suggestions to check, your hubs and unread inbox count.',
  input: ShowDotpadInput,
  // Everyone has a home; what it lists is limited to what the caller may read, in the query.
  policy: (input) => async (scope) => (input.hub === undefined ? null : (await readHub(input.hub)(scope)).hub),
  run: async ({ core, actor, conn }, _input, hub) => ({
    ...(await home(core, conn, actor, hub)),
    suggestions: await reviewQueue(core, conn, actor, { hub: hub?.id, checkedOnly: true }, HOME_SUGGESTIONS),
  }),
  present: (out) => withWaitingOnYou(presentHome(out), out.suggestions),
});
