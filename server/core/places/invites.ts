import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { HubRow } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError } from '../../../schema/errors.ts';
import { insertGuest, requireGuestsOn } from '../identity/guests.ts';
import { insertAgent, issueCredential, SESSION_TTL } from '../identity/credentials.ts';
import type { Seat } from '../kernel/rights.ts';
import { hashSecret, newId, newSecret } from '../kernel/secrets.ts';
import { seatInHub, seatInItem } from './seats.ts';
import { INVITE_DEFAULT_DAYS } from '../../../schema/tools/invites.ts';

/**
 * Invite links (SPEC parts 2 and 4): `<base>/invite#svci_…`, for a hub, a thread or a pad, made by the
 * hub's owner and helpers. The token is shown once and lives only in the link's fragment; only its
 * SHA-256 is kept. A hub invite gives a member's seat in the hub; a thread or pad invite gives a
 * member's seat in that item alone (`item_members`; a thread's seat covers the pads beside it).
 */
const DAY = 24 * 3_600_000;

export type InviteKind = 'hub' | 'thread' | 'pad';

/** What the `invite` policy found: the place, its hub, its title and the caller's seat. */
export type InviteTarget = { kind: InviteKind; scopeId: string; title: string; hub: HubRow; seat: Seat };

/** The one answer to every token that lets nobody in: unknown, used up, expired or withdrawn alike. */
export const badInvite = () =>
  new AppError('not_found', 'This invite is not valid: it is unknown, used up, expired or withdrawn. Ask whoever sent it for a new link.');

export type MadeInvite = {
  invite_id: string;
  url: string;
  kind: InviteKind;
  scope_id: string;
  title: string;
  hub: { id: string; slug: string };
  uses: number;
  expires_at: string;
};

export async function createInvite(
  core: Core,
  tx: CommonQueryMethods,
  actor: Actor,
  target: InviteTarget,
  input: { uses?: number | undefined; days?: number | undefined },
): Promise<MadeInvite> {
  const token = newSecret('svci_');
  const id = newId('inv_');
  const uses = input.uses ?? 1;
  const expiresAt = new Date(Date.now() + (input.days ?? INVITE_DEFAULT_DAYS) * DAY).toISOString();
  await tx.query(sql.unsafe`
    INSERT INTO invites (id, secret_hash, hub_id, kind, scope_id, created_by, uses, expires_at)
    VALUES (${id}, ${hashSecret(token)}, ${target.hub.id}, ${target.kind}, ${target.scopeId}, ${actor.id}, ${uses}, ${expiresAt})`);
  return {
    invite_id: id,
    url: `${core.config.baseUrl}/invite#${token}`,
    kind: target.kind,
    scope_id: target.scopeId,
    title: target.title,
    hub: { id: target.hub.id, slug: target.hub.slug },
    uses,
    expires_at: expiresAt,
  };
}

const InviteRow = z.object({
  id: z.string(),
  hub_id: z.string(),
  hub_slug: z.string(),
  kind: z.enum(['hub', 'thread', 'pad']),
  scope_id: z.string(),
});
type LiveInvite = z.infer<typeof InviteRow>;

const live = sql.fragment`i.used < i.uses AND i.expires_at > now() AND i.revoked_at IS NULL`;

/** The web path of what an invite opens. */
export const invitePath = (invite: Pick<LiveInvite, 'kind' | 'scope_id' | 'hub_slug'>) =>
  invite.kind === 'hub' ? `/h/${encodeURIComponent(invite.hub_slug)}` : `/${invite.kind === 'thread' ? 't' : 'p'}/${encodeURIComponent(invite.scope_id)}`;

const hashOf = (token: string) => {
  if (!token.startsWith('svci_')) throw badInvite();
  return hashSecret(token);
};

/**
 * Takes one use of a live invite. One guarded UPDATE: concurrent joins wait on the row and see the
 * count the others left, so no more than `uses` ever pass, on any store and any instance.
 */
async function takeUse(tx: CommonQueryMethods, token: string): Promise<LiveInvite> {
  const row = await tx.maybeOne(sql.type(InviteRow)`
    UPDATE invites i SET used = i.used + 1 FROM hubs h
    WHERE i.secret_hash = ${hashOf(token)} AND h.id = i.hub_id AND ${live}
    RETURNING i.id, i.hub_id, h.slug AS hub_slug, i.kind, i.scope_id`);
  if (!row) throw badInvite();
  return row;
}

/** The seat an invite gives: a member of the hub, or of the one thread or pad. */
async function seatByInvite(tx: CommonQueryMethods, participantId: string, invite: LiveInvite) {
  if (invite.kind === 'hub') {
    await seatInHub(tx, { id: invite.hub_id, slug: invite.hub_slug }, participantId);
    await tx.query(sql.unsafe`DELETE FROM join_requests WHERE hub_id = ${invite.hub_id} AND participant_id = ${participantId}`);
    return;
  }
  await seatInItem(tx, { id: invite.scope_id, hubId: invite.hub_id, inviteId: invite.id }, participantId);
}

export type Joined = { kind: InviteKind; scope_id: string; hub: { id: string; slug: string }; path: string };

const joinedOf = (invite: LiveInvite): Joined => ({
  kind: invite.kind,
  scope_id: invite.scope_id,
  hub: { id: invite.hub_id, slug: invite.hub_slug },
  path: invitePath(invite),
});

/** The title of what an invite `i` opens (its hub `h`), or null when that is gone. */
const titleOf = sql.fragment`CASE i.kind WHEN 'hub' THEN h.name
  WHEN 'thread' THEN (SELECT title FROM threads WHERE id = i.scope_id)
  ELSE (SELECT title FROM pads WHERE id = i.scope_id) END`;

const PreviewRow = z.object({ kind: z.enum(['hub', 'thread', 'pad']), title: z.string().nullable(), invited_by: z.string() });

export type InvitePreview = { title: string; kind: InviteKind; role: 'member'; invitedBy: string; guestJoin: boolean };

/** What an invite is for, without taking a use: for the `/invite` page before anyone joins. */
export async function previewInvite(core: Core, token: string): Promise<InvitePreview> {
  const row = await core.db.pool.maybeOne(sql.type(PreviewRow)`
    SELECT i.kind, p.name AS invited_by, ${titleOf} AS title
    FROM invites i JOIN hubs h ON h.id = i.hub_id JOIN participants p ON p.id = i.created_by
    WHERE i.secret_hash = ${hashOf(token)} AND ${live}`);
  if (!row || row.title === null) throw badInvite();
  return { title: row.title, kind: row.kind, role: 'member', invitedBy: row.invited_by, guestJoin: core.config.guestAgents };
}

/** Registering with `invite`: a new agent and its seat, in one transaction; a bad token makes nothing. */
export async function registerWithInvite(core: Core, input: { token: string; name: string; runsOn?: string | undefined }) {
  return core.db.write(async (tx) => {
    const invite = await takeUse(tx, input.token);
    const created = await insertAgent(tx, { name: input.name, runsOn: input.runsOn });
    await seatByInvite(tx, created.agent.id, invite);
    return { created, joined: joinedOf(invite) };
  });
}

/** `POST /api/invite/join-guest`: a guest person with the invite's seat and a 30-day session. */
export async function joinAsGuest(core: Core, input: { token: string; name: string }) {
  requireGuestsOn(core);
  return core.db.write(async (tx) => {
    const invite = await takeUse(tx, input.token);
    const guest = await insertGuest(tx, input.name);
    await seatByInvite(tx, guest.id, invite);
    const session = await issueCredential(tx, guest.id, 'session', 'guest', SESSION_TTL);
    return { participant: guest, session: session.secret, joined: joinedOf(invite) };
  });
}

export type InviteJoin = Joined & { status: 'joined' | 'member' };

/**
 * Joins by invite in the caller's transaction: a signed-in person accepting one (settings
 * `accept-invite`), or `join_hub` with `invite` for an agent on its key. Someone who already has the
 * seat takes no use of it; the token must still be good, so a used-up link answers as every bad one does.
 */
export async function joinWithInvite(tx: DatabaseTransactionConnection, actor: Actor, token: string): Promise<InviteJoin> {
  const found = await tx.maybeOne(sql.type(InviteRow.extend({ seated: z.boolean() }))`
    SELECT i.id, i.hub_id, h.slug AS hub_slug, i.kind, i.scope_id,
           EXISTS (SELECT 1 FROM hub_members WHERE hub_id = i.hub_id AND participant_id = ${actor.id})
           OR (i.kind <> 'hub' AND EXISTS (SELECT 1 FROM item_members WHERE item_id = i.scope_id AND participant_id = ${actor.id})) AS seated
    FROM invites i JOIN hubs h ON h.id = i.hub_id
    WHERE i.secret_hash = ${hashOf(token)} AND ${live}`);
  if (!found) throw badInvite();
  const { seated, ...invite } = found;
  if (seated) return { ...joinedOf(invite), status: 'member' };
  await seatByInvite(tx, actor.id, await takeUse(tx, token));
  return { ...joinedOf(invite), status: 'joined' };
}

const DoneRow = z.object({ done: z.boolean() });

/** Withdraws an invite: its maker, or the hub's owner and helpers. Links already used keep their seats. */
export async function revokeInvite(core: Core, actor: Actor, inviteId: string): Promise<void> {
  const done = await core.db.write((tx) =>
    tx.maybeOneFirst(sql.type(DoneRow)`
      UPDATE invites i SET revoked_at = now()
      WHERE i.id = ${inviteId} AND i.revoked_at IS NULL
        AND (i.created_by = ${actor.id} OR EXISTS (
          SELECT 1 FROM hub_members m WHERE m.hub_id = i.hub_id AND m.participant_id = ${actor.id} AND m.role IN ('owner', 'helper')))
      RETURNING true AS done`),
  );
  if (!done) throw new AppError('not_found', 'No such invite of yours, or it was already withdrawn.');
}

const MyInviteRow = z.object({
  id: z.string(),
  kind: z.enum(['hub', 'thread', 'pad']),
  scope_id: z.string(),
  hub_slug: z.string(),
  title: z.string().nullable(),
  uses: z.number(),
  used: z.number(),
  expires_at: z.number(),
  revoked_at: z.number().nullable(),
  created_at: z.number(),
});
export type MyInvite = z.infer<typeof MyInviteRow>;

/** The invites a person made, newest first (for Settings). */
export async function invitesMadeBy(conn: CommonQueryMethods, actor: Actor): Promise<readonly MyInvite[]> {
  return conn.any(sql.type(MyInviteRow)`
    SELECT i.id, i.kind, i.scope_id, h.slug AS hub_slug, ${titleOf} AS title,
           i.uses, i.used, i.expires_at, i.revoked_at, i.created_at
    FROM invites i JOIN hubs h ON h.id = i.hub_id
    WHERE i.created_by = ${actor.id} ORDER BY i.created_at DESC LIMIT 200`);
}

const PlaceInviteRow = z.object({
  id: z.string(),
  uses: z.number(),
  used: z.number(),
  expires_at: z.number(),
  created_at: z.number(),
  made_by: z.string(),
});
export type PlaceInvite = z.infer<typeof PlaceInviteRow>;

/**
 * The live invites into one hub, thread or pad, whoever of its owners and helpers made them, newest
 * first (the Share panel of its page). The links themselves were shown once; these are their ids.
 */
export async function liveInvitesInto(conn: CommonQueryMethods, target: Pick<InviteTarget, 'kind' | 'scopeId'>): Promise<readonly PlaceInvite[]> {
  return conn.any(sql.type(PlaceInviteRow)`
    SELECT i.id, i.uses, i.used, i.expires_at, i.created_at, p.name AS made_by
    FROM invites i JOIN participants p ON p.id = i.created_by
    WHERE i.kind = ${target.kind} AND i.scope_id = ${target.scopeId} AND ${live}
    ORDER BY i.created_at DESC LIMIT 100`);
}
