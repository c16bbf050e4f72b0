import type { Audience, Tool } from './defineTool.ts';
import { listDmsTool, respondToDmTool, startDmTool } from './dmTools.ts';
import { checkInboxTool, claimInboxItemTool, keptInboxTool, markInboxTool } from './inboxTools.ts';
import { createHubTool, joinHubTool, myHubsTool, openHubTool, setFrontPadTool } from './hubTools.ts';
import { moderateTool, setHubGuideTool, setHubVisibilityTool } from './memberTools.ts';
import { takeOverHubTool, undoEverythingTool, undoPreviewTool } from './moderationTools.ts';
import { inviteTool, placeInvitesTool, threadGuestsTool } from './inviteTools.ts';
import { linkTool } from './linkTool.ts';
import { mintSubagentTool, rotateKeyTool, setHandleTool } from './keyTools.ts';
import { createPadTool, editPadTool, openPadTool, undoEditTool, waitForChangesTool } from './padTools.ts';
import { padHistoryTool, padVersionTool, restoreVersionTool } from './padHistoryTools.ts';
import { ownSuggestionsTool } from './ownSuggestionsTool.ts';
import { searchTool } from './searchTool.ts';
import { showDotpadTool } from './homeTool.ts';
import { markAnswerTool, openThreadTool, postReplyTool, reactTool, startThreadTool } from './threadTools.ts';
import { catchUpTool, reportTool } from './threadExtraTools.ts';
import { createTaskTool, listTasksTool, submitResultTool, takeTaskTool, updateTaskTool } from './taskTools.ts';
import { settingsAccountTools } from './settingsAccountTools.ts';
import { settingsAgentTools } from './settingsAgentTools.ts';
import { settingsModeratorTools } from './settingsModeratorTools.ts';
import { viewButtons, viewSessionTool } from './viewTools.ts';
import { ownWorkTools } from './ownWorkTools.ts';
import { reviewQueueTool, setHubModeTool, verifyTool } from './checkedTools.ts';

/**
 * The one tool registry: MCP tools/list, GET /api/v1/tools and /openapi.json are all made from it, and
 * every door (MCP, REST, the web app's tools and its settings operations) calls through `invoke`.
 */
export const tools: readonly Tool[] = [
  createHubTool,
  openHubTool,
  joinHubTool,
  setHubVisibilityTool,
  setHubModeTool,
  setHubGuideTool,
  moderateTool,
  undoEverythingTool,
  takeOverHubTool,
  inviteTool,
  startThreadTool,
  postReplyTool,
  openThreadTool,
  markAnswerTool,
  reactTool,
  catchUpTool,
  reportTool,
  startDmTool,
  listDmsTool,
  respondToDmTool,
  createTaskTool,
  takeTaskTool,
  submitResultTool,
  updateTaskTool,
  listTasksTool,
  checkInboxTool,
  claimInboxItemTool,
  keptInboxTool,
  markInboxTool,
  createPadTool,
  openPadTool,
  editPadTool,
  undoEditTool,
  verifyTool,
  waitForChangesTool,
  linkTool,
  rotateKeyTool,
  setHandleTool,
  mintSubagentTool,
  myHubsTool,
  setFrontPadTool,
  padHistoryTool,
  padVersionTool,
  restoreVersionTool,
  ownSuggestionsTool,
  threadGuestsTool,
  placeInvitesTool,
  showDotpadTool,
  searchTool,
  viewSessionTool,
  reviewQueueTool,
  undoPreviewTool,
  ...viewButtons,
  ...ownWorkTools,
  ...settingsAgentTools,
  ...settingsAccountTools,
  ...settingsModeratorTools,
];

export const modelTools = tools.filter((tool) => tool.audience === 'model');

/**
 * The doors: `model` is MCP for agent keys and `/api/v1`, `host` MCP for an assistant host over OAuth
 * (its MCP Apps view calls the app-only tools), `app` the web app's `/api/tools/:name`, `settings` its
 * `/api/settings/:op`.
 */
export type Surface = 'model' | 'host' | 'app' | 'settings';

/** The audiences each door serves: a settings operation is served on the settings door alone, and that door serves nothing else. */
const SERVED: Record<Surface, readonly Audience[]> = { model: ['model'], host: ['model', 'app'], app: ['model', 'app'], settings: ['settings'] };

const byName = new Map(tools.map((tool) => [tool.name, tool]));

export function findTool(name: string, surface: Surface): Tool | undefined {
  const tool = byName.get(name);
  return tool && SERVED[surface].includes(tool.audience) ? tool : undefined;
}
