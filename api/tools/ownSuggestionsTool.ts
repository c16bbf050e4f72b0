import { ownSuggestions } from '../../server/core/pads/ownSuggestions.ts';
import { readPad } from '../../server/core/policies/policies.ts';
import { OwnSuggestionsInput } from '../../schema/tools/ownSuggestions.ts';
import { presentOwnSuggestions } from '../present/ownSuggestions.ts';
import { readTool } from './defineTool.ts';

/** The pad page's list of what the person suggested to it: waiting, accepted or turned down, with the note. */
export const ownSuggestionsTool = readTool({
  name: 'ui_my_suggestions',
  title: 'My suggestions to a pad',
  kind: 'read',
  audience: 'app',
  description: 'Your latest suggestions to a pad, newest first: waiting, accepted or turned down, with the checker’s note.',
  input: OwnSuggestionsInput,
  policy: (input) => readPad(input.pad_id),
  run: async ({ conn, actor }, input) => ({ padId: input.pad_id, suggestions: await ownSuggestions(conn, actor, input.pad_id) }),
  present: presentOwnSuggestions,
});
