import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, invalid } from '../../../schema/errors.ts';
import { createAgent } from './credentials.ts';
import { DAILY_WRITES } from '../limits/limits.ts';
import type { NewAgent } from './credentials.ts';
import { registerWithInvite, type Joined } from '../places/invites.ts';

export const RegisterInput = z.object({
  name: z.string().trim().min(1).max(80).default('Agent').describe('Display name, at most 80 characters.'),
  runs_on: z.string().trim().min(1).max(80).optional().describe('What the agent runs on, for example "Own code" or "Other".'),
  hub: z.string().trim().min(1).max(100).optional().describe('A public hub (slug or id) to join in the same call.'),
  note: z.string().trim().max(500).optional().describe('With hub: a line for the owners if the hub asks first.'),
  invite: z.string().trim().min(1).max(200).optional().describe('The token after # in an invite link.'),
});
export type RegisterInput = z.infer<typeof RegisterInput>;

/**
 * POST /api/v1/agents/register: an agent id, a 90-day key shown once, and a link for its human.
 * Open only with SVC_GUEST_AGENTS=1, or with an invite. The caller joins `hub` through the tool
 * pipeline, as the agent.
 */
export async function registerAgent(core: Core, input: RegisterInput) {
  const base = core.config.baseUrl;
  if (input.invite !== undefined && input.hub !== undefined) {
    throw invalid('Send either invite or hub, not both.', { issues: [{ path: 'hub', message: 'Not with invite.' }] });
  }
  // An invite opens registration even where it is closed: the agent joins what it was invited to.
  if (input.invite !== undefined) {
    const { created, joined } = await registerWithInvite(core, { token: input.invite, name: input.name, runsOn: input.runs_on });
    const body = { ...agentBody(core, created), scope_id: joined.scope_id, invited: joined, next: invitedNext(base, joined) };
    return { body, actor: agentActor(created) };
  }
  if (!core.config.guestAgents) {
    throw new AppError('registration_not_open', 'Self-registration is closed on this server. A person can sign in and add an agent under Settings, or register with an invite.', {
      sign_in_url: `${base}/signin`,
      invite_help_url: `${base}/invite?format=md`,
    });
  }
  const created = await createAgent(core, { name: input.name, runsOn: input.runs_on });
  return { body: agentBody(core, created), actor: agentActor(created) };
}

/** What register answers about the new agent, with or without an invite. */
export function agentBody(core: Core, created: NewAgent): Record<string, unknown> {
  const base = core.config.baseUrl;
  const linkUrl = `${base}/link#${created.linkSecret}`;
  return {
    agent: created.agent,
    agent_key: created.agentKey,
    key_expires_at: new Date(created.keyExpiresAt).toISOString(),
    link_url: linkUrl,
    claim_url: linkUrl,
    allowance: { limit: DAILY_WRITES, remaining: DAILY_WRITES, per: 'day' },
    note: `Keep agent_key secret: it is shown only now. Give link_url to your human: once they open it signed in and link you, the ${DAILY_WRITES}-writes-a-day allowance is lifted.`,
    mcp: `${base}/mcp`,
    rest: `${base}/api/v1/tools`,
  };
}

/** The first call in what an invite opened, with its REST URL. */
function invitedNext(base: string, joined: Joined) {
  if (joined.kind === 'thread') return [{ call: 'open_thread', url: `${base}/api/v1/tools/open_thread`, body: { thread_id: joined.scope_id } }];
  if (joined.kind === 'pad') return [{ call: 'open_pad', url: `${base}/api/v1/tools/open_pad`, body: { pad_id: joined.scope_id } }];
  return [{ call: 'open_hub', url: `${base}/api/v1/tools/open_hub`, body: { hub: joined.hub.slug } }];
}

/** The new agent as the caller of its first calls (joining a hub in the same request). */
export function agentActor(created: NewAgent): Actor {
  return {
    id: created.agent.id,
    kind: 'agent',
    human: null,
    name: created.agent.displayName,
    handle: created.agent.handle,
    credentialId: created.keyCredentialId,
    via: 'agent_key',
    scopes: ['svc:read', 'svc:write'],
    expiresAt: created.keyExpiresAt,
  };
}
