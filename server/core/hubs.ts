import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { HubRow, IdRow, Role } from '../../schema/rows.ts';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, invalid, notFound } from './errors.ts';
import { inline, linkForm } from './framing.ts';
import { line, fenced, type Result } from './result.ts';
import type { Seat } from './rights.ts';
import { newId } from './secrets.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { once } from './idempotency.ts';

const RoleRow = z.object({ role: Role });
const HubSeatRow = HubRow.pick({ id: true, slug: true, name: true }).extend({ role: Role });

export const HUB_PAGE = 30;

const hubColumns = sql.fragment`id, slug, name, readme, audience, mode, owner_id, created_at, updated_at`;

/** A hub by id (`hub_…`) or slug. */
export async function findHub(conn: CommonQueryMethods, ref: string): Promise<HubRow | null> {
  const key = ref.trim().replace(/^\//, '').toLowerCase();
  return conn.maybeOne(sql.type(HubRow)`
    SELECT ${hubColumns} FROM hubs WHERE ${key.startsWith('hub_') ? sql.fragment`id = ${key}` : sql.fragment`slug = ${key}`}`);
}

export async function seatIn(conn: CommonQueryMethods, hubId: string, participantId: string | undefined): Promise<Seat> {
  if (!participantId) return null;
  return conn.maybeOneFirst(sql.type(RoleRow)`
    SELECT role FROM hub_members WHERE hub_id = ${hubId} AND participant_id = ${participantId}`);
}

/** Whether this hub reads as public on this server (SVC_PUBLIC_THREADS gates every public read). */
export const readsPublic = (core: Core, hub: Pick<HubRow, 'audience'>) => core.config.publicThreads && hub.audience === 'public';

/**
 * The hub and the reader's seat, or `not_found` when the reader may not see it: a private hub and a
 * missing one answer the same, so nobody learns which private hubs exist.
 */
export async function readableHub(core: Core, conn: CommonQueryMethods, ref: string, reader: Actor | null) {
  const hub = await findHub(conn, ref);
  if (!hub) throw notFound('No such hub, or it is private.');
  const seat = await seatIn(conn, hub.id, reader?.id);
  if (seat === null && !readsPublic(core, hub)) throw notFound('No such hub, or it is private.');
  return { hub, seat };
}

export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
}

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,38}[a-z0-9])$/;

/** A private hub owned by its creator. A chosen slug that is taken is refused; a derived one is numbered. */
export async function createHub(core: Core, actor: Actor, input: { name: string; slug?: string | undefined; idempotency_key?: string | undefined }): Promise<Result> {
  const chosen = input.slug !== undefined;
  let base = chosen ? input.slug!.toLowerCase() : slugify(input.name);
  if (chosen && !SLUG_PATTERN.test(base)) {
    throw invalid('A slug is 3 to 40 lowercase letters, digits and dashes, starting and ending with a letter or digit.', {
      issues: [{ path: 'slug', message: 'Use 3 to 40 of a-z, 0-9 and -.' }],
    });
  }
  if (base.length < 3) base = base ? `${base}-hub` : 'hub';
  return once(core, actor, 'create_hub', input.idempotency_key, input, async (tx) => {
    const id = newId('hub_');
    let slug = base;
    for (let n = 2; ; n++) {
      const inserted = await tx.maybeOneFirst(sql.type(IdRow)`
        INSERT INTO hubs (id, slug, name, owner_id) VALUES (${id}, ${slug}, ${input.name}, ${actor.id})
        ON CONFLICT (slug) DO NOTHING RETURNING id`);
      if (inserted) break;
      if (chosen) throw new AppError('conflict', `The slug "${slug}" is taken; choose another.`);
      slug = `${base.slice(0, 36)}-${n}`;
    }
    await tx.query(sql.unsafe`
      INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${id}, ${actor.id}, 'owner')`);
    return {
      parts: [
        line(`Created the private hub ${inline(input.name)} (id ${id}, slug ${slug}). You own it.`),
        line(`Next: start_thread with hub "${slug}" to begin a conversation; open_hub to see it.`),
      ],
      data: { hub_id: id, slug, audience: 'private', mode: 'open', role: 'owner' },
    };
  });
}

const ItemRow = z.object({
  type: z.enum(['thread', 'pad']),
  id: z.string(),
  title: z.string(),
  status: z.string(),
  count: z.number().int(),
  updated_at: z.number(),
  updated_us: z.number(),
});

const CursorShape = z.object({ t: z.number(), id: z.string() });

/** A page of a hub's threads and pads, newest first, as the reader may see it. */
export async function hubPage(
  core: Core,
  reader: Actor | null,
  input: { hub: string; cursor?: string | undefined; type?: 'thread' | 'pad' | undefined },
) {
  const conn = core.db.pool;
  const { hub, seat } = await readableHub(core, conn, input.hub, reader);
  const after = input.cursor === undefined ? null : decodeCursor(input.cursor, CursorShape);
  const items = await conn.any(sql.type(ItemRow)`
    SELECT * FROM (
      SELECT 'thread' AS type, id, title, status, post_count AS count, updated_at FROM threads WHERE hub_id = ${hub.id}
      UNION ALL
      SELECT 'pad' AS type, id, title, 'settled' AS status, version AS count, updated_at FROM pads WHERE hub_id = ${hub.id}
    ) items
    CROSS JOIN LATERAL (SELECT floor(extract(epoch FROM updated_at) * 1000000)::int8 AS updated_us) stamp
    WHERE true
    ${input.type ? sql.fragment`AND type = ${input.type}` : sql.fragment``}
    ${after ? sql.fragment`AND (updated_us, id) < (${after.t}, ${after.id})` : sql.fragment``}
    ORDER BY updated_us DESC, id DESC
    LIMIT ${HUB_PAGE + 1}`);
  const page = items.slice(0, HUB_PAGE);
  const last = page.at(-1);
  const nextCursor = items.length > HUB_PAGE && last ? encodeCursor({ t: last.updated_us, id: last.id }) : undefined;
  return {
    hub,
    seat,
    threads: page.filter((item) => item.type === 'thread'),
    pads: page.filter((item) => item.type === 'pad'),
    nextCursor,
  };
}

/** Read me first, mode, the reader's seat, then threads and pads, newest first, 30 a page. */
export async function openHub(core: Core, actor: Actor | null, input: { hub: string; cursor?: string | undefined }): Promise<Result> {
  const { hub, seat, threads, pads, nextCursor } = await hubPage(core, actor, input);
  const iso = (t: number) => new Date(t).toISOString();

  const parts = [
    line(`# Hub ${inline(hub.name)}`),
    line(`id ${hub.id} · slug ${hub.slug} · ${hub.audience} · mode ${hub.mode === 'open' ? 'Open' : 'Checked'} · your seat: ${seat ?? 'none (not a member)'}`),
  ];
  if (hub.readme) parts.push(line('## Read me first'), fenced(linkForm(hub.readme)));
  parts.push(line(`## Threads (${threads.length}${nextCursor ? ' on this page' : ''})`));
  for (const t of threads) parts.push(line(`- ${inline(t.title)} · ${t.id} · ${t.status} · ${t.count} posts · updated ${iso(t.updated_at)}`));
  if (!threads.length) parts.push(line('No threads yet.'));
  parts.push(line(`## Pads (${pads.length})`));
  for (const p of pads) parts.push(line(`- ${inline(p.title)} · ${p.id} · version ${p.count} · updated ${iso(p.updated_at)}`));
  if (!pads.length) parts.push(line('No pads yet.'));
  if (nextCursor) parts.push(line(`More: call open_hub with cursor "${nextCursor}".`));
  if (seat === null) parts.push(line('You are not a member: join_hub to take part.'));
  else parts.push(line('Take part: start_thread to begin a conversation, open_thread to read one, post_reply to answer.'));

  return {
    parts,
    data: {
      hub_id: hub.id,
      slug: hub.slug,
      audience: hub.audience,
      mode: hub.mode,
      ...(seat ? { seat: { role: seat } } : {}),
      threads: threads.map((t) => ({ id: t.id, status: t.status, posts: t.count, updated: iso(t.updated_at) })),
      pads: pads.map((p) => ({ id: p.id, version: p.count, updated: iso(p.updated_at) })),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
    },
    view: {
      hub: { id: hub.id, slug: hub.slug, name: hub.name, readme: hub.readme, mode: hub.mode, audience: hub.audience },
      seat: seat ? { role: seat } : null,
      threads: threads.map((t) => ({ id: t.id, title: t.title, status: t.status, posts: t.count, updated: iso(t.updated_at) })),
      pads: pads.map((p) => ({ id: p.id, title: p.title, version: p.count, updated: iso(p.updated_at) })),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
    },
  };
}

/** Public hub: join at once. Private: ask its owner and helpers. Calling again changes nothing. */
export async function joinHub(core: Core, actor: Actor, input: { hub: string; note?: string | undefined }): Promise<Result> {
  return core.db.write(async (tx) => {
    const hub = await findHub(tx, input.hub);
    if (!hub) throw notFound('No such hub.');
    const seat = await seatIn(tx, hub.id, actor.id);
    const data = (status: 'member' | 'joined' | 'requested') => ({ hub_id: hub.id, slug: hub.slug, status, ...(seat ? { role: seat } : {}) });
    if (seat) {
      return { parts: [line(`You are already in ${inline(hub.name)} as ${seat}.`)], data: data('member') };
    }
    if (readsPublic(core, hub)) {
      await tx.query(sql.unsafe`
        INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${actor.id}, 'member')
        ON CONFLICT DO NOTHING`);
      return {
        parts: [line(`You joined ${inline(hub.name)} as a member. open_hub "${hub.slug}" to see its threads and pads.`)],
        data: { ...data('joined'), role: 'member' },
      };
    }
    await tx.query(sql.unsafe`
      INSERT INTO join_requests (hub_id, participant_id, note) VALUES (${hub.id}, ${actor.id}, ${input.note ?? ''})
      ON CONFLICT (hub_id, participant_id) DO NOTHING`);
    return {
      parts: [line(`${inline(hub.name)} is private: your request to join is with its owner and helpers.`)],
      data: data('requested'),
    };
  });
}

/** The web app's hub list: every hub the caller has a seat in. */
export async function myHubs(core: Core, actor: Actor): Promise<Result> {
  const rows = await core.db.pool.any(sql.type(HubSeatRow)`
    SELECT h.id, h.slug, h.name, m.role FROM hub_members m JOIN hubs h ON h.id = m.hub_id
    WHERE m.participant_id = ${actor.id} ORDER BY h.updated_at DESC, h.id`);
  return {
    parts: rows.length
      ? rows.map((h) => line(`- ${inline(h.name)} · ${h.slug} · ${h.role}`))
      : [line('You are in no hubs yet: create_hub makes one.')],
    data: { hubs: rows.map((h) => ({ id: h.id, slug: h.slug, role: h.role })) },
    view: { hubs: rows.map((h) => ({ id: h.id, slug: h.slug, name: h.name, role: h.role })) },
  };
}
