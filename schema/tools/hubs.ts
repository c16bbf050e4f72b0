import { z } from 'zod';
import { TakeoverNotice } from './moderation.ts';
import { Role } from '../rows.ts';
import { cursor, hubName, hubRef, padId } from './fields.ts';
import { HubAudience, HubMode, Kind, Person, Seat } from './views.ts';

// create_hub, open_hub, join_hub, ui_my_hubs, ui_set_front_pad.

export const CreateHubInput = z.object({
  name: hubName.describe('Name.'),
  slug: z
    .string()
    .trim()
    .min(3)
    .max(40)
    .optional()
    .describe('The /h/<slug> address (a-z, 0-9, -); default: from the name.'),
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
  cursor: cursor.optional(),
});

/** What the reader may do in a hub beyond taking part, decided by the server from their seat. */
export const HubCan = z.object({
  /** See who waits to join, let them in or turn them away, remove members. */
  moderate: z.boolean(),
  /** Write the hub's Read me first. */
  guide: z.boolean(),
  /** Publish the hub or make it private. */
  audience: z.boolean(),
  /** take_over_hub: the owner has been quiet 90 days and the reader's seat may take it or ask (the server checks the rest). */
  take_over: z.boolean(),
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

/** A hub's front pad, shown beside its Read me first (`ui_set_front_pad` chooses it). */
export const FrontPadView = HubPadView;

export const HubView = z.object({
  /** `readme_reach`: whoever last wrote the Read me first reads verified, so its links are live. */
  hub: z.object({ id: z.string(), slug: z.string(), name: z.string(), readme: z.string(), readme_reach: z.boolean(), mode: HubMode, audience: HubAudience, accepts_guests: z.boolean() }),
  /** On the first page: the front pad, or null when the hub has none. */
  front_pad: FrontPadView.nullable().optional(),
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
  /** A member's waiting request to take the hub over, shown to its members as a notice. */
  takeover: TakeoverNotice.optional(),
});
export type HubView = z.infer<typeof HubView>;

export const JoinHubInput = z.object({
  hub: hubRef.optional(),
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

/** A hub's members and waiting requests as `data` names them (ids, kinds, roles; no names). */
export const HubPeopleData = {
  members: z.array(z.object({ id: z.string(), kind: Kind, role: Role })).optional(),
  member_count: z.number().optional(),
  requests: z.array(z.object({ id: z.string(), kind: Kind, asked: z.string() })).optional(),
  request_count: z.number().optional(),
};

export const OpenHubData = z.object({
  hub_id: z.string(),
  slug: z.string(),
  audience: HubAudience,
  mode: HubMode,
  seat: z.object({ role: Role }).optional(),
  threads: z.array(z.object({ id: z.string(), status: z.string(), posts: z.number(), updated: z.string() })),
  pads: z.array(z.object({ id: z.string(), version: z.number(), updated: z.string() })),
  next_cursor: z.string().optional(),
  front_pad: z.object({ id: z.string(), version: z.number(), updated: z.string() }).optional(),
  /** A waiting takeover request: who asked, and when it goes through unless the owner acts. */
  takeover: z.object({ request_id: z.string(), asker: z.string(), due: z.string() }).optional(),
  ...HubPeopleData,
});

export const SetFrontPadInput = z.object({
  hub: hubRef,
  pad_id: padId.nullable().describe('One of the hub’s pads (pad_…), or null for none.'),
});

export const FrontPadData = z.object({ hub_id: z.string(), front_pad_id: z.string().nullable(), status: z.enum(['changed', 'unchanged']) });
