import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../server/db/database.ts';
import type { Logger } from '../server/db/logger.ts';
import { VersionRow } from '../schema/rows.ts';
import { sectionRows } from './padSections.ts';
import { blocksAt } from './versions.ts';

/**
 * The text and search words of pad sections, derived after the versions that changed them
 * (migration 0038): a version writes a changed section's number and time and names its pad in
 * `pad_sections_stale`; the text follows here, read from the stored versions. Search brings every
 * named pad up to date before it reads, so it never finds old text; the sweep does it for pads quiet a
 * while, so a search seldom has any to do. Many edits of a busy pad cost one rewrite of its sections.
 */

/** The sweep looks every 2 s for pads quiet 5 s, or written for a minute however busy. */
const SWEEP_MS = 2_000;
const QUIET_MS = 5_000;
const OVERDUE_MS = 60_000;

const PadIdRow = z.object({ pad_id: z.string() });

/**
 * Brings the sections of the pads named stale up to date, each in a transaction of its own: every
 * named pad, or those of `padIds` still named. Answers how many.
 */
export async function catchUpSectionText(db: Db, padIds: 'all' | readonly string[]): Promise<number> {
  const which = padIds === 'all' ? sql.fragment`true` : sql.fragment`pad_id = ANY(${sql.array([...padIds], 'text')})`;
  const pads = await db.pool.anyFirst(sql.type(PadIdRow)`SELECT pad_id FROM pad_sections_stale WHERE ${which} ORDER BY queued_at`);
  let done = 0;
  for (const padId of pads) if (await catchUpPad(db, padId)) done++;
  return done;
}

/**
 * One pad's sections as its current version has them. The pad's row is held (shared) first, as a
 * version's statement takes it first too: no version commits meanwhile, and one waiting names the pad
 * again once this commits. Taking the name out first makes a second catch-up of the pad (another
 * instance's, another search's) wait for this one and then find nothing to do.
 */
async function catchUpPad(db: Db, padId: string): Promise<boolean> {
  return db.write(async (tx) => {
    const version = await tx.maybeOneFirst(sql.type(VersionRow)`SELECT version FROM pads WHERE id = ${padId} FOR SHARE`);
    const named = await tx.maybeOneFirst(sql.type(PadIdRow)`DELETE FROM pad_sections_stale WHERE pad_id = ${padId} RETURNING pad_id`);
    if (named === null || version === null) return false;
    const list = await blocksAt(tx, padId, version);
    const rows = sectionRows(list?.blocks ?? []);
    await tx.query(sql.unsafe`
      UPDATE pad_sections s SET body = f.body, search_tsv = pad_section_words(s.title, f.body)
      FROM ${sql.unnest(rows.map((row) => [row.id, row.body]), ['text', 'text'])} AS f(id, body)
      WHERE s.pad_id = ${padId} AND s.section_id = f.id
        AND (s.body, s.search_tsv) IS DISTINCT FROM (f.body, pad_section_words(s.title, f.body))`);
    return true;
  });
}

/**
 * The sweep of this instance: every 2 s, the pads it wrote versions of that have been quiet here 5 s
 * (or were first written a minute ago) are brought up to date, if still named. An instance that wrote
 * nothing sends nothing; a pad whose instance stopped before its sweep is brought up to date by the
 * next search. `stop` waits for a look under way.
 */
export function startSectionTextSweep(db: Db, log: Logger): { written(padId: string): void; stop(): Promise<void> } {
  /** Pads this instance wrote since its last look: when first, and when last. */
  const written = new Map<string, { first: number; last: number }>();
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    // A look that takes longer than the period is not stacked on.
    if (running) return;
    const now = Date.now();
    const due: string[] = [];
    for (const [padId, pad] of written) {
      if (now - pad.last < QUIET_MS && now - pad.first < OVERDUE_MS) continue;
      written.delete(padId);
      due.push(padId);
    }
    if (!due.length) return;
    running = catchUpSectionText(db, due)
      .then(
        () => {},
        (error: unknown) => log.warn('pad section text not brought up to date yet; the next search or version brings it', { message: (error as Error).message }),
      )
      .finally(() => (running = null));
  }, SWEEP_MS);
  timer.unref();
  return {
    written(padId) {
      const now = Date.now();
      written.set(padId, { first: written.get(padId)?.first ?? now, last: now });
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
