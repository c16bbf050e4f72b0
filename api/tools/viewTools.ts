import { line } from '../../server/core/kernel/result.ts';
import { VIEW_TOKEN_TTL_MS } from '../../server/core/identity/viewTokens.ts';
import { ViewSessionInput, type ViewSessionData } from '../../schema/tools/viewSession.ts';
import { readTool, type Tool } from './defineTool.ts';
import { inviteTool } from './inviteTools.ts';
import { moderateTool, setHubVisibilityTool } from './memberTools.ts';
import { takeTaskTool, updateTaskTool } from './taskTools.ts';
import { markAnswerTool, postReplyTool, reactTool } from './threadTools.ts';

/**
 * The app-only tools of the MCP Apps view (SPEC part 4 "Click proof for app-only tools"): the buttons
 * on its cards. Each is the model tool it names, served to the view alone (`visibility: ["app"]`):
 * the same input, policy, core and answer, so a button does nothing a tool does not. Over OAuth each
 * write spends a click token, which makes it the person's own ("direct"), so the approvals among them
 * (inviting, letting people in, roles, publishing) work there; every app-only result brings the next token.
 */
function button(tool: Tool, description: string): Tool {
  return {
    ...tool,
    name: `ui_${tool.name}`,
    description,
    audience: 'app',
    errors: { ...tool.errors, forbidden: [...(tool.errors.forbidden ?? []), 'Over OAuth: no click token, or one spent, expired or of another connection; or a host that is not a verified assistant host'] },
  };
}

/** The view's first call: the click token comes in the result's `_meta["svc/viewToken"]` (added by the pipeline). */
export const viewSessionTool = readTool({
  name: 'ui_view_session',
  title: 'Start the view',
  kind: 'read',
  audience: 'app',
  description: "The view calls it on load: a click token for its buttons arrives in _meta['svc/viewToken'].",
  input: ViewSessionInput,
  policy: () => async () => null,
  run: async ({ core, actor }): Promise<ViewSessionData> => {
    const base_url = core.config.baseUrl;
    if (actor.via !== 'oauth') return { base_url, clicks: false };
    if (!actor.oauth?.knownHost) return { base_url, clicks: false, act_on_web: `${base_url}/` };
    return { base_url, clicks: true, expires_at: new Date(Date.now() + VIEW_TOKEN_TTL_MS).toISOString() };
  },
  present: (out: ViewSessionData) => ({
    parts: [
      line(
        out.clicks
          ? 'The view may act on your clicks; each button spends one click token and brings the next.'
          : out.act_on_web
            ? `This app is not a verified assistant host: its buttons do not act; act on the web at ${out.act_on_web}.`
            : 'Click tokens are for an assistant host\'s view.',
      ),
    ],
    data: out,
  }),
});

export const viewButtons: readonly Tool[] = [
  button(postReplyTool, 'The thread card\'s Reply button: post_reply, as the person.'),
  button(reactTool, 'The thread card\'s reactions: react, as the person.'),
  button(markAnswerTool, 'The thread card\'s Mark answer: mark_answer, as the person.'),
  button(takeTaskTool, 'The task card\'s Take: take_task, as the person.'),
  button(updateTaskTool, 'The task card\'s state buttons: update_task, as the person.'),
  button(moderateTool, 'The hub card\'s Let in, Turn away and role buttons: moderate, as the person.'),
  button(inviteTool, 'The hub card\'s Invite link: invite, as the person.'),
  button(setHubVisibilityTool, 'The hub card\'s Publish: set_hub_visibility, as the person.'),
];
