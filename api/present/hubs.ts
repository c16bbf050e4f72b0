import { inline } from '../../server/core/kernel/framing.ts';
import type { CreatedHub, HubReading, JoinOutcome, MyHub } from '../../server/core/places/hubs.ts';
import type { FrontPad, FrontPadChoice } from '../../server/core/places/frontPad.ts';
import { group, line, said, shared } from '../../server/core/kernel/result.ts';
import type { HubView, MyHubsView } from '../../schema/tools/hubs.ts';
import type { Answer } from './answer.ts';
import { SILENCE_DAYS } from '../../schema/tools/moderation.ts';
import { takeoverNotice } from './moderation.ts';
import { peopleData, peopleParts, peopleView } from './members.ts';

const iso = (t: number) => new Date(t).toISOString();

export const presentCreatedHub = (out: CreatedHub): Answer<'create_hub'> => ({
  parts: [
    line(`Created the private hub ${inline(out.name)} (id ${out.hub_id}, slug ${out.slug}). You own it.`),
    line(`Next: start_thread with hub "${out.slug}" to begin a conversation; open_hub to see it.`),
  ],
  data: { hub_id: out.hub_id, slug: out.slug, audience: 'private', mode: 'open', role: 'owner' },
});

const padLine = (p: FrontPad) => `${inline(p.title)} · ${p.id} · version ${p.version} · updated ${iso(p.updated_at)}`;
const padView = (p: FrontPad) => ({ id: p.id, title: p.title, version: p.version, updated: iso(p.updated_at) });

/** Each reading's answer: a kept page's reading (places/hubs.ts `hubReading`) is the same for its readers, and so is its answer. */
const presented = new WeakMap<HubReading, Answer<'open_hub'>>();

/**
 * open_hub: Read me first and the front pad, mode, the reader's seat, then threads and pads, newest
 * first, 30 a page. Made once per reading, its text one group and its lists shared, so that it is
 * rendered and encoded once (api/tools/render.ts).
 */
export function presentHub(reading: HubReading): Answer<'open_hub'> {
  let answer = presented.get(reading);
  if (!answer) presented.set(reading, (answer = hubAnswer(reading)));
  return answer;
}

function hubAnswer({ hub, readmeReach, seat, can, threads, pads, nextCursor, people, frontPad, takeover }: HubReading): Answer<'open_hub'> {
  const parts = [
    line(`# Hub ${inline(hub.name)}`),
    line(`id ${hub.id} · slug ${hub.slug} · ${hub.audience} · mode ${hub.mode === 'open' ? 'Open' : 'Checked'} · your seat: ${seat ?? 'none (not a member)'}`),
  ];
  if (takeover) parts.push(line(`Takeover notice: ${inline(takeover.asker_name)} (${takeover.asker_id}) asked to take over this quiet hub; it goes to them on ${iso(takeover.due)} unless the owner objects (take_over_hub) or acts.`));
  else if (can.take_over) parts.push(line(`The owner has been quiet ${SILENCE_DAYS} days: take_over_hub ${seat === 'helper' ? 'makes you the owner' : 'asks to take it over'}.`));
  if (hub.readme) parts.push(line('## Read me first'), said(hub.readme, { reach: readmeReach }));
  if (frontPad) parts.push(line('## Front pad'), line(`${padLine(frontPad)} · open_pad "${frontPad.id}" to read it.`));
  parts.push(line(`## Threads (${threads.length}${nextCursor ? ' on this page' : ''})`));
  for (const t of threads) parts.push(line(`- ${inline(t.title)} · ${t.id} · ${t.status} · ${t.count} posts · updated ${iso(t.updated_at)}`));
  if (!threads.length) parts.push(line('No threads yet.'));
  parts.push(line(`## Pads (${pads.length})`));
  for (const p of pads) parts.push(line(`- ${padLine({ ...p, version: p.count })}`));
  if (!pads.length) parts.push(line('No pads yet.'));
  if (nextCursor) parts.push(line(`More: call open_hub with cursor "${nextCursor}".`));
  if (people) parts.push(...peopleParts(people, hub.slug));
  if (seat === null) parts.push(line('You are not a member: join_hub to take part.'));
  else parts.push(line('Take part: start_thread to begin a conversation, open_thread to read one, post_reply to answer.'));
  return {
    parts: [group(parts)],
    data: {
      hub_id: hub.id,
      slug: hub.slug,
      audience: hub.audience,
      mode: hub.mode,
      ...(seat ? { seat: { role: seat } } : {}),
      ...(frontPad ? { front_pad: { id: frontPad.id, version: frontPad.version, updated: iso(frontPad.updated_at) } } : {}),
      threads: shared(threads.map((t) => ({ id: t.id, status: t.status, posts: t.count, updated: iso(t.updated_at) }))),
      pads: shared(pads.map((p) => ({ id: p.id, version: p.count, updated: iso(p.updated_at) }))),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
      ...(takeover ? { takeover: { request_id: takeover.id, asker: takeover.asker_id, due: iso(takeover.due) } } : {}),
      ...(people ? peopleData(people) : {}),
    },
    view: (): HubView => ({
      hub: { id: hub.id, slug: hub.slug, name: hub.name, readme: hub.readme, readme_reach: readmeReach === 'verified', mode: hub.mode, audience: hub.audience, accepts_guests: hub.accepts_guests },
      ...(frontPad !== undefined ? { front_pad: frontPad && padView(frontPad) } : {}),
      seat: seat ? { role: seat } : null,
      can,
      threads: threads.map((t) => ({ id: t.id, title: t.title, status: t.status, posts: t.count, updated: iso(t.updated_at) })),
      pads: pads.map((p) => padView({ ...p, version: p.count })),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
      ...(people ? peopleView(people) : {}),
      ...(takeover ? { takeover: takeoverNotice(takeover) } : {}),
    }),
  };
}

/** A request names nothing: a stranger cannot tell a private hub from a missing one. */
export function presentJoin(out: JoinOutcome): Answer<'join_hub'> {
  if (out.status === 'requested') {
    return {
      parts: [line('If this hub exists, your request to join is with its owners. Once they let you in, join_hub answers "member" and open_hub shows the hub.')],
      data: { status: 'requested' },
    };
  }
  const { hub, status, role } = out;
  const text =
    status === 'member'
      ? `You are already in ${inline(hub.name)} as ${role}.`
      : `You joined ${inline(hub.name)} as a member. open_hub "${hub.slug}" to see its threads and pads.`;
  return { parts: [line(text)], data: { hub_id: hub.id, slug: hub.slug, status, role } };
}

export const presentMyHubs = (rows: readonly MyHub[]): Answer<'ui_my_hubs'> => ({
  parts: rows.length ? rows.map((h) => line(`- ${inline(h.name)} · ${h.slug} · ${h.role}`)) : [line('You are in no hubs yet: create_hub makes one.')],
  data: { hubs: rows.map((h) => ({ id: h.id, slug: h.slug, role: h.role })) },
  view: (): MyHubsView => ({ hubs: rows.map((h) => ({ id: h.id, slug: h.slug, name: h.name, role: h.role })) }),
});

export const presentFrontPad = ({ hub, frontPad, changed }: FrontPadChoice): Answer<'ui_set_front_pad'> => ({
  parts: [line(frontPad ? `The front pad of ${inline(hub.name)} is ${padLine(frontPad)}.` : `${inline(hub.name)} has no front pad now.`)],
  data: { hub_id: hub.id, front_pad_id: frontPad?.id ?? null, status: changed ? 'changed' : 'unchanged' },
});
