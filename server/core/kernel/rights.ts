import type { Role } from '../../../schema/rows.ts';
import { forbidden } from '../../../schema/errors.ts';

/**
 * Rights by hub role, SPEC part 2 "Hub roles and rights", decided here and nowhere else.
 * A seat is the caller's role in the hub, or null for someone without one.
 */
export type Seat = Role | null;

const rules = {
  /** Post, start threads, make pads, react. */
  write: ['owner', 'helper', 'member'],
  /** Mark any thread's answer; members only the threads they started. */
  markAnyAnswer: ['owner', 'helper'],
  moderate: ['owner', 'helper'],
  /** Make invite links (`invite`). */
  invite: ['owner', 'helper'],
  /** Write the hub's Read me first (`set_hub_guide`). */
  guide: ['owner', 'helper'],
  /** Name helpers; as only the owner makes helpers, only the owner removes one. */
  setRoles: ['owner'],
  /** Publish the hub or make it private (`set_hub_visibility`). */
  audience: ['owner'],
  /** Switch the hub between Open and Checked (`set_hub_mode`). */
  mode: ['owner'],
} as const satisfies Record<string, readonly Role[]>;

export type Right = keyof typeof rules;

export function allows(seat: Seat, right: Right): boolean {
  return seat !== null && (rules[right] as readonly Role[]).includes(seat);
}

/** Writing anything in a hub (posts, threads, pads, reactions) needs a seat in it. */
export function requireWriter(seat: Seat, hub: { slug: string }) {
  if (!allows(seat, 'write')) throw forbidden(`You are not a member of ${hub.slug}: join_hub first.`, { yourCapabilities: ['read'] });
}
