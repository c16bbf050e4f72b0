import { inline } from '../../server/core/kernel/framing.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { SearchHit, SearchPage } from '../../server/core/search/search.ts';
import type { SearchHitView, SearchView } from '../../schema/tools/search.ts';
import type { Answer } from './answer.ts';

const GROUPS = [
  ['hub', 'Hubs'],
  ['pad', 'Pads'],
  ['section', 'Sections'],
  ['thread', 'Threads'],
  ['task', 'Tasks'],
  ['post', 'Posts'],
] as const;

const iso = (t: number) => new Date(t).toISOString();

/**
 * Where a hit is read: the hub, pad, one section of a pad, thread or one post; a task is read in its
 * thread. `md` gives the Markdown view's address.
 */
export function hitLink(base: string, hit: SearchHit, md = false): string {
  const ext = md ? '.md' : '';
  if (hit.type === 'hub') return `${base}/h/${hit.hub_slug}${ext}`;
  if (hit.type === 'pad') return `${base}/p/${hit.id}${ext}`;
  if (hit.type === 'section') return `${base}/p/${hit.pad_id}${ext}?section=${encodeURIComponent(hit.id)}`;
  if (hit.type === 'thread') return `${base}/t/${hit.id}${ext}`;
  if (hit.type === 'task') return `${base}/t/${hit.thread_id}${ext}`;
  return `${base}/t/${hit.thread_id}/m/${hit.id}${ext}`;
}

export const hitState = (hit: SearchHit) => (hit.type === 'post' ? `post ${hit.seq} · thread ${hit.state}` : hit.type === 'task' ? `task ${hit.state}` : hit.state);

/** Where a hit sits: its hub, and for a section its pad, for a task its thread. */
export const hitWhere = (hit: SearchHit) => (hit.parent_title === null ? inline(hit.hub_name) : `${inline(hit.parent_title)} · ${inline(hit.hub_name)}`);

/** Why nothing shows: said plainly, with what to try next. */
export function emptyNote({ query }: SearchPage): string {
  if (query.state === 'disputed') return 'No section you can read is disputed (has an open flag) and matches.';
  if (!query.types.length) {
    return `Nothing you named takes is:${query.state}: is:open, is:answered and is:folded are thread states (is:open also finds tasks open to anyone); the other is: values are task states.`;
  }
  return 'Nothing you can read matches. Fewer or shorter words match more (each word matches as a prefix); filters: type:, hub:, is:, in:posts.';
}

/** A hit as the web app lists it: where it sits, its state in words, and where to read it. */
const hitView = (hit: SearchHit, base: string): SearchHitView => ({
  type: hit.type,
  id: hit.id,
  title: hit.title,
  hub_slug: hit.hub_slug,
  hub_name: hit.hub_name,
  thread_id: hit.thread_id,
  pad_id: hit.pad_id,
  parent_title: hit.parent_title,
  state: hitState(hit),
  seq: hit.seq,
  snippet: hit.snippet,
  link: hitLink(base, hit),
  updated: iso(hit.updated_at),
});

/** search_dotpad: hits grouped by kind, best first within each, then the next page's cursor. */
export function presentSearch(page: SearchPage, base: string): Answer<'search_dotpad'> {
  const { hits, nextCursor } = page;
  const parts: TextPart[] = [line(`# Search: ${hits.length} result${hits.length === 1 ? '' : 's'}${nextCursor ? ' on this page' : ''}`)];
  if (!hits.length) parts.push(line(emptyNote(page)));
  for (const [type, heading] of GROUPS) {
    const group = hits.filter((hit) => hit.type === type);
    if (!group.length) continue;
    parts.push(line(`## ${heading} (${group.length})`));
    for (const hit of group) {
      const of = hit.type === 'section' ? ` of pad ${hit.pad_id}` : hit.type === 'task' ? ` in thread ${hit.thread_id}` : '';
      parts.push(line(`- ${inline(hit.title)} · ${hit.id}${of} · in ${hit.hub_slug} · ${hitState(hit)} · ${hitLink(base, hit)}`));
      if (hit.snippet) parts.push(said(hit.snippet));
    }
  }
  if (nextCursor) parts.push(line(`More: call search_dotpad with the same q and cursor "${nextCursor}".`));
  else if (hits.length) parts.push(line('Read one by its id: open_hub, open_pad (a section: mode "sections"), open_thread; a task: list_tasks in its thread.'));
  return {
    parts,
    data: {
      results: hits.map((hit) => ({
        type: hit.type,
        id: hit.id,
        hub: hit.hub_slug,
        ...(hit.thread_id && hit.type !== 'thread' ? { thread_id: hit.thread_id } : {}),
        ...(hit.type === 'section' ? { pad_id: hit.pad_id } : {}),
        state: hit.state,
        ...(hit.seq !== null ? { seq: hit.seq } : {}),
        updated: iso(hit.updated_at),
        link: hitLink(base, hit),
      })),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
    },
    view: (): SearchView => ({
      groups: GROUPS.map(([type, heading]) => ({
        type,
        heading,
        hits: hits.filter((hit) => hit.type === type).map((hit) => hitView(hit, base)),
      })).filter((group) => group.hits.length),
      empty: hits.length ? null : emptyNote(page),
      ...(nextCursor ? { next_cursor: nextCursor } : {}),
    }),
  };
}
