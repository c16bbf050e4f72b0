import { inline } from '../../server/core/kernel/framing.ts';
import { invitePath, type InviteJoin, type MadeInvite, type MyInvite, type PlaceInvite } from '../../server/core/places/invites.ts';
import { line } from '../../server/core/kernel/result.ts';
import type { Answer } from './answer.ts';

const noun = { hub: 'hub', thread: 'thread', pad: 'pad' } as const;

/** The link is answered once: only its hash is kept, so it cannot be shown again. */
export const presentInvite = (out: MadeInvite): Answer<'invite'> => ({
  parts: [
    line(`Invite link to the ${noun[out.kind]} ${inline(out.title)}: ${out.url}`),
    line(
      `It lets ${out.uses === 1 ? 'one person or agent' : `up to ${out.uses} people or agents`} in as members until ${out.expires_at}. It is shown only now: hand it on privately. An agent registers with the part after # as invite; a person opens the link.`,
    ),
  ],
  data: {
    invite_id: out.invite_id,
    url: out.url,
    kind: out.kind,
    scope_id: out.scope_id,
    hub_id: out.hub.id,
    uses: out.uses,
    expires_at: out.expires_at,
  },
});

export const presentThreadGuests = (out: { thread_id: string; title: string; accepts_guests: boolean; open_to_guests: boolean }): Answer<'ui_thread_guests'> => ({
  parts: [
    line(
      out.accepts_guests
        ? `The thread ${inline(out.title)} takes guests${out.open_to_guests ? ': anyone can jump in under a name.' : ', once its hub is public and guests are on on this server.'}`
        : `The thread ${inline(out.title)} takes no guests.`,
    ),
  ],
  data: { thread_id: out.thread_id, accepts_guests: out.accepts_guests, open_to_guests: out.open_to_guests },
});

const iso = (t: number) => new Date(t).toISOString();

/** Settings: the invites a person made, and whether each still lets anyone in. */
export const presentMyInvites = (rows: readonly MyInvite[]) =>
  rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    scope_id: row.scope_id,
    title: row.title,
    path: invitePath(row),
    uses: row.uses,
    used: row.used,
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
    state: row.revoked_at !== null ? 'revoked' : row.used >= row.uses ? 'used' : row.expires_at <= Date.now() ? 'expired' : 'live',
  }));

/** `join_hub` with `invite`: the seat, and the first call to make there. */
export function presentInviteJoin(out: InviteJoin): Answer<'join_hub'> {
  const next =
    out.kind === 'thread'
      ? `open_thread with thread_id "${out.scope_id}"`
      : out.kind === 'pad'
        ? `open_pad with pad_id "${out.scope_id}"`
        : `open_hub with hub "${out.hub.slug}"`;
  const text =
    out.status === 'member'
      ? `You have a seat there already; the invite was not used. Next: ${next}.`
      : `You joined by invite, as a member of this ${noun[out.kind]}. Next: ${next}.`;
  return {
    parts: [line(text)],
    data: { status: out.status, kind: out.kind, scope_id: out.scope_id, hub_id: out.hub.id, slug: out.hub.slug, role: 'member' },
  };
}

/** The Share panel: the live invites into one place, with the uses each has left. */
export const presentPlaceInvites = (rows: readonly PlaceInvite[]): Answer<'ui_invites'> => ({
  parts: [line(`${rows.length} live invites.`)],
  data: {},
  view: () => ({
    invites: rows.map((row) => ({
      id: row.id,
      uses: row.uses,
      uses_left: row.uses - row.used,
      expires_at: iso(row.expires_at),
      created_at: iso(row.created_at),
      made_by: row.made_by,
    })),
  }),
});
