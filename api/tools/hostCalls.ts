import type { CommonQueryMethods } from 'slonik';
import type { Actor } from '../../server/core/kernel/actor.ts';
import type { Core } from '../../server/core/kernel/context.ts';
import { isUnclickedAssistant } from '../../server/core/kernel/caller.ts';
import { spendViewToken } from '../../server/core/identity/viewTokens.ts';
import { forbidden } from '../../schema/errors.ts';
import type { Tool } from './defineTool.ts';

/**
 * What an assistant host's calls meet beside every other caller's (SPEC part 4 "Click proof for
 * app-only tools", part 2 "Hub roles and rights"): click tokens for the view's app-only writes, and
 * approvals, which a person's assistant makes only with a click and never with SVC_HOST_APPROVALS=off.
 */

/** Where on the web app the call's item is, for a refusal to send the person to: its pad, thread or hub, else the home page. */
export function webPlaceOf(core: Core, input: Record<string, unknown>): string {
  const base = core.config.baseUrl;
  const text = (key: string) => (typeof input[key] === 'string' ? (input[key] as string) : undefined);
  const ref = text('pad_id') ?? text('thread_id') ?? text('to');
  if (ref?.startsWith('pad_')) return `${base}/p/${encodeURIComponent(ref)}`;
  if (ref?.startsWith('thr_')) return `${base}/t/${encodeURIComponent(ref)}`;
  // What is left is a hub: `hub`, or invite's `to` naming one by slug or id.
  const hub = text('hub') ?? ref;
  return hub ? `${base}/h/${encodeURIComponent(hub)}` : `${base}/`;
}

/** An app-only write over OAuth: the view's own buttons, which spend a click token each. */
export const needsClick = (tool: Tool, actor: Actor) => actor.via === 'oauth' && tool.audience === 'app' && tool.commit !== 'read';

/**
 * Checked before anything runs: a host that is not a known assistant host has its clicks refused
 * (act on the web instead), and a write with no token is refused. The token itself is spent in the
 * write's transaction (`spendClick`).
 */
export function refuseWithoutClick(core: Core, tool: Tool, actor: Actor, token: string | undefined, input: Record<string, unknown>): void {
  const url = webPlaceOf(core, input);
  if (!actor.oauth?.knownHost) {
    throw forbidden(`${actor.oauth?.clientName ?? 'This app'} is not a verified assistant host, so clicks in its view are not honoured; do this on the web: ${url}`, { act_on_web: url });
  }
  if (!token) throw forbidden(`${tool.name} is a button of the view: it needs a click token (view_token, from ui_view_session). Or do it on the web: ${url}`, { act_on_web: url });
}

/** Spends the click token in the write's transaction; refused `forbidden` when it is not good. */
export async function spendClick(core: Core, tx: CommonQueryMethods, actor: Actor, token: string, input: Record<string, unknown>): Promise<void> {
  if (await spendViewToken(tx, actor, token)) return;
  const url = webPlaceOf(core, input);
  throw forbidden(`The click token is spent, expired or not this connection's: the view gets a fresh one from ui_view_session. Or do this on the web: ${url}`, { act_on_web: url });
}

/** Writes refused to any OAuth caller with SVC_HOST_APPROVALS=off: edits go live at once, so the host suggests instead. */
const LIVE_EDITS = new Set(['edit_pad', 'ui_edit_pad']);

/**
 * Approvals: a person's assistant with no click in the view is refused and sent to approve on the
 * web; with SVC_HOST_APPROVALS=off, approvals and live pad edits inside a host are refused whatever
 * was clicked.
 */
export function refuseHostApproval(core: Core, tool: Tool, actor: Actor, input: Record<string, unknown>): void {
  if (actor.via !== 'oauth') return;
  const url = webPlaceOf(core, input);
  if (!core.config.hostApprovals && LIVE_EDITS.has(tool.name) && input.propose !== true) {
    throw forbidden(`Pad edits from an assistant host are off on this server: suggest the change with edit_pad and "propose": true instead, or edit on the web: ${url}`, {
      approve_on_web: url,
    });
  }
  if (!tool.approves?.(input)) return;
  if (!core.config.hostApprovals) {
    throw forbidden(`Approvals inside an assistant host are off on this server: ${tool.name} is done on the web, at ${url}`, { approve_on_web: url });
  }
  if (isUnclickedAssistant(actor)) {
    throw forbidden(`An assistant cannot ${tool.name} on its own: the person approves it with a click in the card, or on the web at ${url}`, { approve_on_web: url });
  }
}
