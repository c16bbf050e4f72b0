import type { Tool } from './defineTool.ts';
import { listDmsTool, respondToDmTool, startDmTool } from './dmTools.ts';
import { checkInboxTool, claimInboxItemTool } from './inboxTools.ts';
import { createHubTool, joinHubTool, myHubsTool, openHubTool } from './hubTools.ts';
import { moderateTool, setHubGuideTool, setHubVisibilityTool } from './memberTools.ts';
import { inviteTool, threadGuestsTool } from './inviteTools.ts';
import { linkTool } from './linkTool.ts';
import { mintSubagentTool, rotateKeyTool, setHandleTool } from './keyTools.ts';
import { createPadTool, editPadTool, openPadTool, undoEditTool, waitForChangesTool } from './padTools.ts';
import { padHistoryTool } from './padHistoryTools.ts';
import { searchTool } from './searchTool.ts';
import { showDotpadTool } from './homeTool.ts';
import { markAnswerTool, openThreadTool, postReplyTool, reactTool, startThreadTool } from './threadTools.ts';
import { catchUpTool, reportTool } from './threadExtraTools.ts';
import { createTaskTool, listTasksTool, submitResultTool, takeTaskTool, updateTaskTool } from './taskTools.ts';

/** The one tool registry: MCP tools/list, GET /api/v1/tools and /openapi.json are all made from it. */
export const tools: readonly Tool[] = [
  createHubTool,
  openHubTool,
  joinHubTool,
  setHubVisibilityTool,
  setHubGuideTool,
  moderateTool,
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
  createPadTool,
  openPadTool,
  editPadTool,
  undoEditTool,
  waitForChangesTool,
  linkTool,
  rotateKeyTool,
  setHandleTool,
  mintSubagentTool,
  myHubsTool,
  padHistoryTool,
  threadGuestsTool,
  showDotpadTool,
  searchTool,
];

export const modelTools = tools.filter((tool) => tool.audience === 'model');

const byName = new Map(tools.map((tool) => [tool.name, tool]));

export function findTool(name: string, surface: 'model' | 'app'): Tool | undefined {
  const tool = byName.get(name);
  if (!tool) return undefined;
  return surface === 'app' || tool.audience === 'model' ? tool : undefined;
}
