import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { invalid } from './errors.ts';
import { sha256Hex } from './secrets.ts';

/** SPEC part 8 "Reads": 20 a page, at most 25; the query is cut to 200 characters. */
export const SEARCH_PAGE = 20;
export const SEARCH_MAX = 25;
export const QUERY_CHARS = 200;
const SNIPPET = 240;

/** What a search may find; sections and tasks are named by the filter syntax but not searchable yet. */
export const SEARCH_TYPES = ['hub', 'pad', 'section', 'thread', 'task', 'post'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];
type Searchable = 'hub' | 'pad' | 'thread' | 'post';
const SEARCHABLE: readonly Searchable[] = ['hub', 'pad', 'thread', 'post'];
const STATES = ['open', 'answered', 'folded', 'disputed'] as const;

export type SearchQuery = {
  /** The query as searched: cut to 200 characters. */
  q: string;
  words: string[];
  types: Searchable[];
  hub: string | null;
  state: (typeof STATES)[number] | null;
};

/** Splits `q` into words and the filter tokens of SPEC part 4 (`type:`, `hub:`, `is:`, `in:posts`). */
export function parseQuery(raw: string): SearchQuery {
  const q = raw.slice(0, QUERY_CHARS);
  const words: string[] = [];
  const named = new Set<SearchType>();
  let hub: string | null = null;
  let state: SearchQuery['state'] = null;
  for (const token of q.split(/\s+/).filter(Boolean)) {
    const [key, value] = [token.slice(0, token.indexOf(':')).toLowerCase(), token.slice(token.indexOf(':') + 1).toLowerCase()];
    if (key === 'type') {
      if (!(SEARCH_TYPES as readonly string[]).includes(value)) throw badToken(token, `type: takes ${SEARCH_TYPES.join(', ')}`);
      named.add(value as SearchType);
    } else if (key === 'in') {
      if (value !== 'posts') throw badToken(token, 'in: takes posts');
      named.add('post');
    } else if (key === 'is') {
      if (!(STATES as readonly string[]).includes(value)) throw badToken(token, `is: takes ${STATES.join(', ')}`);
      state = value as SearchQuery['state'];
    } else if (key === 'hub' && value) {
      hub = value.replace(/^\//, '');
    } else {
      words.push(token);
    }
  }
  let types = named.size ? SEARCHABLE.filter((type) => named.has(type)) : [...SEARCHABLE];
  // A thread's state: `is:` keeps threads, and posts by the state of their thread.
  if (state) types = types.filter((type) => type === 'thread' || type === 'post');
  return { q, words, types, hub, state };
}

const badToken = (token: string, rule: string) =>
  invalid(`Unknown filter ${JSON.stringify(token.slice(0, 40))}: ${rule}. Leave it out to search all kinds.`, { issues: [{ path: 'q', message: rule }] });

const HitRow = z.object({
  type: z.enum(['hub', 'pad', 'thread', 'post']),
  id: z.string(),
  title: z.string(),
  hub_slug: z.string(),
  hub_name: z.string(),
  thread_id: z.string().nullable(),
  state: z.string(),
  seq: z.number().nullable(),
  text: z.string().nullable(),
  updated_at: z.number(),
});
export type SearchHit = Omit<z.infer<typeof HitRow>, 'text'> & { snippet: string | null };
export type SearchPage = { query: SearchQuery; hits: SearchHit[]; nextCursor: string | undefined; personal: boolean };

const CursorShape = z.object({ o: z.number().int().min(0).max(10_000), q: z.string() });

/**
 * Everything the reader may read that matches, best first: hubs they have a seat in (or public ones
 * when public threads are on), threads, pads and posts of those hubs and of the items they hold a
 * seat on; a sub-agent key only its granted threads, the pads beside them and its granted pads.
 */
export async function search(core: Core, conn: CommonQueryMethods, reader: Actor | null, input: { q: string; limit?: number | undefined; cursor?: string | undefined }): Promise<SearchPage> {
  const query = parseQuery(input.q);
  const limit = Math.min(input.limit ?? SEARCH_PAGE, SEARCH_MAX);
  const fingerprint = sha256Hex(query.q).slice(0, 16);
  const after = input.cursor === undefined ? null : decodeCursor(input.cursor, CursorShape);
  if (after && after.q !== fingerprint) throw badCursor();
  const skip = after?.o ?? 0;
  const text = query.words.join(' ');
  if (!query.types.length || query.state === 'disputed') return { query, hits: [], nextCursor: undefined, personal: reader !== null };

  const who = reader?.id ?? null;
  const grant = reader?.grant ?? null;
  const grantThreads = sql.array([...(grant?.threads ?? [])], 'text');
  const grantPads = sql.array([...(grant?.pads ?? [])], 'text');
  const hubSeen = sql.fragment`(EXISTS (SELECT 1 FROM hub_members m WHERE m.hub_id = h.id AND m.participant_id = ${who})
    OR (${core.config.publicThreads} AND h.audience = 'public'))`;
  const itemSeat = (items: ReturnType<typeof sql.fragment>) =>
    sql.fragment`EXISTS (SELECT 1 FROM item_members i WHERE i.item_id IN (${items}) AND i.participant_id = ${who})`;
  const threadSeen = sql.fragment`(${hubSeen} OR ${itemSeat(sql.fragment`t.id`)})
    AND (${grant === null} OR t.id = ANY(${grantThreads}))`;
  const inHub = query.hub === null ? sql.fragment`true` : sql.fragment`h.slug = ${query.hub}`;
  const matches = (column: ReturnType<typeof sql.fragment>) => (text ? sql.fragment`${column} @@ q.query` : sql.fragment`true`);
  const rank = (column: ReturnType<typeof sql.fragment>) => (text ? sql.fragment`ts_rank(${column}, q.query)` : sql.fragment`0::real`);
  const threadState = query.state === null ? sql.fragment`true` : sql.fragment`t.status = ${query.state}`;

  const parts: Record<Searchable, ReturnType<typeof sql.fragment>> = {
    hub: sql.fragment`SELECT 'hub' AS type, h.id, h.name AS title, h.slug AS hub_slug, h.name AS hub_name, NULL::text AS thread_id,
        h.audience AS state, NULL::int AS seq, left(h.readme, 2000) AS text, h.updated_at, ${rank(sql.fragment`h.search_tsv`)} AS rank
      FROM hubs h, q WHERE ${matches(sql.fragment`h.search_tsv`)} AND ${inHub} AND ${grant === null} AND ${hubSeen}`,
    thread: sql.fragment`SELECT 'thread', t.id, t.title, h.slug, h.name, t.id, t.status, NULL::int, NULL::text, t.updated_at, ${rank(sql.fragment`t.search_tsv`)}
      FROM threads t JOIN hubs h ON h.id = t.hub_id, q WHERE ${matches(sql.fragment`t.search_tsv`)} AND ${inHub} AND ${threadState} AND ${threadSeen}`,
    pad: sql.fragment`SELECT 'pad', p.id, p.title, h.slug, h.name, p.thread_id, 'version ' || p.version, NULL::int, NULL::text, p.updated_at, ${rank(sql.fragment`p.search_tsv`)}
      FROM pads p JOIN hubs h ON h.id = p.hub_id, q WHERE ${matches(sql.fragment`p.search_tsv`)} AND ${inHub}
        AND (${hubSeen} OR ${itemSeat(sql.fragment`p.id, p.thread_id`)})
        AND (${grant === null} OR p.id = ANY(${grantPads}) OR p.thread_id = ANY(${grantThreads}))`,
    post: sql.fragment`SELECT 'post', o.id, t.title, h.slug, h.name, t.id, t.status, o.seq, left(o.body, 2000), o.created_at, ${rank(sql.fragment`o.search_tsv`)}
      FROM posts o JOIN threads t ON t.id = o.thread_id JOIN hubs h ON h.id = t.hub_id, q
      WHERE ${matches(sql.fragment`o.search_tsv`)} AND ${inHub} AND ${threadState} AND ${threadSeen}`,
  };
  // Each word matches as a prefix; the words are split by the same parser that made the columns.
  const rows = await conn.any(sql.type(HitRow.extend({ rank: z.number() }))`
    WITH q AS (SELECT to_tsquery('simple', coalesce((SELECT string_agg(quote_literal(lexeme) || ':*', ' & ')
                 FROM unnest(to_tsvector('simple', ${text}))), '')) AS query)
    SELECT * FROM (${sql.join(query.types.map((type) => parts[type]), sql.fragment` UNION ALL `)}) hits (type, id, title, hub_slug, hub_name, thread_id, state, seq, text, updated_at, rank)
    ORDER BY rank DESC, updated_at DESC, id
    LIMIT ${limit + 1} OFFSET ${skip}`);
  const lower = query.words.map((word) => word.toLowerCase());
  const hits = rows.slice(0, limit).map(({ rank: _rank, text: body, ...hit }) => ({ ...hit, snippet: body ? snippet(body, lower) : null }));
  const more = rows.length > limit && skip + limit <= 10_000;
  return { query, hits, nextCursor: more ? encodeCursor({ o: skip + limit, q: fingerprint }) : undefined, personal: reader !== null };
}

const badCursor = () =>
  invalid('That cursor belongs to another query; pass the same q with the cursor, or leave the cursor out.', { issues: [{ path: 'cursor', message: 'Cursor of another query.' }] });

/** A window of the text around the first word found, whole when short. */
function snippet(text: string, words: readonly string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET) return flat;
  const lowered = flat.toLowerCase();
  const at = Math.min(...words.map((word) => lowered.indexOf(word)).filter((index) => index >= 0), flat.length);
  const start = at === flat.length ? 0 : Math.max(0, at - 60);
  return `${start > 0 ? '…' : ''}${flat.slice(start, start + SNIPPET)}${start + SNIPPET < flat.length ? '…' : ''}`;
}
