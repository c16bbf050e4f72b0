import { sql, type CommonQueryMethods } from 'slonik';
import { forbidden, invalid } from '../../../schema/errors.ts';
import type { HubRow } from '../../../schema/rows.ts';
import type { LockAction } from '../../../schema/tools/members.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import type { PolicyScope } from '../kernel/policy.ts';
import { mayLock } from '../kernel/locks.ts';
import { allows, type Seat } from '../kernel/rights.ts';
import { readPad, readThread } from './policies.ts';
import { afterCommit, threadsMoved } from '../kernel/afterCommit.ts';

/**
 * `moderate` lock and unlock (SPEC part 2 "Hub roles and rights"): a locked thread takes no posts,
 * replies, reactions, tasks or pads; a locked pad takes no edits, suggestions, undo or restore, and
 * its live connections turn read-only. The hub's owner and helpers lock and unlock anything; a
 * thread's starter or a pad's maker locks their own item, and unlocks it while the lock is theirs
 * (an owner's or helper's lock stays until an owner or helper lifts it). docs/choices.md says why.
 */
export type LockTarget = { kind: 'thread' | 'pad'; id: string; maker: string; locked_by: string | null; hub: HubRow; seat: Seat };

export async function lockTarget(scope: PolicyScope, input: { thread_id?: string | undefined; pad_id?: string | undefined }, action: LockAction): Promise<LockTarget> {
  if ((input.thread_id === undefined) === (input.pad_id === undefined)) {
    throw invalid(`Action "${action}" needs thread_id or pad_id: the thread or pad to ${action}.`, {
      issues: [{ path: input.thread_id === undefined ? 'thread_id' : 'pad_id', message: 'Give exactly one of thread_id and pad_id.' }],
    });
  }
  const target: LockTarget =
    input.thread_id !== undefined
      ? await readThread(input.thread_id)(scope).then(({ thread, hub, seat }) => ({ kind: 'thread' as const, id: thread.id, maker: thread.started_by, locked_by: thread.locked_by, hub, seat }))
      : await readPad(input.pad_id!)(scope).then(({ pad, hub, seat }) => ({ kind: 'pad' as const, id: pad.id, maker: pad.created_by, locked_by: pad.locked_by, hub, seat }));
  if (mayLock(scope.actor.id, target.seat, target, action === 'unlock')) return target;
  const maker = target.maker === scope.actor.id && allows(target.seat, 'write');
  throw forbidden(
    maker
      ? `The owner or a helper of ${target.hub.slug} locked this ${target.kind}; only they unlock it.`
      : `Only the owner and helpers of ${target.hub.slug}, or whoever made this ${target.kind}, lock or unlock it; report a post (the report tool) to reach them.`,
    { your_role: target.seat ?? 'none' },
  );
}

export type LockChange = { kind: 'thread' | 'pad'; item_id: string; action: LockAction; locked: boolean; locked_by: string | null; changed: boolean };

/**
 * Locks or unlocks one thread or pad. A thread's version rises (its kept pages and ETags move on);
 * this instance forgets its editing grants at once, and the live connections to a locked pad are
 * closed by the next access check and come back read-only.
 */
export async function lockItem(core: Core, tx: CommonQueryMethods, actor: Actor, target: LockTarget, action: LockAction): Promise<LockChange> {
  const set = action === 'lock' ? sql.fragment`locked_at = now(), locked_by = ${actor.id}` : sql.fragment`locked_at = NULL, locked_by = NULL`;
  const when = action === 'lock' ? sql.fragment`locked_by IS NULL` : sql.fragment`locked_by IS NOT NULL`;
  const done =
    target.kind === 'thread'
      ? await tx.query(sql.unsafe`UPDATE threads SET ${set}, version = version + 1, updated_at = now() WHERE id = ${target.id} AND ${when}`)
      : await tx.query(sql.unsafe`UPDATE pads SET ${set}, updated_at = now() WHERE id = ${target.id} AND ${when}`);
  const changed = done.rowCount > 0;
  if (changed && target.kind === 'thread') threadsMoved(tx, target.id);
  else if (changed) afterCommit(tx, { reads: 'pads' });
  if (changed) core.editors.forget();
  const lockedBy = changed ? (action === 'lock' ? actor.id : null) : target.locked_by;
  return { kind: target.kind, item_id: target.id, action, locked: lockedBy !== null, locked_by: lockedBy, changed };
}
