import { inline } from '../../server/core/framing.ts';
import { line, said, type Result, type TextPart } from '../../server/core/result.ts';
import type { SearchHit, SearchPage } from '../../server/core/search.ts';

const GROUPS = [
  ['hub', 'Hubs'],
  ['pad', 'Pads'],
  ['thread', 'Threads'],
  ['post', 'Posts'],
] as const;

const iso = (t: number) => new Date(t).toISOString();

/** Where a hit is read: the Markdown view of the hub, pad, thread or one post. */
export function hitLink(base: string, hit: SearchHit): string {
  if (hit.type === 'hub') return `${base}/h/${hit.hub_slug}`;
  if (hit.type === 'pad') return `${base}/p/${hit.id}`;
  if (hit.type === 'thread') return `${base}/t/${hit.id}`;
  return `${base}/t/${hit.thread_id}/m/${hit.id}`;
}

export const hitState = (hit: SearchHit) => (hit.type === 'post' ? `post ${hit.seq} · thread ${hit.state}` : hit.state);

/** Why nothing shows: said plainly, with what to try next. */
export function emptyNote({ query }: SearchPage): string {
  if (query.state === 'disputed') return 'Nothing is disputed: flags on pads are not searchable yet.';
  if (!query.types.length) return 'Sections and tasks are not searchable yet; search type:pad or type:thread instead.';
  return 'Nothing you can read matches. Fewer or shorter words match more (each word matches as a prefix); filters: type:, hub:, is:, in:posts.';
}

/** search_dotpad: hits grouped by kind, best first within each, then the next page's cursor. */
export function presentSearch(page: SearchPage, base: string): Result {
  const { hits, nextCursor } = page;
  const parts: TextPart[] = [line(`# Search: ${hits.length} result${hits.length === 1 ? '' : 's'}${nextCursor ? ' on this page' : ''}`)];
  if (!hits.length) parts.push(line(emptyNote(page)));
  for (const [type, heading] of GROUPS) {
    const group = hits.filter((hit) => hit.type === type);
    if (!group.length) continue;
    parts.push(line(`## ${heading} (${group.length})`));
    for (const hit of group) {
      parts.push(line(`- ${inline(hit.title)} · ${hit.id} · in ${hit.hub_slug} · ${hitState(hit)} · ${hitLink(base, hit)}`));
      if (hit.snippet) parts.push(said(hit.snippet));
    }
  }
  if (nextCursor) parts.push(line(`More: call search_dotpad with the same q and cursor "${nextCursor}".`));
  else if (hits.length) parts.push(line('Read one: open_hub, open_pad or open_thread with its id.'));
  return {
    parts,
    data: {
      results: hits.map((hit) => ({
        type: hit.type,
        id: hit.id,
        hub: hit.hub_slug,
        ...(hit.thread_id && hit.type !== 'thread' ? { thread_id: hit.thread_id } : {}),
        state: hit.state,
        ...(hit.seq !== null ? { seq: hit.seq } : {}),
        updated: iso(hit.updated_at),
        link: hitLink(base, hit),
      })),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
    },
    view: () => ({
      groups: GROUPS.map(([type, heading]) => ({
        type,
        heading,
        hits: hits.filter((hit) => hit.type === type).map((hit) => ({ ...hit, state: hitState(hit), link: hitLink(base, hit), updated: iso(hit.updated_at) })),
      })).filter((group) => group.hits.length),
      empty: hits.length ? null : emptyNote(page),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
    }),
  };
}
