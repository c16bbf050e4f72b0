import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../server/db/database.ts';
import type { Logger } from '../server/db/logger.ts';
import { VersionRow } from '../schema/rows.ts';
import { sectionRows } from './padSections.ts';
import { blocksAt } from './versions.ts';

/**
 * The text and search words of pad sections, derived after the versions that changed them
 * (migration 0037): a version writes a changed section's number and time and names its pad in
 * `pad_sections_stale`; the text follows here, read from the stored versions. Search brings every
 * named pad up to date before it reads, so it never finds old text; the sweep does it for pads quiet a
 * while, so a search seldom has any to do. Many edits of a busy pad cost one rewrite of its sections.
 */

/** The sweep looks every 2 s for pads quiet 5 s, or named for a minute however busy. */
const SWEEP_MS = 2_000;
const QUIET_MS = 5_000;
const OVERDUE_MS = 60_000;
/** Pads the sweep brings up to date in one look: the rest wait for the next. A search takes every one. */
const BATCH = 100;

const PadIdRow = z.object({ pad_id: z.string() });

/** Which named pads to bring up to date: all of them, or those quiet `quietMs` or named `overdueMs` ago. */
export type Due = 'all' | { quietMs: number; overdueMs: number };

/** Brings the sections of the pads named stale up to date, each in a transaction of its own; answers how many. */
export async function catchUpSectionText(db: Db, due: Due): Promise<number> {
  const when = due === 'all'
    ? sql.fragment`true`
    : sql.fragment`p.updated_at < now() - ${due.quietMs} * interval '1 ms' OR q.queued_at < now() - ${due.overdueMs} * interval '1 ms'`;
  const pads = await db.pool.anyFirst(sql.type(PadIdRow)`
    SELECT q.pad_id FROM pad_sections_stale q LEFT JOIN pads p ON p.id = q.pad_id
    WHERE p.id IS NULL OR ${when} ORDER BY q.queued_at LIMIT ${due === 'all' ? null : BATCH}`);
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

/** Every 2 s, the pads quiet 5 s (or named a minute ago) brought up to date; `stop` waits for a look under way. */
export function startSectionTextSweep(db: Db, log: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    // A look that takes longer than the period is not stacked on.
    running ??= catchUpSectionText(db, { quietMs: QUIET_MS, overdueMs: OVERDUE_MS })
      .then(() => {}, (error: unknown) => log.warn('pad section text not brought up to date yet; the next sweep tries again', { message: (error as Error).message }))
      .finally(() => (running = null));
  }, SWEEP_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
