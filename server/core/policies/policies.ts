import { sql } from 'slonik';
import { z } from 'zod';
import type { HubRow } from '../../../schema/rows.ts';
import { AppError, forbidden, invalid, notFound } from '../../../schema/errors.ts';
import { findHub, readableHub, seatIn } from '../places/hubAccess.ts';
import { allows, requireWriter, type Right, type Seat } from '../kernel/rights.ts';
import { findEdit } from '../../../sync/versions.ts';
import type { EditablePad } from '../kernel/editors.ts';
import type { UndoTarget } from '../pads/padEdits.ts';
import { editablePad, readablePad, type PadPlace } from '../pads/pads.ts';
import { changeablePad, type PadChangeTarget } from '../checked/padChange.ts';
import { readableThread } from '../threads/threadAccess.ts';
import { grantsHubs } from '../kernel/grants.ts';
import { mayPostAsGuest, refuseGuest } from '../identity/guests.ts';
import { requireModerator } from '../identity/suspensions.ts';
import { badInvite, type InviteTarget } from '../places/invites.ts';
import { type Policy, type HubTarget, type ThreadTarget, type PostTarget } from '../kernel/policy.ts';
import { type Watched } from '../kernel/policy.ts';

/**
 * Anyone with a credential (making a hub of one's own), but a sub-agent key: it works only in the
 * threads and pads it was made for.
 */
export const anyone: Policy<null> = async ({ actor }) => {
  if (!grantsHubs(actor)) throw forbidden('A sub-agent key works only in the threads and pads it was made for.');
  return null;
};

// Hubs

/** Making a hub: anyone with an account of their own; not a guest, nor a sub-agent key. */
export const makeHub: Policy<null> = async (scope) => {
  if (scope.actor.guest) throw forbidden(`Guests take part in the threads they joined; sign in at ${scope.core.config.baseUrl}/signin to make a hub.`);
  return anyone(scope);
};

export const readHub = (ref: string): Policy<HubTarget> => ({ core, conn, actor }) => readableHub(core, conn, ref, actor);

export const writeInHub = (ref: string): Policy<HubTarget> => async (scope) => {
  const target = await readHub(ref)(scope);
  requireWriter(target.seat, target.hub);
  return target;
};

/** A hub where the caller's seat carries `right`; a stranger to a private hub sees `not_found`. */
export const hubWith = (ref: string, right: Right, refusal: string): Policy<HubTarget> => async (scope) => {
  const target = await readHub(ref)(scope);
  if (!allows(target.seat, right)) throw forbidden(refusal, { your_role: target.seat ?? 'none' });
  return target;
};

/** Moderating: owner and helpers; naming helpers (and members again), the owner only. */
export const moderateHub = (ref: string, action: string): Policy<HubTarget> =>
  action === 'name_helper' || action === 'name_member'
    ? hubWith(ref, 'setRoles', 'Only the owner of this hub names helpers.')
    : hubWith(ref, 'moderate', 'Only the owner and helpers of this hub let people in, turn them away or remove them.');

/**
 * Joining: a private hub can be asked to let one in, so it is found by slug or id even unseen. A
 * missing hub is no refusal: to a stranger it answers as a private hub does (`hub` null there).
 */
export const joinHub = (ref: string): Policy<{ hub: HubRow | null; seat: Seat }> => async ({ conn, actor }) => {
  // A sub-agent key is told what a stranger to a missing hub is told, and nothing is asked.
  const hub = grantsHubs(actor) ? await findHub(conn, ref) : null;
  const seat = hub && (await seatIn(conn, hub.id, actor.id));
  // Guests take part where they jumped in or were invited (SPEC part 2); the same answer for every hub.
  if (actor.guest && !seat) throw forbidden('Guests take part in the threads they jumped into or were invited to. Sign in to join hubs.');
  return { hub, seat };
};

export type JoinTarget = { hub: HubRow | null; seat: Seat } | { invite: string };

/** `join_hub`: a hub by slug or id, or what an invite opens; exactly one of the two. */
export const joinTarget = (input: { hub?: string | undefined; invite?: string | undefined }): Policy<JoinTarget> => async (scope) => {
  if ((input.hub === undefined) === (input.invite === undefined)) {
    throw invalid('Give hub, or invite (the token after # in an invite link), not both.', {
      issues: [{ path: input.hub === undefined ? 'hub' : 'invite', message: 'Give exactly one of hub and invite.' }],
    });
  }
  if (input.invite === undefined) return joinHub(input.hub!)(scope);
  // A sub-agent key holds no seats of its own: an invite answers it as every bad one does.
  if (!grantsHubs(scope.actor)) throw badInvite();
  return { invite: input.invite };
};

// Threads

export const readThread = (id: string): Policy<ThreadTarget> => ({ core, conn, actor }) => readableThread(core, conn, id, actor);

/** Posting: members, and guests who jumped into a public thread that takes guests (or its hub). */
export const postInThread = (id: string): Policy<ThreadTarget> => async (scope) => {
  const target = await readThread(id)(scope);
  if (target.seat === null && (await mayPostAsGuest(scope.core, scope.conn, scope.actor, target))) return target;
  requireWriter(target.seat, target.hub);
  return target;
};

/** Opening a thread to guests, or closing it: the hub's owner and helpers. */
export const guestsOfThread = (id: string): Policy<ThreadTarget> => async (scope) => {
  const target = await readThread(id)(scope);
  if (!allows(target.seat, 'moderate')) throw forbidden('Only the owner and helpers of this hub open a thread to guests.', { your_role: target.seat ?? 'none' });
  return target;
};

// Invites

/** An invite link to a hub, a thread (`thr_…`) or a pad (`pad_…`): the hub's owner and helpers make them. */
export const inviteInto = (to: string): Policy<InviteTarget> => async (scope) => {
  let target: InviteTarget;
  if (to.startsWith('thr_')) {
    const { thread, hub, seat } = await readThread(to)(scope);
    target = { kind: 'thread', scopeId: thread.id, title: thread.title, hub, seat };
  } else if (to.startsWith('pad_')) {
    const { pad, hub, seat } = await readPad(to)(scope);
    target = { kind: 'pad', scopeId: pad.id, title: pad.title, hub, seat };
  } else {
    const { hub, seat } = await readHub(to)(scope);
    target = { kind: 'hub', scopeId: hub.id, title: hub.name, hub, seat };
  }
  if (!allows(target.seat, 'invite')) throw forbidden('Only the owner and helpers of this hub make invite links.', { your_role: target.seat ?? 'none' });
  return target;
};

// Posts

const PostRefRow = z.object({ id: z.string(), thread_id: z.string() });
const NO_POST = 'No such post, or it is private.';

/** A post in a thread the caller may read; a private post and a missing one answer alike. */
export const readPost = (id: string): Policy<PostTarget> => async (scope) => {
  const post = await scope.conn.maybeOne(sql.type(PostRefRow)`SELECT id, thread_id FROM posts WHERE id = ${id}`);
  if (!post) throw notFound(NO_POST);
  try {
    return { post, ...(await readThread(post.thread_id)(scope)) };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') throw notFound(NO_POST);
    throw error;
  }
};

/** Reacting: as posting, guests included where they may post. */
export const reactToPost = (id: string): Policy<PostTarget> => async (scope) => {
  const target = await readPost(id)(scope);
  if (target.seat === null && (await mayPostAsGuest(scope.core, scope.conn, scope.actor, target))) return target;
  requireWriter(target.seat, target.hub);
  return target;
};

/** Marking the answer: the hub's owner and helpers, and whoever started the thread. */
export const markAnswerOf = (id: string): Policy<PostTarget> => async (scope) => {
  const target = await reactToPost(id)(scope);
  if (!allows(target.seat, 'markAnyAnswer') && target.thread.started_by !== scope.actor.id) {
    throw forbidden('Only the hub owner, its helpers, or whoever started the thread can mark its answer.', {
      yourCapabilities: ['post', 'react'],
    });
  }
  return target;
};

// Pads

export const readPad = (id: string): Policy<Awaited<ReturnType<typeof readablePad>>> => ({ core, conn, actor }) => readablePad(core, conn, id, actor);

/** Making a pad: in a hub, or beside a thread, where the caller may write. */
export const placePad = (input: { hub?: string | undefined; thread_id?: string | undefined }): Policy<PadPlace> => async (scope) => {
  if ((input.hub === undefined) === (input.thread_id === undefined)) {
    throw invalid('Give either hub or thread_id: the pad lives in that hub, or beside that thread.', {
      issues: [{ path: input.hub === undefined ? 'hub' : 'thread_id', message: 'Give exactly one of hub and thread_id.' }],
    });
  }
  if (input.thread_id !== undefined) {
    const { hub, seat, thread } = await postInThread(input.thread_id)(scope);
    return { hub, seat, threadId: thread.id };
  }
  return { ...(await writeInHub(input.hub!)(scope)), threadId: null };
};

/** Editing directly: owners and helpers anywhere, members in Open hubs; a grant is remembered briefly. */
export const editPad = (id: string): Policy<EditablePad> => ({ core, conn, actor }) => editablePad(core, conn, id, actor);

/** edit_pad: editing directly where the seat may, else (or with `propose`) suggesting; a seat that may write either way. */
export const changePad = (id: string, propose: boolean): Policy<PadChangeTarget> => ({ core, conn, actor }) => changeablePad(core, conn, id, actor, propose);

/** Undoing an edit: members their own, owners and helpers anyone's, where they may edit the pad. */
export const undoPadEdit = (editId: string): Policy<UndoTarget> => async ({ core, conn, actor }) => {
  const edit = await findEdit(conn, editId);
  if (!edit) throw notFound('No such edit.');
  const target = await editablePad(core, conn, edit.pad_id, actor);
  if (edit.actor_id !== actor.id && !allows(target.seat, 'moderate')) {
    throw forbidden('Members undo their own edits; owners and helpers undo anyone’s.', { yourCapabilities: ['edit_pad'] });
  }
  return { ...target, edit: { id: editId, version: edit.version, changed: edit.changed } };
};

/** Watching needs what reading needs. */
export const watch = (input: { pad_id?: string | undefined; thread_id?: string | undefined }): Policy<Watched> => async (scope) => {
  if ((input.pad_id === undefined) === (input.thread_id === undefined)) {
    throw invalid('Give either pad_id or thread_id.', { issues: [{ path: 'pad_id', message: 'Give exactly one of pad_id and thread_id.' }] });
  }
  if (input.pad_id !== undefined) return { kind: 'pad', id: (await readPad(input.pad_id)(scope)).pad.id };
  return { kind: 'thread', id: (await readThread(input.thread_id!)(scope)).thread.id };
};

// The settings operations: the pipeline serves them to a web session alone, on the person's own account

/** What the person does to their own account, agents and links: the session is all it needs. */
export const ownAccount: Policy<null> = async () => null;

/** The platform moderators' settings operations (`suspend`, `guest-pause`): a person the configuration names. */
export const platformModerator: Policy<null> = async ({ core, conn, actor }) => {
  await requireModerator(core, conn, actor);
  return null;
};

/** Bringing or linking an agent needs an account: a guest signs in first (SPEC part 2 "Guest people"). */
export const accountHolder =
  (what: string): Policy<null> =>
  async ({ actor }) => {
    refuseGuest(actor, what);
    return null;
  };
