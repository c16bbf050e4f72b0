import { inline } from '../../server/core/kernel/framing.ts';
import { GUIDE_LIMIT } from '../../schema/tools/members.ts';
import { type AudienceChange, type GuideChange, type HubPeople, type Moderation, type Person } from '../../server/core/places/members.ts';
import type { HubAgentsPause } from '../../server/core/limits/pauses.ts';
import type { LockChange } from '../../server/core/policies/locking.ts';
import { line, said, shared, type TextPart } from '../../server/core/kernel/result.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();
const who = (p: Person) => `${inline(p.name)}${p.kind === 'agent' ? ' (agent)' : ''} · ${inline(p.handle)} · ${p.id}`;
const count = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

/** open_hub's members (for a reader with a seat) and waiting requests (for its owner and helpers). */
export function peopleParts(people: HubPeople, slug: string): TextPart[] {
  const { members, memberCount, requests } = people;
  const parts = [line(`## Members (${memberCount})`), ...members.map((m) => line(`- ${who(m)} · ${m.role}`))];
  if (memberCount > members.length) parts.push(line(`(and ${memberCount - members.length} more)`));
  if (!requests) return parts;
  parts.push(line(`## Waiting to join (${requests.count})`));
  if (!requests.count) parts.push(line('Nobody is waiting.'));
  for (const r of requests.waiting) {
    parts.push(line(`- ${who(r)} · asked ${iso(r.created_at)}${r.note ? ' · their note:' : ''}`));
    if (r.note) parts.push(said(r.note));
  }
  if (requests.count > requests.waiting.length) parts.push(line(`(and ${requests.count - requests.waiting.length} more, oldest first)`));
  if (requests.count) parts.push(line(`Let one in: moderate with {"hub": "${slug}", "action": "let_in", "who": "<id>"}; action "turn_away" says no.`));
  return parts;
}

/** open_hub's members and requests as data, the lists shared: a kept page's answer is encoded once. */
export const peopleData = ({ members, memberCount, requests }: HubPeople) => ({
  members: shared(members.map((m) => ({ id: m.id, kind: m.kind, role: m.role }))),
  member_count: memberCount,
  ...(requests
    ? { requests: shared(requests.waiting.map((r) => ({ id: r.id, kind: r.kind, asked: iso(r.created_at) }))), request_count: requests.count }
    : {}),
});

export const peopleView = ({ members, memberCount, requests }: HubPeople) => ({
  members: members.map((m) => ({ id: m.id, name: m.name, handle: m.handle, kind: m.kind, role: m.role, can: m.can })),
  member_count: memberCount,
  requests: requests?.waiting.map((r) => ({ id: r.id, name: r.name, handle: r.handle, kind: r.kind, note: r.note, asked: iso(r.created_at) })) ?? null,
  request_count: requests?.count ?? 0,
});

export function presentModeration({ hub, action, person, role, changed }: Moderation): Answer<'moderate'> {
  const name = inline(person.name);
  const where = inline(hub.name);
  const text = {
    let_in: `Let ${name} (${person.id}) into ${where} as a member.`,
    turn_away: `Turned away ${name}'s (${person.id}) request to join ${where}.`,
    remove: `Removed ${name} (${person.id}) from ${where}: their seat is gone, and their open pads close within seconds.`,
    name_helper: `${name} (${person.id}) is now a helper of ${where}: they may let people in, remove members and write the Read me first.`,
    name_member: `${name} (${person.id}) is a member of ${where} again, no longer a helper.`,
  }[action];
  return {
    parts: [line(changed ? text : `${name} (${person.id}) already is a ${role} of ${where}; nothing changed.`)],
    data: { hub_id: hub.id, slug: hub.slug, action, participant_id: person.id, ...(role ? { role } : {}), changed },
  };
}

/** moderate lock and unlock. */
export function presentLock(out: LockChange): Answer<'moderate'> {
  const text = out.locked
    ? `${out.item_id} is locked${out.changed ? '' : ' already'}: it takes no writes until unlocked (moderate action unlock); reading goes on.`
    : `${out.item_id} is ${out.changed ? 'unlocked' : 'not locked'}: it takes writes${out.changed ? ' again' : ''}.`;
  return { parts: [line(text)], data: { item_id: out.item_id, kind: out.kind, action: out.action, locked: out.locked, locked_by: out.locked_by, changed: out.changed } };
}

export function presentGuide({ hub, characters, changed }: GuideChange): Answer<'set_hub_guide'> {
  const text = !changed
    ? `The Read me first of ${inline(hub.name)} already says that; nothing changed.`
    : characters
      ? `Saved the Read me first of ${inline(hub.name)} (${characters.toLocaleString('en-US')} of ${GUIDE_LIMIT.toLocaleString('en-US')} characters): open_hub and /h/${hub.slug} show it first.`
      : `Cleared the Read me first of ${inline(hub.name)}.`;
  return { parts: [line(text)], data: { hub_id: hub.id, slug: hub.slug, characters, changed } };
}

export function presentVisibility({ hub, audience, status, reach, accepts_guests: guests, guests_changed: guestsChanged }: AudienceChange): Answer<'set_hub_visibility'> {
  const where = inline(hub.name);
  const what = `${count(reach.threads, 'thread')} (${count(reach.posts, 'post')}), ${count(reach.pads, 'pad')}, its Read me first and the names of its ${count(reach.members, 'member')}`;
  const text = {
    preview:
      audience === 'private'
        ? `Preview, nothing changed: publishing ${where} lets anyone read its ${what}. To publish, call set_hub_visibility again with "confirm": true.`
        : `Preview, nothing changed: making ${where} private takes its ${what} back from everyone but its members. To do it, call set_hub_visibility again with "confirm": true.`,
    published: `${where} is public now: anyone can read its ${what} at /h/${hub.slug}, and join_hub joins it at once.`,
    made_private: `${where} is private now: only its ${count(reach.members, 'member')} read it; others ask with join_hub.`,
    unchanged: guestsChanged ? `${where} stays ${audience}.` : `${where} already is ${audience}; nothing changed.`,
  }[status];
  const guestLine = guestsChanged
    ? guests
      ? `It takes guests now: where guests are on, a newcomer with no key may start a thread in it (start_thread with no key) or jump in under a name${audience === 'public' ? '' : ', once it is public'}.`
      : 'It takes no guests now: newcomers register or are let in first.'
    : null;
  return {
    parts: [line(text), ...(guestLine ? [line(guestLine)] : [])],
    data: { hub_id: hub.id, slug: hub.slug, audience, status, ...reach, accepts_guests: guests },
  };
}

/** moderate pause_agents, unpause_agents. */
export function presentAgentsPause(out: HubAgentsPause): Answer<'moderate'> {
  const slug = out.hub.slug;
  const text = out.paused
    ? `${out.changed ? 'Paused' : 'Already paused:'} the agents of ${slug}: their writes there are refused as locked, but for the agents of the owner and helpers. Reading still works. unpause_agents lets them write again.`
    : out.changed
      ? `Unpaused the agents of ${slug}: they write there again.`
      : `The agents of ${slug} were not paused; nothing changed.`;
  return { parts: [line(text)], data: { hub_id: out.hub.id, slug, action: out.action, agents_paused: out.paused, changed: out.changed } };
}
