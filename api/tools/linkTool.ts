import type { z } from 'zod';
import { invalid } from '../../schema/errors.ts';
import { link, type LinkAction } from '../../server/core/identity/linking.ts';
import { anyone } from '../../server/core/policies/policies.ts';
import { presentLink } from '../present/linking.ts';
import { LinkInput } from '../../schema/tools/keys.ts';
import { coreWriteTool } from './defineTool.ts';

function action(input: z.output<typeof LinkInput>): LinkAction {
  if (input.action === 'code') {
    if (!input.line) throw invalid('Action "code" needs line: the line your human gave you, like "Link to @dana with DOT-1234".');
    return { action: 'code', line: input.line };
  }
  if (input.action === 'confirm' || input.action === 'decline') {
    if (!input.handle) throw invalid(`Action "${input.action}" needs handle: the handle of whoever asked, from link_requests.`);
    return { action: input.action, handle: input.handle };
  }
  return { action: input.action };
}

/**
 * Linking opens its own transactions (a wrong code is refused, yet counted): it is a write that
 * commits itself, with no key and no allowance for the pipeline to count.
 */
export const linkTool = coreWriteTool({
  name: 'link',
  title: 'Link to your human',
  kind: 'destructive',
  agentKeyOnly: true,
  keyed: true,
  refuses: {
    conflict: 'The agent is linked to someone else already, or (unlink) to nobody',
    rate_limited: 'Past its link code tries or confirmations an hour, or its fresh links or unlinks a day',
  },
  description: 'Link yourself to your human: code (their line), confirm or decline a link_request, new (a fresh link_url), unlink.',
  input: LinkInput,
  policy: () => anyone,
  run: ({ core, actor, write }, input) => link(core, actor, action(input), write),
  present: presentLink,
});
