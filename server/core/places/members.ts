import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { Role, type HubRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { forbidden, notFound } from '../../../schema/errors.ts';
import { participantIdOf } from '../identity/handles.ts';
import { allows, type Seat } from '../kernel/rights.ts';
import { deliver } from '../inbox/inbox.ts';
import { seatInHub } from './seats.ts';
import type { MemberCan } from '../../../schema/tools/hubs.ts';
import type { ModerateAction } from '../../../schema/tools/members.ts';
import { ownersAndHelpers } from './deciders.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

/** Members and waiting requests shown at once by open_hub and the hub page; the rest are counted. */
export const PEOPLE_SHOWN = 100;

const Person = z.object({ id: z.string(), name: z.string(), handle: z.string(), kind: z.enum(['human', 'agent']) });
export type Person = z.infer<typeof Person>;

const MemberRow = Person.extend({ role: Role, joined_at: z.number(), total: z.number() });
const RequestRow = Person.extend({ note: z.string(), created_at: z.number(), total: z.number() });
/** A member, with what the reader may do to them. */
export type Member = Omit<z.infer<typeof MemberRow>, 'total'> & { can: MemberCan };
export type JoinRequest = Omit<z.infer<typeof RequestRow>, 'total'>;

/**
 * Who is in a hub, for a reader with a seat, and for its owner and helpers who is waiting to be let
 * in. Owner first, then helpers, then members, each by when they joined; requests oldest first.
 */
export type HubPeople = {
  members: readonly Member[];
  memberCount: number;
  /** Only for those who may let people in. */
  requests: { waiting: readonly JoinRequest[]; count: number } | null;
};

/**
 * The hub's members shown (`PEOPLE_SHOWN`) and, for those who may let people in, its waiting requests,
 * as SQL columns `members` and `requests` (JSON arrays, each row with the `total`), for a reader with
 * a seat: open_hub reads them in the same statement as the rest of the hub.
 */
export function peopleColumns(hubId: string, seat: Seat) {
  const requests = allows(seat, 'moderate')
    ? sql.fragment`(SELECT coalesce(json_agg(r ORDER BY r.n), '[]'::json) FROM (
        SELECT p.id, p.name, p.handle, p.kind, r.note, floor(extract(epoch FROM r.created_at) * 1000) AS created_at, count(*) OVER () AS total,
               row_number() OVER (ORDER BY r.created_at, p.id) AS n
        FROM join_requests r JOIN participants p ON p.id = r.participant_id
        WHERE r.hub_id = ${hubId}
        ORDER BY n
        LIMIT ${PEOPLE_SHOWN}) r)`
    : sql.fragment`NULL::json`;
  return sql.fragment`(SELECT coalesce(json_agg(m ORDER BY m.n), '[]'::json) FROM (
        SELECT p.id, p.name, p.handle, p.kind, m.role, floor(extract(epoch FROM m.joined_at) * 1000) AS joined_at, count(*) OVER () AS total,
               row_number() OVER (ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'helper' THEN 1 ELSE 2 END, m.joined_at, p.id) AS n
        FROM hub_members m JOIN participants p ON p.id = m.participant_id
        WHERE m.hub_id = ${hubId}
        ORDER BY n
        LIMIT ${PEOPLE_SHOWN}) m) AS members,
      ${requests} AS requests`;
}

/** What `peopleColumns` read, checked. */
export const PeopleColumns = z.object({ members: z.array(MemberRow.extend({ n: z.number() })), requests: z.array(RequestRow.extend({ n: z.number() })).nullable() });

/** Who is in the hub, from what `peopleColumns` read, with what the reader may do to each. */
export function hubPeople(seat: Seat, members: z.infer<typeof PeopleColumns>['members'], requests: z.infer<typeof PeopleColumns>['requests']): HubPeople {
  return {
    members: members.map(({ total: _, n: __, ...member }) => ({ ...member, can: memberCan(seat, member.role) })),
    memberCount: members[0]?.total ?? 0,
    requests: requests && { waiting: requests.map(({ total: _, n: __, ...request }) => request), count: requests[0]?.total ?? 0 },
  };
}

/**
 * A new request to join: an item for each owner and helper of the hub (who let in or turn away, from
 * the item or the hub's members), carrying the asker's note.
 */
export async function noticeJoinRequest(tx: CommonQueryMethods, hub: HubRow, askerId: string, note: string | undefined): Promise<void> {
  const deciders = await ownersAndHelpers(tx, hub.id);
  await deliver(tx, deciders.map((to) => ({ to, kind: 'join_request' as const, from: askerId, hub_id: hub.id, summary: note?.trim() ?? '' })));
}

// Moderation (SPEC part 4 `moderate`): the actions (schema/tools/members.ts) that work now.

/**
 * What a seat may do to someone of the hub (`role` null: seated only in some of its threads or pads),
 * as `moderate` decides it: nobody acts on the owner; the owner and helpers remove members, and only
 * the owner, who makes helpers, removes one or names roles.
 */
export function memberCan(seat: Seat, role: Role | null): MemberCan {
  const namesRoles = allows(seat, 'setRoles');
  return {
    remove: role !== 'owner' && allows(seat, 'moderate') && (role !== 'helper' || namesRoles),
    name_helper: namesRoles && role === 'member',
    name_member: namesRoles && role === 'helper',
  };
}

export type Moderation = {
  hub: HubRow;
  action: ModerateAction;
  person: Person;
  /** Their seat after the action: null once turned away or removed. */
  role: Role | null;
  /** False when the action found it already so (naming a helper who is one). */
  changed: boolean;
};

/** Who is named: an id (`agt_…`, `hum_…`) or a handle (`@name`, an earlier one too), compared without case. */
const named = (ref: string) => sql.fragment`p.id = ${participantIdOf(ref)}`;

const NO_REQUEST = 'Nobody by that id or handle is waiting to join this hub. open_hub lists the waiting requests with their ids.';
const NO_MEMBER = 'Nobody by that id or handle is a member of this hub. open_hub lists the members with their ids and roles.';

/**
 * One moderation action by an owner or helper (the policy checked the seat, and that only the owner
 * names helpers). Each action changes one row and reports what it found; nobody removes the owner,
 * and helpers remove members only, since only the owner makes (and so unmakes) helpers.
 */
export async function moderate(
  tx: CommonQueryMethods,
  { hub, seat }: { hub: HubRow; seat: Seat },
  input: { action: ModerateAction; who: string },
  /** Who moderates: the one a person let in hears it from. */
  by?: string,
): Promise<Moderation> {
  const { action } = input;
  if (action === 'let_in' || action === 'turn_away') {
    const person = await tx.maybeOne(sql.type(Person)`
      DELETE FROM join_requests r USING participants p
      WHERE r.hub_id = ${hub.id} AND p.id = r.participant_id AND ${named(input.who)}
      RETURNING p.id, p.name, p.handle, p.kind`);
    if (!person) throw notFound(NO_REQUEST);
    if (action === 'turn_away') {
      // No hub id on it: the asker cannot read the hub, and the item names only the slug they asked for.
      if (by) await deliver(tx, [{ to: person.id, kind: 'turned_away', from: by, summary: hub.slug }]);
      return { hub, action, person, role: null, changed: true };
    }
    await seatInHub(tx, hub, person.id);
    if (by) await deliver(tx, [{ to: person.id, kind: 'added', from: by, hub_id: hub.id, summary: hub.name }]);
    return { hub, action, person, role: 'member', changed: true };
  }

  // Removing also finds those seated only in some of the hub's threads or pads (by an invite).
  const member = await tx.maybeOne(sql.type(Person.extend({ role: Role.nullable() }))`
    SELECT p.id, p.name, p.handle, p.kind, m.role
    FROM participants p LEFT JOIN hub_members m ON m.hub_id = ${hub.id} AND m.participant_id = p.id
    WHERE ${named(input.who)} AND (m.role IS NOT NULL OR (${action === 'remove'}
      AND EXISTS (SELECT 1 FROM item_members i WHERE i.hub_id = ${hub.id} AND i.participant_id = p.id)))`);
  if (!member) throw notFound(NO_MEMBER);
  const { role: was, ...person } = member;
  if (was === 'owner') {
    throw forbidden(action === 'remove' ? 'Nobody removes the owner of a hub.' : "The owner's role does not change; name_helper and name_member are for members and helpers.");
  }
  if (action === 'remove') {
    if (!memberCan(seat, was).remove) throw forbidden('Only the owner removes a helper; helpers remove members.');
    await tx.query(sql.unsafe`DELETE FROM hub_members WHERE hub_id = ${hub.id} AND participant_id = ${person.id}`);
    await tx.query(sql.unsafe`DELETE FROM item_members WHERE hub_id = ${hub.id} AND participant_id = ${person.id}`);
    afterCommit(tx, { reads: 'hub_members' }, { reads: 'item_members' });
    return { hub, action, person, role: null, changed: true };
  }
  const role = action === 'name_helper' ? 'helper' : 'member';
  if (role === was) return { hub, action, person, role, changed: false };
  await tx.query(sql.unsafe`UPDATE hub_members SET role = ${role} WHERE hub_id = ${hub.id} AND participant_id = ${person.id}`);
  afterCommit(tx, { reads: 'hub_members' });
  return { hub, action, person, role, changed: true };
}

// The hub's guide and audience.

export type GuideChange = { hub: HubRow; characters: number; changed: boolean };

/**
 * Read me first, shown by open_hub, the Markdown hub view and the hub page; empty clears it. Its
 * writer is kept: the guide's links show as their reach allows, as a post's do.
 */
export async function setHubGuide(tx: CommonQueryMethods, actor: Actor, hub: HubRow, text: string): Promise<GuideChange> {
  if (text === hub.readme) return { hub, characters: text.length, changed: false };
  await tx.query(sql.unsafe`UPDATE hubs SET readme = ${text}, readme_by = ${text ? actor.id : null}, updated_at = now() WHERE id = ${hub.id}`);
  afterCommit(tx, { reads: 'hubs' });
  return { hub: { ...hub, readme: text }, characters: text.length, changed: true };
}

const Reach = z.object({ threads: z.number(), pads: z.number(), posts: z.number(), members: z.number() });
export type Reach = z.infer<typeof Reach>;

export type AudienceChange = {
  hub: HubRow;
  audience: HubRow['audience'];
  /** `preview`: nothing changed, `confirm: true` does it; `unchanged`: the hub already was so. */
  status: 'preview' | 'published' | 'made_private' | 'unchanged';
  /** Whether the hub takes guests now, and whether this call changed it. */
  accepts_guests: boolean;
  guests_changed: boolean;
  /** What the change shows to everyone (publishing) or takes back to members (making private). */
  reach: Reach;
};

/**
 * Publishing or making private, after a preview: without `confirm` it counts what would change
 * hands and writes nothing. Publishing needs public hubs on for the server (SVC_PUBLIC_THREADS=1).
 * `accepts_guests` says whether the hub, when public, takes guests (jump-ins, keyless start_thread):
 * set at once when the audience stays, with the audience (after its preview) when that changes.
 */
export async function setHubVisibility(
  core: Core,
  tx: CommonQueryMethods,
  hub: HubRow,
  input: { audience: HubRow['audience']; confirm?: boolean | undefined; accepts_guests?: boolean | undefined },
): Promise<AudienceChange> {
  if (input.audience === 'public' && !core.config.publicThreads) {
    throw forbidden(
      'Public hubs are turned off on this server (SVC_PUBLIC_THREADS is not set), so every hub stays private. People join by asking with join_hub and being let in with moderate action let_in.',
    );
  }
  const reach = await tx.one(sql.type(Reach)`
    SELECT
      (SELECT count(*) FROM threads WHERE hub_id = ${hub.id}) AS threads,
      (SELECT count(*) FROM pads WHERE hub_id = ${hub.id} AND deleted_at IS NULL) AS pads,
      (SELECT coalesce(sum(post_count), 0)::int8 FROM threads WHERE hub_id = ${hub.id}) AS posts,
      (SELECT count(*) FROM hub_members WHERE hub_id = ${hub.id}) AS members`);
  const moving = hub.audience !== input.audience;
  if (moving && !input.confirm) return { hub, audience: hub.audience, status: 'preview', reach, accepts_guests: hub.accepts_guests, guests_changed: false };
  const guests = input.accepts_guests ?? hub.accepts_guests;
  const guestsChanged = guests !== hub.accepts_guests;
  if (!moving && !guestsChanged) return { hub, audience: hub.audience, status: 'unchanged', reach, accepts_guests: guests, guests_changed: false };
  await tx.query(sql.unsafe`UPDATE hubs SET audience = ${input.audience}, accepts_guests = ${guests}, updated_at = now() WHERE id = ${hub.id}`);
  afterCommit(tx, { reads: 'hubs' });
  const status = !moving ? 'unchanged' : input.audience === 'public' ? 'published' : 'made_private';
  return { hub: { ...hub, audience: input.audience, accepts_guests: guests }, audience: input.audience, status, reach, accepts_guests: guests, guests_changed: guestsChanged };
}
