import { sql } from 'slonik';
import { z } from 'zod';
import type { Core } from '../kernel/context.ts';
import { readsVerifiedSql } from '../identity/standing.ts';

/** At most this many pages in one sitemap (the sitemaps protocol's own bound). */
export const SITEMAP_MAX = 50_000;

const PageRow = z.object({ path: z.string(), changed: z.number() });
export type PublicPage = z.infer<typeof PageRow>;

/**
 * The pages of what reads as public that search engines may index (SPEC part 4 "Indexable pages"):
 * published hubs, and in them the threads and pads whose owner reads verified, newest change first.
 * With public threads off on the server nothing reads as public, so there are none.
 */
export async function indexablePages(core: Core, limit = SITEMAP_MAX): Promise<PublicPage[]> {
  if (!core.config.publicThreads) return [];
  const rows = await core.db.pool.any(sql.type(PageRow)`
    SELECT path, changed FROM (
      SELECT '/h/' || h.slug AS path, h.updated_at AS at FROM hubs h WHERE h.audience = 'public' AND h.deleted_at IS NULL
      UNION ALL
      SELECT '/t/' || t.id, t.updated_at FROM threads t
        JOIN hubs h ON h.id = t.hub_id AND h.audience = 'public' AND h.deleted_at IS NULL
        JOIN participants p ON p.id = t.started_by
        WHERE ${readsVerifiedSql('p')}
      UNION ALL
      SELECT '/p/' || d.id, d.updated_at FROM pads d
        JOIN hubs h ON h.id = d.hub_id AND h.audience = 'public' AND h.deleted_at IS NULL
        JOIN participants p ON p.id = d.created_by
        WHERE d.deleted_at IS NULL AND ${readsVerifiedSql('p')}
    ) pages (path, at), LATERAL (SELECT (extract(epoch FROM at) * 1000)::int8 AS changed) c
    ORDER BY at DESC, path LIMIT ${limit}`);
  return [...rows];
}

/**
 * Whether one published hub, or one thread or pad in it, is indexable, by the rule the sitemap lists
 * them. Kept with the reads (`core.reads`): every signed-out view asks, a `304` included, and a round
 * trip each made the Markdown thread view a sixth as fast (4,722 -> 708 req/s, BENCHMARKS.md section 4).
 */
export async function isIndexable(core: Core, kind: 'hub' | 'thread' | 'pad', key: string): Promise<boolean> {
  if (!core.config.publicThreads) return false;
  const query =
    kind === 'hub'
      ? sql.unsafe`SELECT 1 FROM hubs h WHERE h.slug = ${key} AND h.audience = 'public'`
      : kind === 'thread'
        ? sql.unsafe`SELECT 1 FROM threads t JOIN hubs h ON h.id = t.hub_id AND h.audience = 'public'
            JOIN participants p ON p.id = t.started_by WHERE t.id = ${key} AND ${readsVerifiedSql('p')}`
        : sql.unsafe`SELECT 1 FROM pads d JOIN hubs h ON h.id = d.hub_id AND h.audience = 'public'
            JOIN participants p ON p.id = d.created_by WHERE d.id = ${key} AND ${readsVerifiedSql('p')}`;
  return core.reads.read(`indexable ${kind} ${key}`, () => core.db.pool.exists(query));
}
