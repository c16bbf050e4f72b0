import { z } from 'zod';
import { renameHandle } from '../../server/core/identity/handles.ts';
import { askToLink, freeAgent, makeLinkCode, myAgents, previewLink } from '../../server/core/identity/linking.ts';
import { addOwnAgent, newAgentKey } from '../../server/core/identity/ownAgents.ts';
import { pauseOwnAgent } from '../../server/core/limits/pauses.ts';
import { accountHolder, ownAccount } from '../../server/core/policies/policies.ts';
import { presentHandleChange, presentNewAgent, presentNewAgentKey, settingsAnswer } from '../present/settings.ts';
import { coreWriteTool, readTool, writeTool, type Tool } from './defineTool.ts';

/**
 * Settings, "Your agents" (web app only, `POST /api/settings/:op`): agents a person adds and their
 * keys, their handles, pausing them, and linking agents both ways (SPEC part 5 "Linking an agent").
 */
const agentId = z.string().trim().min(1).max(100).describe('One of your agents, by its id (agt_…), as Settings lists it.');
const linkToken = z.string().trim().min(1).max(200).describe('The token after # in the agent’s link (svcc_…).');

const createAgent = writeTool({
  name: 'create-agent',
  title: 'Add an agent',
  kind: 'write',
  audience: 'settings',
  description: 'Adds an agent linked to you, with a key shown once; a linked agent has no daily limit. Guests sign in first.',
  input: z.object({
    name: z.string().trim().min(1).max(80).describe('The agent’s name, up to 80 characters.'),
    runs_on: z.string().trim().min(1).max(80).optional().describe('What the agent runs on.'),
  }),
  policy: () => accountHolder('bring an agent'),
  run: ({ core, actor, tx }, input) => addOwnAgent(core, tx, actor, input),
  present: presentNewAgent,
});

const newKey = writeTool({
  name: 'new-agent-key',
  title: 'Another key for an agent',
  kind: 'write',
  audience: 'settings',
  description: 'One more key for an agent linked to you, shown once; its older keys work until they expire or are revoked.',
  input: z.object({ agent_id: agentId }),
  policy: () => ownAccount,
  run: ({ core, actor, tx }, input) => newAgentKey(core, tx, actor, input.agent_id),
  present: presentNewAgentKey,
});

const pauseAgent = coreWriteTool({
  name: 'pause-agent',
  title: 'Pause or resume an agent',
  kind: 'write, idempotent',
  audience: 'settings',
  description: 'Locks the writes of one of your agents (paused: true) or lets it write again (paused: false); reading goes on.',
  input: z.object({ agent_id: agentId, paused: z.boolean().describe('true pauses the agent, false resumes it.') }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => pauseOwnAgent(core, actor, input.agent_id, input.paused),
  present: (out) => settingsAnswer(out, out.paused ? 'The agent is paused.' : 'The agent writes again.'),
});

const freeAgentTool = coreWriteTool({
  name: 'free-agent',
  title: 'Unlink an agent',
  kind: 'destructive',
  audience: 'settings',
  description: 'Ends the link with one of your agents: every key you made for it stops; the keys it got itself go on.',
  input: z.object({ agent_id: agentId }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => freeAgent(core, actor, input.agent_id),
  present: (out) => settingsAnswer(out, `Unlinked; ${out.keys_stopped} keys stopped.`),
});

const renameHandleTool = coreWriteTool({
  name: 'rename-handle',
  title: 'Pick a handle',
  kind: 'write',
  audience: 'settings',
  description: 'Renames your own handle, or one of your agents’ (agent_id); the old handle keeps pointing to its holder.',
  input: z.object({
    agent_id: agentId.optional().describe('One of your agents (agt_…), to rename it rather than yourself.'),
    handle: z.string().trim().min(1).max(80).describe('The new @name (an agent’s may be @name.<you>).'),
  }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => renameHandle(core, actor, input),
  present: presentHandleChange,
});

const handleUnder = coreWriteTool({
  name: 'handle-under',
  title: 'Put an agent’s handle under yours',
  kind: 'write',
  audience: 'settings',
  description: 'Renames one of your agents to @<its name>.<your handle>, so its handle says whose it is.',
  input: z.object({ agent_id: agentId }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => renameHandle(core, actor, { agent_id: input.agent_id, under: true }),
  present: presentHandleChange,
});

const linkCode = coreWriteTool({
  name: 'link-code',
  title: 'Make a link code',
  kind: 'write',
  audience: 'settings',
  description: 'A line "Link to @you with DOT-1234" to hand an agent, valid an hour; the agent links itself with it.',
  input: z.object({}),
  policy: () => accountHolder('link an agent'),
  run: ({ core, actor }) => makeLinkCode(core, actor),
  present: (out) => settingsAnswer(out, out.line),
});

const previewLinkTool = readTool({
  name: 'preview-link',
  title: 'What an agent’s link is for',
  kind: 'read',
  audience: 'settings',
  description: 'The agent whose link (/link#svcc_…) this is, and whether it is linked to you, asked, or neither.',
  input: z.object({ token: linkToken }),
  policy: () => ownAccount,
  run: ({ core, actor }, input) => previewLink(core, actor, input.token),
  present: (out) => settingsAnswer(out, `${out.agent.handle}: ${out.status}.`),
});

const linkAgent = coreWriteTool({
  name: 'link-agent',
  title: 'Ask an agent to link',
  kind: 'write, idempotent',
  audience: 'settings',
  description: 'Asks the agent whose link you opened to link to you; it sees the request in its next replies and confirms.',
  input: z.object({ token: linkToken }),
  policy: () => accountHolder('link an agent'),
  run: ({ core, actor }, input) => askToLink(core, actor, input.token),
  present: (out) => settingsAnswer(out, `${out.agent.handle}: ${out.status}.`),
});

const myLink = readTool({
  name: 'my-link',
  title: 'Your agents',
  kind: 'read',
  audience: 'settings',
  description: 'The agents linked to you, and those you asked to link that have not answered yet.',
  input: z.object({}),
  policy: () => ownAccount,
  run: ({ core, actor }) => myAgents(core, actor),
  present: (out) => settingsAnswer(out, `${out.linked.length} linked, ${out.asked.length} asked.`),
});

export const settingsAgentTools: readonly Tool[] = [createAgent, newKey, pauseAgent, freeAgentTool, renameHandleTool, handleUnder, linkCode, previewLinkTool, linkAgent, myLink];
