import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { decodeCursor, encodeCursor } from '../kernel/cursor.ts';
import { invalid } from '../../../schema/errors.ts';
import { readableScope } from './readableScope.ts';
import { catchUpSectionText } from '../../../sync/sectionText.ts';
import { sha256Hex } from '../kernel/secrets.ts';
import { SEARCH_MAX, SEARCH_TYPES, SearchHitView } from '../../../schema/tools/search.ts';
import { TASK_STATES } from '../../../schema/tools/tasks.ts';

/** SPEC part 8 "Reads": 20 a page, at most 25; the query is cut to 200 characters. */
export const SEARCH_PAGE = 20;
export const QUERY_CHARS = 200;
const SNIPPET = 240;

export type SearchType = (typeof SEARCH_TYPES)[number];
const THREAD_STATES = ['open', 'answered', 'folded'] as const;
/**
 * `is:` takes a thread's status (threads, their posts, and for `open` the tasks open to anyone),
 * a task's state (tasks only), or `disputed` (sections whose flag is open).
 */
const STATES = [...THREAD_STATES, 'disputed', ...TASK_STATES.filter((state) => state !== 'open')] as const;
type State = (typeof STATES)[number];

export type SearchQuery = {
  /** The query as searched: cut to 200 characters. */
  q: string;
  words: string[];
  types: SearchType[];
  hub: string | null;
  state: State | null;
};

/** The kinds a state applies to: a thread's status to threads and posts (and `open` to tasks too), a task's to tasks. */
function typesWith(state: State | null): readonly SearchType[] {
  if (state === null) return SEARCH_TYPES;
  if (state === 'disputed') return ['section'];
  if (state === 'open') return ['thread', 'task', 'post'];
  return (THREAD_STATES as readonly string[]).includes(state) ? ['thread', 'post'] : ['task'];
}

/** Splits `q` into words and the filter tokens of SPEC part 4 (`type:`, `hub:`, `is:`, `in:posts`). */
export function parseQuery(raw: string): SearchQuery {
  const q = raw.slice(0, QUERY_CHARS);
  const words: string[] = [];
  const named = new Set<SearchType>();
  let hub: string | null = null;
  let state: State | null = null;
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
      state = value as State;
    } else if (key === 'hub' && value) {
      hub = value.replace(/^\//, '');
    } else {
      words.push(token);
    }
  }
  const kinds = typesWith(state);
  const types = kinds.filter((type) => !named.size || named.has(type));
  return { q, words, types, hub, state };
}

const badToken = (token: string, rule: string) =>
  invalid(`Unknown filter ${JSON.stringify(token.slice(0, 40))}: ${rule}. Leave it out to search all kinds.`, { issues: [{ path: 'q', message: rule }] });

/** A hit as the database gives it: the fields the results show (the tool contract's), its text and its time. */
export const HitRow = SearchHitView.pick({ type: true, id: true, title: true, hub_slug: true, hub_name: true, thread_id: true, pad_id: true, parent_title: true, state: true, seq: true }).extend({
  text: z.string().nullable(),
  updated_at: z.number(),
});
export type SearchHit = Omit<z.infer<typeof HitRow>, 'text'> & { snippet: string | null };
export type SearchPage = { query: SearchQuery; hits: SearchHit[]; nextCursor: string | undefined; personal: boolean };

const TsQueryRow = z.object({ query: z.string() });

/**
 * How many matches of each kind are ranked, newest first. A short prefix or a common word is in a
 * large part of all posts: ranking 70,000 of 100,000 took over 200 ms; the newest 200 (found newest
 * first through posts_created when there are many, by the GIN index when there are few) rank in a few.
 */
const CANDIDATES = 200;

export const OffsetCursor = z.object({ o: z.number().int().min(0).max(10_000), q: z.string() });

/** The offset a cursor of this query (named by `fingerprint`) carries on from; another query's cursor is refused. */
export function cursorOffset(cursor: string | undefined, fingerprint: string, refusal: string): number {
  if (cursor === undefined) return 0;
  const after = decodeCursor(cursor, OffsetCursor);
  if (after.q !== fingerprint) throw invalid(refusal, { issues: [{ path: 'cursor', message: 'Cursor of another query.' }] });
  return after.o;
}

export const nextOffset = (rows: number, limit: number, skip: number, fingerprint: string) =>
  rows > limit && skip + limit <= 10_000 ? encodeCursor({ o: skip + limit, q: fingerprint }) : undefined;

/**
 * Everything the reader may read that matches, best first: hubs, pads, pad sections, threads, tasks
 * and posts, each under the rules of `readableScope` (a section as its pad, a task and a post as
 * their thread). Each word matches as a prefix.
 */
export async function search(core: Core, conn: CommonQueryMethods, reader: Actor | null, input: { q: string; limit?: number | undefined; cursor?: string | undefined }): Promise<SearchPage> {
  const query = parseQuery(input.q);
  const limit = Math.min(input.limit ?? SEARCH_PAGE, SEARCH_MAX);
  const fingerprint = sha256Hex(query.q).slice(0, 16);
  const skip = cursorOffset(input.cursor, fingerprint, 'That cursor belongs to another query; pass the same q with the cursor, or leave the cursor out.');
  const text = query.words.join(' ');
  if (!query.types.length) return { query, hits: [], nextCursor: undefined, personal: reader !== null };

  // Sections whose text a version changed are brought up to date first (sync/sectionText.ts).
  if (query.types.includes('section')) await catchUpSectionText(core.db, 'all');
  const scope = readableScope(core, reader);
  const inHub = query.hub === null ? sql.fragment`true` : sql.fragment`h.slug = ${query.hub}`;
  // Each word matches as a prefix; the words are split by the same parser that made the columns. The
  // query is made first and sent as a constant: planned with it, each kind's GIN index is used and the
  // planner knows how common the words are (made in the same statement, it was a join, and the smaller
  // tables were read whole).
  const tsquery = text ? await conn.oneFirst(sql.type(TsQueryRow)`
    SELECT to_tsquery('simple', coalesce((SELECT string_agg(quote_literal(lexeme) || ':*', ' & ')
      FROM unnest(to_tsvector('simple', ${text}))), ''))::text AS query`) : '';
  const matches = (column: FragmentSqlToken) => (text ? sql.fragment`${column} @@ ${tsquery}::tsquery` : sql.fragment`true`);
  const rank = text ? sql.fragment`ts_rank(c.tsv, ${tsquery}::tsquery)` : sql.fragment`0::real`;
  // Each kind's newest matches, ranked: enough for every page up to the cursor's.
  const candidates = Math.max(CANDIDATES, skip + limit + 1);
  const ranked = (part: FragmentSqlToken) => sql.fragment`
    SELECT type, id, title, hub_slug, hub_name, thread_id, pad_id, parent_title, state, seq, text, updated_at, ${rank}
    FROM (${part} ORDER BY 12 DESC LIMIT ${candidates}) c (type, id, title, hub_slug, hub_name, thread_id, pad_id, parent_title, state, seq, text, updated_at, tsv)`;
  const threadState = query.state === null ? sql.fragment`true` : sql.fragment`t.status = ${query.state}`;
  const taskState = query.state === null ? sql.fragment`true` : sql.fragment`k.state = ${query.state}`;
  // A section reads disputed while a flag on it is open (SPEC part 3).
  const disputed = sql.fragment`EXISTS (SELECT 1 FROM threads f WHERE f.about_pad_id = p.id AND f.about_block = s.section_id AND f.flag = 'open')`;
  const sectionState = query.state === 'disputed' ? disputed : sql.fragment`true`;

  const parts: Record<SearchType, FragmentSqlToken> = {
    hub: sql.fragment`SELECT 'hub' AS type, h.id, h.name AS title, h.slug AS hub_slug, h.name AS hub_name, NULL::text AS thread_id, NULL::text AS pad_id,
        NULL::text AS parent_title, ${core.config.publicThreads ? sql.fragment`h.audience` : sql.fragment`'private'`} AS state, NULL::int AS seq, left(h.readme, 2000) AS text, h.updated_at, h.search_tsv AS tsv
      FROM hubs h WHERE ${matches(sql.fragment`h.search_tsv`)} AND ${inHub} AND ${scope.hub}`,
    thread: sql.fragment`SELECT 'thread', t.id, t.title, h.slug, h.name, t.id, NULL::text, NULL::text, t.status, NULL::int, NULL::text, t.updated_at, t.search_tsv
      FROM threads t JOIN hubs h ON h.id = t.hub_id WHERE ${matches(sql.fragment`t.search_tsv`)} AND ${inHub} AND ${threadState} AND ${scope.thread}`,
    pad: sql.fragment`SELECT 'pad', p.id, p.title, h.slug, h.name, p.thread_id, p.id, NULL::text, 'version ' || p.version, NULL::int, NULL::text, p.updated_at, p.search_tsv
      FROM pads p JOIN hubs h ON h.id = p.hub_id WHERE ${matches(sql.fragment`p.search_tsv`)} AND ${inHub} AND ${scope.pad}`,
    section: sql.fragment`SELECT 'section', s.section_id, s.title, h.slug, h.name, p.thread_id, p.id, p.title,
        CASE WHEN ${disputed} THEN 'disputed' ELSE 'settled' END, NULL::int, left(s.body, 2000), s.updated_at, s.search_tsv
      FROM pad_sections s JOIN pads p ON p.id = s.pad_id JOIN hubs h ON h.id = p.hub_id
      WHERE ${matches(sql.fragment`s.search_tsv`)} AND ${inHub} AND ${sectionState} AND ${scope.pad}`,
    task: sql.fragment`SELECT 'task', k.id, k.title, h.slug, h.name, t.id, NULL::text, t.title, k.state, NULL::int, left(k.details, 2000), k.updated_at, k.search_tsv
      FROM tasks k JOIN threads t ON t.id = k.thread_id JOIN hubs h ON h.id = t.hub_id
      WHERE ${matches(sql.fragment`k.search_tsv`)} AND ${inHub} AND ${taskState} AND ${scope.thread}`,
    post: sql.fragment`SELECT 'post', o.id, t.title, h.slug, h.name, t.id, NULL::text, NULL::text, t.status, o.seq, left(o.body, 2000), o.created_at, o.search_tsv
      FROM posts o JOIN threads t ON t.id = o.thread_id JOIN hubs h ON h.id = t.hub_id
      WHERE o.hidden_at IS NULL AND o.deleted_at IS NULL AND ${matches(sql.fragment`o.search_tsv`)} AND ${inHub} AND ${threadState} AND ${scope.thread}`,
  };
  const rows = await conn.any(sql.type(HitRow.extend({ rank: z.number() }))`
    SELECT * FROM (${sql.join(query.types.map((type) => ranked(parts[type])), sql.fragment` UNION ALL `)})
      hits (type, id, title, hub_slug, hub_name, thread_id, pad_id, parent_title, state, seq, text, updated_at, rank)
    ORDER BY rank DESC, updated_at DESC, id
    LIMIT ${limit + 1} OFFSET ${skip}`);
  const lower = query.words.map((word) => word.toLowerCase());
  const hits = rows.slice(0, limit).map(({ rank: _rank, text: body, ...hit }) => ({ ...hit, snippet: body ? snippet(body, lower) : null }));
  return { query, hits, nextCursor: nextOffset(rows.length, limit, skip, fingerprint), personal: reader !== null };
}

/** A window of the text around the first word found, whole when short. */
function snippet(text: string, words: readonly string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET) return flat;
  const lowered = flat.toLowerCase();
  const at = Math.min(...words.map((word) => lowered.indexOf(word)).filter((index) => index >= 0), flat.length);
  const start = at === flat.length ? 0 : Math.max(0, at - 60);
  return `${start > 0 ? '…' : ''}${flat.slice(start, start + SNIPPET)}${start + SNIPPET < flat.length ? '…' : ''}`;
}
