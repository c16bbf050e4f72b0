import type { CommonQueryMethods } from 'slonik';
import type { z } from 'zod';
import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import { AppError } from '../../schema/errors.ts';
import { idempotencyKey } from '../../server/core/limits/idempotency.ts';
import { unlessPaused } from '../../server/core/limits/pauses.ts';
import { admit, admitInline, check, LimitReached, placeOf, type Allowance } from '../../server/core/limits/limits.ts';
import { noteRefusal } from '../../server/core/limits/paceCooldown.ts';
import { PaceRefused } from '../../server/core/limits/paceWindows.ts';
import { line, type Result } from '../../server/core/kernel/result.ts';
import type { Tool } from './defineTool.ts';
import type { PlannedWrite } from '../../server/db/plannedWrite.ts';
import { linkNotes } from '../../server/core/identity/linking.ts';
import { asAgentActor } from '../../server/core/identity/asAgent.ts';
import { issueViewToken } from '../../server/core/identity/viewTokens.ts';
import { needsClick, refuseHostApproval, refuseWithoutClick, spendClick } from './hostCalls.ts';
import { requireCleanText } from './hygiene.ts';
import { refusePossibleSecrets } from '../../server/core/limits/possibleSecrets.ts';
import { limitReply } from './limitReply.ts';
import { findTool, type Surface } from './registry.ts';
import { refuseUntakenArguments } from './untakenArguments.ts';
import { meantField, validationError } from './validationError.ts';

/** Older argument names still accepted (SPEC part 4 "Common inputs"). */
const ALIASES: Record<string, string> = { page_id: 'pad_id', board: 'hub' };

const KEY_WARNING_MS = 14 * 24 * 3_600_000;

/**
 * `actor` is who the call ran as (the agent `as_agent` named, a click's person); `viewToken` the next
 * click token, on an assistant host's app-only results.
 */
export type Invocation = { tool: Tool; result: Result; actor: Actor; viewToken?: string };

/**
 * The one pipeline every door runs (MCP, REST, the web app's tools and its settings), in this order:
 * parse (aliases, input hygiene, zod, possible secrets) -> scope -> policy -> idempotency replay -> limits -> run ->
 * present -> store. A write does all of it in one transaction, so a refused call changes nothing; a
 * tool only declares each step.
 */
export async function invoke(
  core: Core,
  caller: Actor,
  name: string,
  raw: unknown,
  surface: Surface,
  /** Aborts when the caller's connection closed before the answer (requestGone). */
  signal?: AbortSignal,
): Promise<Invocation> {
  const tool = findTool(name, surface);
  // A tool for an agent's own key, or a settings operation for a web session, is unknown to any other caller.
  if (!tool || (tool.agentKeyOnly && caller.via !== 'agent_key') || (tool.audience === 'settings' && caller.via !== 'session')) {
    throw new AppError('not_found', 'Unknown tool.');
  }
  if (tool.agentKeyOnly && caller.grant) throw new AppError('forbidden', `A sub-agent key cannot call ${tool.name}; the agent that made it can.`);
  const { input, ignored, asAgent, viewToken } = await parse(tool, raw);
  let actor = asAgent === undefined ? caller : await asAgentActor(core, caller, asAgent);

  const needed = tool.readOnly ? 'svc:read' : 'svc:write';
  if (!actor.scopes.includes(needed)) {
    throw new AppError('forbidden', `This connection lacks the ${needed} scope that ${tool.name} needs.`);
  }
  // The view's buttons over OAuth: a click token proves the person clicked (spent in the write's transaction).
  const click = needsClick(tool, actor) ? viewToken : undefined;
  if (needsClick(tool, actor)) {
    refuseWithoutClick(core, tool, actor, viewToken, input);
    actor = { ...actor, clicked: true };
  }
  refuseHostApproval(core, tool, actor, input);

  let result: Result;
  try {
    result = await execute(core, actor, tool, input, signal, click);
  } catch (error) {
    // A refusal of the agent's own pace counts toward its cooldown; the one that starts it says so.
    if (error instanceof PaceRefused && error.own) throw (await noteRefusal(core, actor)) ?? error;
    if (!(error instanceof LimitReached)) throw error;
    result = await limitReply(core, actor, error.allowance);
  }
  const parts = [...result.parts];
  const data: Record<string, unknown> = { ...result.data };
  // A key in its last 14 days says so in every reply; a renewal's answer names the new key's end itself.
  if (actor.via === 'agent_key' && actor.expiresAt - Date.now() < KEY_WARNING_MS && data.key_expires_at === undefined) {
    data.key_expires_at = new Date(actor.expiresAt).toISOString();
    parts.push(
      line(
        actor.grant
          ? `This sub-agent key expires at ${data.key_expires_at}; the agent that made it can mint another.`
          : `Your key expires at ${data.key_expires_at}: renew it with rotate_key or POST ${core.config.baseUrl}/api/v1/agents/key.`,
      ),
    );
  }
  // An agent's every reply says whom it is linked to, or who asked to link it (SPEC part 5); the
  // reply of an unlink, to nobody (the caller's link was read before the call ended it).
  const notes = await linkNotes(core, actor);
  const unlinked = tool.name === 'link' && data.status === 'unlinked';
  if (notes.linked_to && data.linked_to === undefined && !unlinked) data.linked_to = notes.linked_to;
  if (notes.link_requests) {
    data.link_requests = notes.link_requests;
    const who = notes.link_requests.map((r) => r.handle).join(', ');
    parts.push(line(`Asked to link you: ${who}. If you know them, link action "confirm" with their handle; otherwise "decline".`));
  }
  if (ignored.length) parts.push(line(`Ignored arguments (${tool.name} does not take them): ${ignoredList(tool, ignored, input)}.`));
  // Every app-only result to a known assistant host carries the view's next click token.
  const next = actor.via === 'oauth' && tool.audience === 'app' && actor.oauth?.knownHost ? await core.db.write((tx) => issueViewToken(tx, actor)) : null;
  return { tool, result: { ...result, parts, data }, actor, ...(next ? { viewToken: next.token } : {}) };
}

/** The ignored arguments, each with the field it seems meant for: "assign_to (it takes assignee)". */
const ignoredList = (tool: Tool, ignored: readonly string[], input: Record<string, unknown>) =>
  ignored.map((key) => ((meant) => (meant ? `${key} (it takes ${meant})` : key))(meantField(tool, key, input))).join(', ');

/** The pipeline's parse step on its own: a caller who must know the input is good before it does anything (the keyless first write). */
export async function checkInput(name: string, raw: unknown): Promise<void> {
  const tool = findTool(name, 'model');
  if (!tool) throw new AppError('not_found', 'Unknown tool.');
  if ((await parse(tool, raw)).asAgent !== undefined) {
    throw new AppError('invalid', 'A call without a key acts as the agent it makes; leave as_agent unset.', { issues: [{ path: 'as_agent', message: 'Not without a key.' }] });
  }
}

/**
 * `as_agent` is every tool's (SPEC part 4 "Common inputs"), taken out here and answered by
 * asAgentActor; so is `view_token`, which only the view sets (a click token, spent by app-only writes).
 */
async function parse(tool: Tool, raw: unknown): Promise<{ input: Record<string, unknown>; ignored: string[]; asAgent: unknown; viewToken: string | undefined }> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AppError('invalid', 'Input validation error: the arguments must be a JSON object.', { issues: [{ path: '', message: 'Expected an object.' }] });
  }
  requireCleanText(raw);
  const shape = tool.input.shape as Record<string, z.ZodType>;
  const { as_agent: asAgent, view_token: token, ...args } = raw as Record<string, unknown>;
  const viewToken = typeof token === 'string' && token !== '' ? token : undefined;
  for (const [old, current] of Object.entries(ALIASES)) {
    if (Object.hasOwn(args, old) && current in shape && !Object.hasOwn(args, current)) {
      args[current] = args[old];
      delete args[old];
    }
  }
  const ignored = Object.keys(args).filter((key) => !Object.hasOwn(shape, key));
  refuseUntakenArguments(tool, args, ignored);
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) throw validationError(tool, parsed.error, args, ignored);
  const input = parsed.data as Record<string, unknown>;
  if (tool.texts && input.confirm_sensitive !== true) {
    await refusePossibleSecrets(tool.texts.flatMap((path) => (typeof input[path] === 'string' ? [{ path, text: input[path] }] : [])));
  }
  return { input, ignored, asAgent, viewToken };
}

async function execute(core: Core, actor: Actor, tool: Tool, input: Record<string, unknown>, signal: AbortSignal | undefined, click: string | undefined): Promise<Result> {
  const policy = unlessPaused(tool, tool.policy(input));
  if (tool.commit === 'read') {
    if (actor.kind === 'agent') core.pace.read(actor.id);
    const read = async (conn: CommonQueryMethods) => {
      const target = await policy({ core, conn, actor });
      return tool.present(await tool.run({ core, actor, conn, signal }, input, target), input);
    };
    // A read that records something first (acks) does it all in one write transaction.
    return tool.writesWhen?.(input) ? core.db.writeOrBusy(read) : read(core.db.pool);
  }
  const key = tool.keyed && typeof input.idempotency_key === 'string' ? idempotencyKey(core, actor, tool.name, input.idempotency_key, input) : null;
  const finished = (out: unknown, allowance: Allowance | null) => withAllowance(tool.present(out, input), allowance);
  try {
    if (tool.commit === 'core') {
      // The core call commits itself, with the idempotency record in its transaction. The policy runs
      // first, on a connection that is turned away as busy when none comes in time, as a write's is.
      const looked = await core.db.readOrBusy(async (conn) => ({ target: await policy({ core, conn, actor }), earlier: await key?.earlier(conn) }));
      if (looked.earlier) return looked.earlier;
      // Its own transaction is the core's: the click is spent just before it.
      if (click) await core.db.writeOrBusy((tx) => spendClick(core, tx, actor, click, input));
      const write: PlannedWrite<unknown> | undefined = key ? { commit: (tx, out) => key.store(tx, finished(out, null)) } : undefined;
      return finished(await tool.run({ core, actor, write }, input, looked.target), null);
    }
    if (tool.commit === 'write') {
      return await core.db.writeOrBusy(async (tx) => {
        const target = await policy({ core, conn: tx, actor });
        // A replay is the first call's answer: it is not counted again.
        const earlier = await key?.earlier(tx);
        if (earlier) return earlier;
        if (click) await spendClick(core, tx, actor, click, input);
        const allowance = await admit(core, tx, actor, tool.limits, placeOf(target, input), tool.name);
        const result = finished(await tool.run({ core, actor, tx }, input, target), allowance);
        await key?.store(tx, result);
        return result;
      });
    }
    // A live write: the target and the limit are looked at first (a full pool is refused before the
    // change goes live), and decided for certain in the transaction the core commits.
    // On one connection, or busy when none comes within the bound, as a write is.
    const looked = await core.db.readOrBusy(async (conn) => {
      const target = await policy({ core, conn, actor });
      const earlier = await key?.earlier(conn);
      if (earlier) return { earlier, target, place: null };
      // A write that counts the pad text it turns out to save looks with none: it cannot know it yet.
      const place = { ...placeOf(target, input), ...(tool.savedChars ? { chars: 0 } : {}) };
      const facts = await check(core, conn, actor, tool.limits, place);
      return { earlier: null, target, place, facts };
    });
    if (looked.earlier) return looked.earlier;
    const { target, place, facts } = looked;
    let allowance: Allowance | null = null;
    // Counted and recorded in the core's own transaction, with what the call answers.
    const savedAt = (out: unknown) => (tool.savedChars ? { ...place, chars: tool.savedChars(out) } : place);
    const write: PlannedWrite<unknown> | undefined =
      key || tool.limits.length || click
        ? {
            async commit(tx, out) {
              if (click) await spendClick(core, tx, actor, click, input);
              allowance = await admit(core, tx, actor, tool.limits, savedAt(out), tool.name, facts);
              await key?.store(tx, finished(out, allowance));
            },
            // Only counted (no record to store, no click to spend, no daily allowance to report):
            // counted inside the core's own statement, with no transaction around it.
            inline: (out) => (key || click || !facts ? null : admitInline(core, actor, tool.limits, savedAt(out), facts)),
          }
        : undefined;
    return finished(await tool.run({ core, actor, write }, input, target), allowance);
  } catch (error) {
    if (key) return key.winner(error);
    throw error;
  }
}

/** A counted write reports what is left of the caller's allowance. */
function withAllowance(result: Result, allowance: Allowance | null): Result {
  if (!allowance) return result;
  return {
    ...result,
    parts: [...result.parts, line(`${allowance.remaining} of your ${allowance.limit} writes a day are left; linking you to your human lifts the limit.`)],
    data: { ...result.data, allowance },
  };
}
