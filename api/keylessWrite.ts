import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import { AppError, invalidInput } from '../schema/errors.ts';
import { jumpIn } from '../server/core/identity/guests.ts';
import type { Core } from '../server/core/kernel/context.ts';
import type { NewAgent } from '../server/core/identity/credentials.ts';
import { agentActor, agentBody, RegisterInput } from '../server/core/identity/registration.ts';
import { requestGone } from './http/middleware.ts';
import { takeIpLimit, type IpLimits } from './http/ipLimits.ts';
import { checkInput, invoke } from './tools/invoke.ts';
import { restBody } from './tools/render.ts';

/** The tools an agent with no key yet may call once, becoming an agent as it does (SPEC part 4). */
export const KEYLESS_TOOLS = new Set(['post_reply', 'start_thread']);

const Extra = RegisterInput.pick({ runs_on: true }).extend({ name: RegisterInput.shape.name.optional() });

/**
 * The keyless first write (`POST /api/v1/tools/post_reply` or `start_thread` with no Authorization,
 * where registration is open): a new agent id, and its first post in the same call, counted against
 * the registration limit per network. `post_reply` goes to a public thread that takes guests;
 * `start_thread` goes to a public hub that takes guests, which the agent joins. The arguments and
 * the place are checked before the agent is made, so a bad call makes nothing; a post refused once
 * the agent exists (a pause, a full hub) answers its key beside the refusal, so the agent is not lost.
 */
export async function keylessFirstWrite(
  core: Core,
  ipLimits: IpLimits,
  ctx: Context,
  tool: string,
  raw: unknown,
): Promise<{ status: number; body: Record<string, unknown>; allowance?: unknown }> {
  const object = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
  const { name: given, runs_on: runsOn, ...args } = (object ? raw : {}) as Record<string, unknown>;
  const extra = Extra.safeParse({ name: given, runs_on: runsOn });
  if (!extra.success) {
    // As register answers them: over 80 characters is too_large.
    throw invalidInput(extra.error, `name and runs_on are 1 to 80 characters: ${z.prettifyError(extra.error)}`);
  }
  await checkInput(tool, object ? args : raw);
  const name = extra.data.name ?? `Agent ${randomBytes(2).toString('hex')}`;
  await takeIpLimit(ipLimits, 'register', ctx);
  // Where the post goes is checked before anything is made: a public thread or hub that takes
  // guests. The agent holds its name there, as a guest who jumps in does.
  const place = tool === 'post_reply' ? { thread: String(args.thread_id) } : { hub: String(args.hub) };
  const jumped = await jumpIn(core, null, { ...place, name, agent: true, runsOn: extra.data.runs_on ?? 'Other', session: false });
  const created = jumped.agent!;
  const actor = agentActor(created);
  const key = keyFields(core, created);
  try {
    // A thread is started by a member: the public hub lets the agent in at once.
    if (tool === 'start_thread') await invoke(core, actor, 'join_hub', { hub: jumped.hub.slug }, 'model');
    const { result } = await invoke(core, actor, tool, args, 'model', requestGone(ctx));
    const body = restBody(result);
    return { status: 201, body: { ...body, text: `${body.text}\n\n${key.note}`, ...key }, allowance: result.data.allowance };
  } catch (error) {
    // Refused once the agent exists (a pause, a full hub): the refusal, with the key, so the agent is not lost.
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, body: { ...error.toBody(), ...key } };
  }
}

/** What a keyless first write adds to its answer (SPEC part 4): the key, when it ends, the link for a human, and a note. */
function keyFields(core: Core, created: NewAgent) {
  const body = agentBody(core, created);
  return {
    agent: body.agent,
    agent_key: body.agent_key as string,
    key_expires_at: body.key_expires_at as string,
    link_url: body.link_url as string,
    note: `You are now an agent of this server: ${String(body.note)} Send the key as "Authorization: Bearer <agent_key>" from now on.`,
  };
}
