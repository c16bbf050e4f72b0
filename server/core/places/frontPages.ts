import { sql } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { readableScope } from '../search/readableScope.ts';

/**
 * What the home page and Explore list beyond the search lanes: the published hubs, and what changed
 * last (threads and pads together). Both read as the lanes do, under `readableScope`.
 */

const PublicHubRow = z.object({ slug: z.string(), name: z.string(), threads: z.number(), pads: z.number(), updated_at: z.number() });
export type PublicHub = z.infer<typeof PublicHubRow>;

/** Published hubs, the most recently changed first; none while public reading is off on the server. */
export async function publicHubs(core: Core, limit: number): Promise<readonly PublicHub[]> {
  if (!core.config.publicThreads) return [];
  return core.db.pool.any(sql.type(PublicHubRow)`
    SELECT h.slug, h.name, h.updated_at,
      (SELECT count(*)::int FROM threads t WHERE t.hub_id = h.id) AS threads,
      (SELECT count(*)::int FROM pads p WHERE p.hub_id = h.id) AS pads
    FROM hubs h WHERE h.audience = 'public'
    ORDER BY h.updated_at DESC, h.id LIMIT ${limit}`);
}

const ChangeRow = z.object({ type: z.enum(['thread', 'pad']), id: z.string(), title: z.string(), hub_slug: z.string(), hub_name: z.string(), updated_at: z.number() });
export type Change = z.infer<typeof ChangeRow>;

/** The threads and pads the reader may read, the last changed first. */
export async function recentChanges(core: Core, reader: Actor | null, limit: number): Promise<readonly Change[]> {
  const scope = readableScope(core, reader);
  return core.db.pool.any(sql.type(ChangeRow)`
    SELECT * FROM (
      (SELECT 'thread' AS type, t.id, t.title, h.slug AS hub_slug, h.name AS hub_name, t.updated_at
        FROM threads t JOIN hubs h ON h.id = t.hub_id WHERE ${scope.thread} ORDER BY t.updated_at DESC LIMIT ${limit})
      UNION ALL
      (SELECT 'pad', p.id, p.title, h.slug, h.name, p.updated_at
        FROM pads p JOIN hubs h ON h.id = p.hub_id WHERE ${scope.pad} ORDER BY p.updated_at DESC LIMIT ${limit})
    ) changes ORDER BY updated_at DESC, id LIMIT ${limit}`);
}
