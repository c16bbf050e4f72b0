import { sql, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { applyDeltas, type Delta, type VersionBlock } from '../../../sync/blockLists.ts';
import { sectionRows } from '../../../sync/padSections.ts';
import { blocksAt } from '../../../sync/versions.ts';
import { deliver } from '../inbox/inbox.ts';
import { HOUR, movedObjects, type TransactionRule } from './rule.ts';
import { ownersAndHelpers } from '../places/deciders.ts';

/** SPEC part 8 "Rulebook timers": 3 reversals of one section by 2 or more humans within 72 hours. */
export const WAR_HOURS = 72;
export const WAR_REVERSALS = 3;
export const WAR_HUMANS = 2;
/** The most versions of one pad a run reads back (the newest of the window): typing makes many. */
const MAX_VERSIONS = 1_000;

/** One version as the rule folds it: who stands behind it (a human, for an agent its linked one) and the block list after it. */
export type Step = { version: number; human: string | null; blocks: readonly VersionBlock[] };
export type Reversal = { section: string; version: number; human: string };

const GONE = '\u0000gone';

/** A section's text as a reversal compares it: its heading, level and body. */
const sectionTexts = (blocks: readonly VersionBlock[]) => new Map(sectionRows(blocks).map((row) => [row.id, `${row.level}\n${row.title}\n${row.body}`]));

/**
 * The reversals in a run of versions after `base`: a version that puts a section back to a text it
 * had at an earlier version (a removed section counts as a text), undoing a change someone else made
 * (a human's own typing undone by them is no reversal). Pure, so the rule's judgement is testable alone.
 */
export function reversalsIn(base: readonly VersionBlock[], steps: readonly Step[]): Reversal[] {
  const texts = sectionTexts(base);
  const seen = new Map([...texts].map(([id, text]) => [id, new Set([text])]));
  const writers = new Map<string, string | null>();
  const out: Reversal[] = [];
  for (const step of steps) {
    const next = sectionTexts(step.blocks);
    for (const id of new Set([...texts.keys(), ...next.keys()])) {
      const [was, now] = [texts.get(id) ?? GONE, next.get(id) ?? GONE];
      if (was === now) continue;
      const known = seen.get(id) ?? new Set([GONE]);
      if (step.human && known.has(now) && writers.get(id) !== step.human && writers.has(id)) out.push({ section: id, version: step.version, human: step.human });
      known.add(now);
      seen.set(id, known);
      writers.set(id, step.human);
    }
    texts.clear();
    for (const [id, text] of next) texts.set(id, text);
  }
  return out;
}

const PadRow = z.object({ id: z.string(), first: z.number() });
const StepRow = z.object({ version: z.number(), human: z.string().nullable(), delta: z.array(z.array(z.string().nullable())).nullable(), list: z.array(z.tuple([z.string(), z.string()])).nullable() });
const WarRow = z.object({ pad_id: z.string(), section_id: z.string(), parties: z.array(z.string()), hub_id: z.string(), pad_title: z.string(), section_title: z.string(), last: z.string() });

/** The versions of a pad from `first`, each with its writer's human and its block list (a delta, or a checkpoint's texts). */
async function stepsFrom(tx: DatabaseTransactionConnection, padId: string, first: number): Promise<Step[]> {
  const base = first > 1 ? ((await blocksAt(tx, padId, first - 1))?.blocks ?? []) : [];
  const rows = await tx.any(sql.type(StepRow)`
    SELECT v.version, coalesce(p.linked_human, v.actor_id) AS human, v.delta,
      (SELECT jsonb_agg(jsonb_build_array(e.ref->>0, coalesce(t.text, '')) ORDER BY e.ord)
       FROM jsonb_array_elements(v.blocks) WITH ORDINALITY AS e(ref, ord)
       LEFT JOIN pad_block_texts t ON t.pad_id = v.pad_id AND t.hash = e.ref->>1) AS list
    FROM pad_versions v LEFT JOIN participants p ON p.id = v.actor_id
    WHERE v.pad_id = ${padId} AND v.version >= ${first} ORDER BY v.version`);
  let blocks: readonly VersionBlock[] = base;
  const steps: Step[] = [{ version: first - 1, human: null, blocks: base }];
  for (const row of rows) {
    blocks = row.list ? row.list.map(([id, text]) => ({ id, text })) : applyDeltas(blocks, [row.delta as Delta]);
    steps.push({ version: row.version, human: row.human, blocks });
  }
  return steps;
}

/**
 * Edit war (SPEC part 3 "Edit war"): reads the versions of pads changed in the last 72 hours (not on
 * the write path, so edits stay fast), records their reversals in `section_reversals`, and gives a
 * section with 3 reversals by 2 or more humans in 72 hours (an agent counts with its linked human, a
 * sub-agent with its parent) an `edit_war` mark naming those humans as its parties; the hub's owner
 * and helpers are told. Reversals at or before a version someone accepted into the section (which
 * ends a war) no longer count; those older than the window are dropped. A section already marked is
 * left as it is, so a second run moves nothing.
 */
export const editWar: TransactionRule = {
  name: 'edit_war',
  async apply(tx, now) {
    const since = new Date(now.getTime() - WAR_HOURS * HOUR).toISOString();
    // Reversals past the window count no more, and the window's are read again from the versions.
    await tx.query(sql.unsafe`DELETE FROM section_reversals WHERE created_at <= ${since}`);
    // Only pads with a change and 3 reversals' worth of versions in the window can hold a war: a
    // reversal undoes a change made in the window.
    const pads = await tx.any(sql.type(PadRow)`
      SELECT p.id, greatest((SELECT min(v.version) FROM pad_versions v WHERE v.pad_id = p.id AND v.created_at > ${since}), p.version - ${MAX_VERSIONS} + 1) AS first
      FROM pads p WHERE p.updated_at > ${since} AND p.deleted_at IS NULL
        AND (SELECT count(*) FROM pad_versions v WHERE v.pad_id = p.id AND v.created_at > ${since}) > ${WAR_REVERSALS}`);
    for (const pad of pads) {
      const steps = await stepsFrom(tx, pad.id, pad.first);
      const found = reversalsIn(steps[0]!.blocks, steps.slice(1));
      if (!found.length) continue;
      await tx.query(sql.unsafe`
        INSERT INTO section_reversals (pad_id, section_id, version, human_id, created_at)
        SELECT ${pad.id}, r.section, r.version, r.human, v.created_at
        FROM ${sql.unnest(found.map((r) => [r.section, r.version, r.human]), ['text', 'int4', 'text'])} AS r(section, version, human)
        JOIN pad_versions v ON v.pad_id = ${pad.id} AND v.version = r.version
        ON CONFLICT DO NOTHING`);
    }
    const wars = await tx.any(sql.type(WarRow)`
      WITH counted AS (
        SELECT r.pad_id, r.section_id, array_agg(DISTINCT r.human_id) AS parties, max(r.version) AS version,
               (array_agg(r.human_id ORDER BY r.version DESC))[1] AS last
        FROM section_reversals r
        WHERE r.created_at > ${since} AND r.created_at <= ${now.toISOString()}
          AND r.version > coalesce((SELECT max(s.accepted_version) FROM suggestions s
                                    WHERE s.pad_id = r.pad_id AND s.state = 'accepted' AND r.section_id = ANY(s.sections)), 0)
        GROUP BY r.pad_id, r.section_id
        HAVING count(*) >= ${WAR_REVERSALS} AND count(DISTINCT r.human_id) >= ${WAR_HUMANS}),
      marked AS (
        INSERT INTO section_marks (pad_id, section_id, kind, version, parties, created_at)
        SELECT c.pad_id, c.section_id, 'edit_war', c.version, c.parties, ${now.toISOString()} FROM counted c
        JOIN pad_sections ps ON ps.pad_id = c.pad_id AND ps.section_id = c.section_id
        ON CONFLICT DO NOTHING
        RETURNING pad_id, section_id, parties)
      SELECT m.pad_id, m.section_id, m.parties, p.hub_id, p.title AS pad_title, ps.title AS section_title, c.last
      FROM marked m JOIN counted c USING (pad_id, section_id) JOIN pads p ON p.id = m.pad_id
      JOIN pad_sections ps ON ps.pad_id = m.pad_id AND ps.section_id = m.section_id`);
    for (const war of wars) {
      const deciders = await ownersAndHelpers(tx, war.hub_id);
      const summary = `${war.pad_title} · ${war.section_title} (pad ${war.pad_id}, section ${war.section_id})`;
      await deliver(tx, deciders.map((to) => ({ to, kind: 'edit_war' as const, from: war.last, hub_id: war.hub_id, summary })));
    }
    return movedObjects(wars.map((war) => `${war.pad_id}#${war.section_id}`));
  },
};
