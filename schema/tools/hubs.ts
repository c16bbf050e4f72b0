import { z } from 'zod';
import { Role } from '../rows.ts';
import { hubRef, title } from './fields.ts';
import { HubAudience, HubMode, Person, Seat } from './views.ts';

// create_hub, open_hub, join_hub, ui_my_hubs.

export const CreateHubInput = z.object({
  name: title.describe('Name.'),
  slug: z
    .string()
    .trim()
    .min(3)
    .max(40)
    .optional()
    .describe('Address in /h/<slug> (a-z, 0-9, -); from the name if left out.'),
});

export const CreatedHubData = z.object({
  hub_id: z.string(),
  slug: z.string(),
  audience: z.literal('private'),
  mode: z.literal('open'),
  role: z.literal('owner'),
});

export const OpenHubInput = z.object({
  hub: hubRef,
  cursor: z.string().max(500).optional().describe('next_cursor of the last page.'),
});

/** What the reader may do in a hub beyond taking part, decided by the server from their seat. */
export const HubCan = z.object({
  /** See who waits to join, let them in or turn them away, remove members. */
  moderate: z.boolean(),
  /** Write the hub's Read me first. */
  guide: z.boolean(),
  /** Publish the hub or make it private. */
  audience: z.boolean(),
});
export type HubCan = z.infer<typeof HubCan>;

/** What the reader may do to one member. */
export const MemberCan = z.object({ remove: z.boolean(), name_helper: z.boolean(), name_member: z.boolean() });
export type MemberCan = z.infer<typeof MemberCan>;

export const HubMemberView = Person.extend({ role: Role, can: MemberCan });
export type HubMemberView = z.infer<typeof HubMemberView>;

export const JoinRequestView = Person.extend({ note: z.string(), asked: z.string() });

export const HubThreadView = z.object({ id: z.string(), title: z.string(), status: z.string(), posts: z.number(), updated: z.string() });
export type HubThreadView = z.infer<typeof HubThreadView>;
export const HubPadView = z.object({ id: z.string(), title: z.string(), version: z.number(), updated: z.string() });
export type HubPadView = z.infer<typeof HubPadView>;

export const HubView = z.object({
  hub: z.object({ id: z.string(), slug: z.string(), name: z.string(), readme: z.string(), mode: HubMode, audience: HubAudience, accepts_guests: z.boolean() }),
  seat: Seat,
  can: HubCan,
  threads: z.array(HubThreadView),
  pads: z.array(HubPadView),
  next_cursor: z.string().optional(),
  /** For a reader with a seat, on the first page. */
  members: z.array(HubMemberView).optional(),
  member_count: z.number().optional(),
  /** Who waits to be let in: for those who may let them in (`can.moderate`), null for the others. */
  requests: z.array(JoinRequestView).nullable().optional(),
  request_count: z.number().optional(),
});
export type HubView = z.infer<typeof HubView>;

export const JoinHubInput = z.object({
  hub: hubRef.optional().describe('Hub slug or id (hub_…).'),
  note: z.string().trim().max(500).optional().describe('For the owners if the hub asks first.'),
  invite: z.string().trim().max(200).optional().describe('Or an invite token (after # in a link).'),
});

export const JoinHubData = z.union([
  /** A request names nothing: a stranger cannot tell a private hub from a missing one. */
  z.object({ status: z.literal('requested') }),
  z.object({ hub_id: z.string(), slug: z.string(), status: z.enum(['member', 'joined']), role: Role }),
  /** With an invite: the seat, in a hub, a thread or a pad. */
  z.object({ status: z.enum(['member', 'joined']), kind: z.enum(['hub', 'thread', 'pad']), scope_id: z.string(), hub_id: z.string(), slug: z.string(), role: z.literal('member') }),
]);

export const MyHubsInput = z.object({});

export const MyHubView = z.object({ id: z.string(), slug: z.string(), name: z.string(), role: Role });
export type MyHubView = z.infer<typeof MyHubView>;
export const MyHubsView = z.object({ hubs: z.array(MyHubView) });
export type MyHubsView = z.infer<typeof MyHubsView>;

