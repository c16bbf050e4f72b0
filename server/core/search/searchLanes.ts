import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { HomeThreadView } from '../../../schema/tools/home.ts';
import { inOrder } from '../../../sync/padSections.ts';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { invalid } from '../../../schema/errors.ts';
import { readableScope } from './readableScope.ts';
import { cursorOffset, nextOffset, SEARCH_PAGE } from './search.ts';
import { OUTLINE_LIMIT } from '../pads/sections.ts';
import { sha256Hex } from '../kernel/secrets.ts';

/**
 * The Markdown `/search?lane=` browse (SPEC part 4 "Markdown views"): pads with their section map,
 * open threads by last activity, the newest threads, and threads a new ID can post in. 20 a page,
 * a cursor after, each item under the same reading rules as search.
 */
export const LANES = ['pads', 'open', 'new', 'guests'] as const;
export type Lane = (typeof LANES)[number];

const LanePadRow = z.object({ id: z.string(), title: z.string(), hub_slug: z.string(), hub_name: z.string(), version: z.number(), updated_at: z.number() });
const LaneSectionRow = z.object({ pad_id: z.string(), id: z.string(), after: z.string().nullable(), title: z.string(), level: z.number() });
/** A thread as a list shows it (a lane, the home): its hub, status and size. */
export const ThreadListRow = HomeThreadView.pick({ id: true, title: true, hub_slug: true, hub_name: true, status: true, posts: true }).extend({ updated_at: z.number() });
const LaneThreadRow = ThreadListRow.extend({ created_at: z.number() });
export type LaneSection = Omit<z.infer<typeof LaneSectionRow>, 'pad_id' | 'after'>;
export type LanePad = z.infer<typeof LanePadRow> & { sections: LaneSection[]; hidden: number };
export type LaneThread = z.infer<typeof LaneThreadRow>;
export type LanePage =
  | { lane: 'pads'; pads: LanePad[]; nextCursor: string | undefined }
  | { lane: Exclude<Lane, 'pads'>; threads: LaneThread[]; nextCursor: string | undefined; guestsOpen: boolean };

export function parseLane(value: string): Lane {
  if (!(LANES as readonly string[]).includes(value)) {
    throw invalid(`Unknown lane ${JSON.stringify(value.slice(0, 40))}: lane takes ${LANES.join(', ')}.`, { issues: [{ path: 'lane', message: `One of ${LANES.join(', ')}.` }] });
  }
  return value as Lane;
}

/** A pad's section map: past 25 sections only the top two levels, with the count of those left out (as the outline does). */
function sectionMap(rows: readonly LaneSection[]): { sections: LaneSection[]; hidden: number } {
  if (rows.length <= OUTLINE_LIMIT) return { sections: [...rows], hidden: 0 };
  const top = rows.filter((row) => row.level <= 2).slice(0, OUTLINE_LIMIT);
  return { sections: top, hidden: rows.length - top.length };
}

export async function browseLane(core: Core, conn: CommonQueryMethods, reader: Actor | null, lane: Lane, cursor: string | undefined): Promise<LanePage> {
  const fingerprint = sha256Hex(`lane:${lane}`).slice(0, 16);
  const skip = cursorOffset(cursor, fingerprint, `That cursor belongs to another lane or query; pass lane=${lane} with it, or leave it out.`);
  const limit = SEARCH_PAGE;
  const scope = readableScope(core, reader);
  if (lane === 'pads') {
    const rows = await conn.any(sql.type(LanePadRow)`
      SELECT p.id, p.title, h.slug AS hub_slug, h.name AS hub_name, p.version, p.updated_at
      FROM pads p JOIN hubs h ON h.id = p.hub_id WHERE ${scope.pad}
      ORDER BY p.updated_at DESC, p.id LIMIT ${limit + 1} OFFSET ${skip}`);
    const page = rows.slice(0, limit);
    const sections = await conn.any(sql.type(LaneSectionRow)`
      SELECT pad_id, section_id AS id, after_id AS after, title, level FROM pad_sections
      WHERE pad_id = ANY(${sql.array(page.map((pad) => pad.id), 'text')})`);
    const pads = page.map((pad) => {
      const own = inOrder(sections.filter((row) => row.pad_id === pad.id)).map(({ id, title, level }) => ({ id, title, level }));
      return { ...pad, ...sectionMap(own) };
    });
    return { lane, pads, nextCursor: nextOffset(rows.length, limit, skip, fingerprint) };
  }
  const guestsOpen = core.config.guestAgents && core.config.publicThreads;
  // A new ID posts where a thread takes guests in a hub anyone may read; that is nobody's seat.
  const where: Record<Exclude<Lane, 'pads'>, FragmentSqlToken> = {
    open: sql.fragment`t.status = 'open' AND ${scope.thread}`,
    new: scope.thread,
    guests: sql.fragment`${guestsOpen} AND t.accepts_guests AND h.audience = 'public'`,
  };
  const order = lane === 'new' ? sql.fragment`t.created_at DESC, t.id DESC` : sql.fragment`t.updated_at DESC, t.id DESC`;
  const rows = await conn.any(sql.type(LaneThreadRow)`
    SELECT t.id, t.title, h.slug AS hub_slug, h.name AS hub_name, t.status, t.post_count AS posts, t.created_at, t.updated_at
    FROM threads t JOIN hubs h ON h.id = t.hub_id WHERE ${where[lane]}
    ORDER BY ${order} LIMIT ${limit + 1} OFFSET ${skip}`);
  return { lane, threads: rows.slice(0, limit), nextCursor: nextOffset(rows.length, limit, skip, fingerprint), guestsOpen };
}
