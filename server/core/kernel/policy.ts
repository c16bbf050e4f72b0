import { type CommonQueryMethods } from 'slonik';
import type { HubRow, ThreadRow } from '../../../schema/rows.ts';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { type Seat } from './rights.ts';

/**
 * Who may do what, one place per resource (as Outline's policies): a policy loads the target of a
 * call once, decides from the Actor and that target, and hands the target on to the tool's run. Every
 * door gets the same refusal, because every door runs the same policy.
 */
export type PolicyScope = { core: Core; conn: CommonQueryMethods; actor: Actor };

export type Policy<T> = (scope: PolicyScope) => Promise<T>;

export type HubTarget = { hub: HubRow; seat: Seat };

export type ThreadTarget = { thread: ThreadRow; hub: HubRow; seat: Seat };

export type PostTarget = ThreadTarget & { post: { id: string; thread_id: string } };

// Waiting on a pad or a thread

export type Watched = { kind: 'pad' | 'thread'; id: string };
