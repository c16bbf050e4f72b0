import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { HubRow, IdRow, Role } from '../../../schema/rows.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { AppError, invalid } from '../../../schema/errors.ts';
import { allows, type Seat } from '../kernel/rights.ts';
import type { HubCan } from '../../../schema/tools/hubs.ts';
import { newId } from '../kernel/secrets.ts';
import { decodeCursor, encodeCursor } from '../kernel/cursor.ts';
import { hubPeople, noticeJoinRequest, PeopleColumns, peopleColumns, type HubPeople } from './members.ts';
import { FrontPadJson, frontPadJson, type FrontPad } from './frontPad.ts';
import { seatInHub } from './seats.ts';
import { hubAsSeen, readsPublic, readableHub, seatedHubs, type SeatedHub } from './hubAccess.ts';
import { readsVerifiedSql } from '../identity/standing.ts';
import type { Reach } from '../kernel/result.ts';
import { SILENCE_DAYS } from '../../../schema/tools/moderation.ts';
import { ownerActiveMs, TakeoverJson, waitingTakeoverJson, withDue, type TakeoverRequest } from './takeover.ts';
import { afterCommit } from '../kernel/afterCommit.ts';

export const HUB_PAGE = 30;

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

/** Slugs that are the web app's own pages under /h/ (`/h/new` makes a hub): no hub may take them. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['new']);

export type CreatedHub = { hub_id: string; slug: string; name: string };

/** A chosen slug must be well formed; a derived one is made from the name. */
export function hubSlugBase(input: { name: string; slug?: string | undefined }): { base: string; chosen: boolean } {
  const chosen = input.slug !== undefined;
  let base = chosen ? input.slug!.toLowerCase() : slugify(input.name);
  if (chosen && !SLUG_PATTERN.test(base)) {
    throw invalid('A slug is 3 to 40 lowercase letters, digits and dashes, starting and ending with a letter or digit.', {
      issues: [{ path: 'slug', message: 'Use 3 to 40 of a-z, 0-9 and -.' }],
    });
  }
  if (chosen && RESERVED_SLUGS.has(base)) {
    throw invalid(`The slug "${base}" is the web app's own page (/h/${base}); choose another.`, { issues: [{ path: 'slug', message: 'Reserved; choose another.' }] });
  }
  if (base.length < 3) base = base ? `${base}-hub` : 'hub';
  return { base, chosen };
}

/** A private hub owned by its creator. A chosen slug that is taken is refused; a derived one is numbered. */
export async function createHub(tx: CommonQueryMethods, actor: Actor, input: { name: string; slug?: string | undefined }): Promise<CreatedHub> {
  const { base, chosen } = hubSlugBase(input);
  const id = newId('hub_');
  let slug = base;
  for (let n = 2; ; n++) {
    // A name that makes a reserved slug is numbered as if it were taken: "New" becomes new-2.
    if (!RESERVED_SLUGS.has(slug)) {
      const inserted = await tx.maybeOneFirst(sql.type(IdRow)`
        INSERT INTO hubs (id, slug, name, owner_id) VALUES (${id}, ${slug}, ${input.name}, ${actor.id})
        ON CONFLICT (slug) DO NOTHING RETURNING id`);
      if (inserted) break;
      if (chosen) throw new AppError('conflict', `The slug "${slug}" is taken; choose another.`);
    }
    slug = `${base.slice(0, 36)}-${n}`;
  }
  await tx.query(sql.unsafe`
    INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${id}, ${actor.id}, 'owner')`);
  afterCommit(tx, { reads: 'hubs' }, { reads: 'hub_members' });
  return { hub_id: id, slug, name: input.name };
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

export type HubItem = z.infer<typeof ItemRow>;
export type HubReading = {
  hub: HubRow;
  /** Whether the Read me first's writer reads verified, which decides how its links show. */
  readmeReach: Reach;
  seat: Seat;
  can: HubCan;
  threads: HubItem[];
  pads: HubItem[];
  nextCursor: string | undefined;
  people: HubPeople | null;
  /** The pad beside the Read me first, on the first page; undefined on later pages. */
  frontPad?: FrontPad | null;
  /** A waiting takeover request, on the first page for a reader with a seat. */
  takeover?: TakeoverRequest | null;
};

/** What a reader may do in a hub beyond taking part; the web app shows its controls by it. */
export const hubCan = (seat: Seat, takeOver = false): HubCan => ({
  moderate: allows(seat, 'moderate'),
  guide: allows(seat, 'guide'),
  audience: allows(seat, 'audience'),
  take_over: takeOver,
});

/**
 * Whether the reader's seat may take the hub over now (take_over_hub): its owner quiet for 90 days,
 * and the reader a helper, or a member of a hub with no helper (verified: the tool checks that).
 */
function mayTakeOver(seat: Seat, ownerActive: number, members: readonly { role: Role }[], takeover: unknown) {
  const quiet = ownerActive + SILENCE_DAYS * 86_400_000 <= Date.now();
  const helpers = members.some((m) => m.role === 'helper');
  return quiet && (seat === 'helper' || (seat === 'member' && !helpers && !takeover));
}

/** How long a kept page of a hub may be shown at most when the change feed said nothing of it. */
const KEPT_PAGE_MS = 1_000;

/** A page of the hub as its one statement reads it; the first page's columns are there when asked for. */
const HubPageRow = z.object({
  items: z.array(ItemRow),
  readme_verified: z.boolean().nullable(),
  front_pad: FrontPadJson.optional(),
  ...PeopleColumns.partial().shape,
  owner_active: z.number().optional(),
  takeover: TakeoverJson.optional(),
});

/**
 * A page of a hub's threads and pads, newest first, for a reader the policy let in; with `people`
 * (open_hub, on its first page), its front pad and, for a reader with a seat, who is in the hub, who
 * waits for its owner and helpers, and a waiting takeover. One statement, one round trip, whatever
 * the page asks for, or none while a kept one stands.
 */
export async function hubReading(
  core: Core,
  conn: CommonQueryMethods,
  { hub, seat }: { hub: HubRow; seat: Seat },
  input: { cursor?: string | undefined; type?: 'thread' | 'pad' | undefined },
  withPeople = true,
): Promise<HubReading> {
  const after = input.cursor === undefined ? null : decodeCursor(input.cursor, CursorShape);
  const first = withPeople && !after;
  const seated = first && seat !== null;
  const columns = () => sql.fragment`
    (SELECT coalesce(json_agg(i ORDER BY i.updated_us DESC, i.id DESC), '[]'::json) FROM (
      SELECT type, id, title, status, count, floor(extract(epoch FROM updated_at) * 1000) AS updated_at, updated_us FROM (
        SELECT 'thread' AS type, id, title, status, post_count AS count, updated_at FROM threads WHERE hub_id = ${hub.id}
        UNION ALL
        SELECT 'pad' AS type, id, title, 'settled' AS status, version AS count, updated_at FROM pads WHERE hub_id = ${hub.id} AND deleted_at IS NULL
      ) items
      CROSS JOIN LATERAL (SELECT floor(extract(epoch FROM updated_at) * 1000000)::int8 AS updated_us) stamp
      WHERE true
      ${input.type ? sql.fragment`AND type = ${input.type}` : sql.fragment``}
      ${after ? sql.fragment`AND (updated_us, id) < (${after.t}, ${after.id})` : sql.fragment``}
      ORDER BY updated_us DESC, id DESC
      LIMIT ${HUB_PAGE + 1}) i) AS items,
    (SELECT ${readsVerifiedSql('w')} FROM hubs h JOIN participants w ON w.id = h.readme_by WHERE h.id = ${hub.id}) AS readme_verified
    ${first ? sql.fragment`, ${frontPadJson(hub.id)} AS front_pad` : sql.fragment``}
    ${seated ? sql.fragment`, ${peopleColumns(hub.id, seat)}, ${ownerActiveMs(hub.id)} AS owner_active, ${waitingTakeoverJson(hub.id)} AS takeover` : sql.fragment``}`;
  // Prepared once per shape of the statement: the filters and columns a page asks for.
  const shape = `${input.type ?? 'all'}_${after ? 'after' : 'newest'}_${seated ? (allows(seat, 'moderate') ? 'moderator' : 'seated') : first ? 'first' : 'page'}`;
  const load = () => conn.one(sql.prepared(`open_hub_${shape}`, HubPageRow)`SELECT ${columns()}`);
  // The same for every reader of this shape, so kept once for all of them. Outside a transaction it
  // may be a read kept since the last change the feed carries (threads, seats, people, takeovers),
  // and for no longer than KEPT_PAGE_MS: the feed does not carry the edits of pads beside no thread,
  // join requests, the front pad's choice or the owner's pad edits and sign-ins.
  const row =
    conn === core.db.pool
      ? await core.reads.read(`open_hub ${hub.id} ${shape} ${input.cursor ?? ''}`, load, { maxAgeMs: KEPT_PAGE_MS })
      : await load();
  // Decided now, each time: it turns on the clock.
  const takeOver = row.members && row.owner_active !== undefined ? mayTakeOver(seat, row.owner_active, row.members, row.takeover) : false;
  const made = readingsOf.get(row) ?? [];
  // What else a reading turns on is the page's shape, which the row was read for.
  const found = made.find((reading) => reading.seat === seat && reading.can.take_over === takeOver && sameHub(reading.hub, hub));
  if (found) return found;
  const people = row.members ? hubPeople(seat, row.members, row.requests ?? null) : null;
  const takeover = withDue(row.takeover ?? null);
  const items = row.items;
  const page = items.slice(0, HUB_PAGE);
  const last = page.at(-1);
  const nextCursor = items.length > HUB_PAGE && last ? encodeCursor({ t: last.updated_us, id: last.id }) : undefined;
  const reading: HubReading = {
    hub,
    readmeReach: hub.readme && row.readme_verified ? 'verified' : 'unverified',
    seat,
    can: hubCan(seat, takeOver),
    threads: page.filter((item) => item.type === 'thread'),
    pads: page.filter((item) => item.type === 'pad'),
    nextCursor,
    people,
    ...(row.front_pad !== undefined ? { frontPad: row.front_pad } : {}),
    ...(first ? { takeover } : {}),
  };
  readingsOf.set(row, made.length < READINGS_PER_PAGE ? [...made, reading] : [reading]);
  return reading;
}

/**
 * The readings made of each page read (the same kept page for every reader), each for one seat and
 * hub: the same reading for every reader alike, so that its presentation is made once too
 * (api/present/hubs.ts). Nothing may change a reading once made.
 */
const readingsOf = new WeakMap<object, readonly HubReading[]>();
/** More readings than this of one page (the hub changed under it, as each reader's kept seat shows it) start the list again. */
const READINGS_PER_PAGE = 8;

/** Whether two reads of a hub's row read the same. */
const sameHub = (a: HubRow, b: HubRow) => (Object.keys(a) as (keyof HubRow)[]).every((key) => a[key] === b[key]) && Object.keys(a).length === Object.keys(b).length;

/** open_hub, and the Markdown hub page: the hub as the reader sees it (hubAsSeen), a page of it. */
export function openHub(core: Core, conn: CommonQueryMethods, { hub, seat }: { hub: HubRow; seat: Seat }, input: Parameters<typeof hubReading>[3], withPeople = true) {
  return hubReading(core, conn, { hub: hubAsSeen(core, hub), seat }, input, withPeople);
}

/** The hub page of the Markdown views, readable as the hub is. */
export async function hubPage(core: Core, reader: Actor | null, input: { hub: string; cursor?: string | undefined; type?: 'thread' | 'pad' | undefined }) {
  return openHub(core, core.db.pool, await readableHub(core, core.db.pool, input.hub, reader), input, false);
}

/** A request names no hub: a private hub and a missing one answer a stranger alike. */
export type JoinOutcome = { hub: HubRow; status: 'member' | 'joined'; role: Role } | { hub: null; status: 'requested'; role: null };

/**
 * Public hub: join at once. Private: ask its owner and helpers. Calling again changes nothing. A
 * stranger learns nothing of a private hub: the request is kept for its owners, and the answer is
 * the one a missing hub gets.
 */
export async function joinHub(core: Core, tx: CommonQueryMethods, actor: Actor, { hub, seat }: { hub: HubRow | null; seat: Seat }, note: string | undefined): Promise<JoinOutcome> {
  if (hub && seat) return { hub, status: 'member', role: seat };
  if (hub && readsPublic(core, hub)) {
    await seatInHub(tx, hub, actor.id);
    return { hub, status: 'joined', role: 'member' };
  }
  if (hub) {
    const asked = await tx.query(sql.unsafe`
      INSERT INTO join_requests (hub_id, participant_id, note) VALUES (${hub.id}, ${actor.id}, ${note ?? ''})
      ON CONFLICT (hub_id, participant_id) DO NOTHING`);
    if (asked.rowCount) await noticeJoinRequest(tx, hub, actor.id, note);
  }
  return { hub: null, status: 'requested', role: null };
}

export type MyHub = Pick<SeatedHub, 'id' | 'slug' | 'name' | 'role'>;

/** The web app's hub list: every hub the caller has a seat in. */
export async function myHubs(core: Core, conn: CommonQueryMethods, actor: Actor): Promise<readonly MyHub[]> {
  return seatedHubs(core, conn, actor.id);
}
