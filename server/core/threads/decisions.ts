import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { Actor } from '../kernel/actor.ts';
import { isUnclickedAssistant } from '../kernel/caller.ts';
import type { Core } from '../kernel/context.ts';
import type { EditablePad } from '../kernel/editors.ts';
import { editPad, type EditPadInput, type PadEdit } from '../pads/padEdits.ts';
import type { PlannedWrite } from '../../db/plannedWrite.ts';
import { newId } from '../kernel/secrets.ts';
import { settleFixedFlags, settlesFlags } from './flags.ts';
import { threadsMoved } from '../kernel/afterCommit.ts';

/**
 * Decisions (SPEC part 4 `edit_pad` `decision`): a short text recorded with a pad edit, in the
 * transaction that commits the version it names, and shown where the pad's thread is read
 * (open_thread, catch_up). Recording one raises that thread's version.
 */
/** The newest decisions a thread's reading shows. */
export const DECISIONS_SHOWN = 20;

const Decision = z.object({
  id: z.string(),
  pad_id: z.string(),
  pad_title: z.string(),
  text: z.string(),
  pad_version: z.number(),
  by: z.object({ id: z.string(), name: z.string(), kind: z.enum(['human', 'agent']) }),
  at: z.number(),
  /** Recorded by a person's assistant with no click in the view: a proposal until the person decides (SPEC part 2). */
  proposed: z.boolean(),
});
export type Decision = z.infer<typeof Decision>;
export const DecisionsJson = z.array(Decision);

/**
 * The thread's newest decisions, oldest of them first, as one SQL expression yielding a JSON array;
 * with `since` (an SQL time), only those recorded after it.
 */
export function decisionsJson(threadId: string, since?: FragmentSqlToken) {
  const after = since === undefined ? sql.fragment`` : sql.fragment`AND d.created_at > ${since}`;
  return sql.fragment`(
    SELECT coalesce(json_agg(x ORDER BY x.at, x.id), '[]'::json) FROM (
      SELECT d.id, d.pad_id, p.title AS pad_title, d.text, d.pad_version, floor(extract(epoch FROM d.created_at) * 1000) AS at, d.proposed,
             json_build_object('id', a.id, 'name', a.name, 'kind', a.kind) AS by
      FROM decisions d JOIN pads p ON p.id = d.pad_id JOIN participants a ON a.id = d.decided_by
      WHERE d.thread_id = ${threadId} ${after}
      ORDER BY d.created_at DESC, d.id DESC
      LIMIT ${DECISIONS_SHOWN}) x)`;
}

export type Recorded = { id: string; thread_id: string | null; proposed: boolean };

/** Writes the decision beside the version `version` of the pad (inside that version's transaction). */
export async function recordDecision(
  tx: CommonQueryMethods,
  actor: Actor,
  { pad, hub }: EditablePad,
  input: { text: string; version: number; editId: string | null },
): Promise<Recorded> {
  const id = newId('dec_');
  await tx.query(sql.unsafe`
    INSERT INTO decisions (id, pad_id, thread_id, hub_id, text, decided_by, pad_version, edit_id, proposed)
    VALUES (${id}, ${pad.id}, ${pad.thread_id}, ${hub.id}, ${input.text}, ${actor.id}, ${input.version}, ${input.editId}, ${isUnclickedAssistant(actor)})`);
  if (pad.thread_id !== null) {
    await tx.query(sql.unsafe`UPDATE threads SET version = version + 1, updated_at = now() WHERE id = ${pad.thread_id}`);
    threadsMoved(tx, pad.thread_id);
  }
  return { id, thread_id: pad.thread_id, proposed: isUnclickedAssistant(actor) };
}

/**
 * An edit, the decision recorded with it (null when the call named none, or nothing changed: no
 * version to name), and the threads whose flag the edit settled as an accepted fix.
 */
export type DecidedEdit = PadEdit & { decision: Recorded | null; settled: string[] };

/**
 * edit_pad: the edit, and what goes with its version inside that version's transaction, so it
 * commits exactly when the version does and what the pipeline writes beside it (`write`) sees it: the
 * decision (with `decision`), and the flags the edit settles (settleFixedFlags).
 */
export async function editPadDeciding(
  core: Core,
  actor: Actor,
  target: EditablePad,
  input: EditPadInput & { decision?: string | undefined },
  write: PlannedWrite<DecidedEdit> | undefined,
): Promise<DecidedEdit> {
  const text = input.decision;
  let decision: Recorded | null = null;
  let settled: string[] = [];
  const inline = write?.inline;
  const edit = await editPad(core, actor, target, input, {
    async commit(tx, out) {
      if (text !== undefined) decision = await recordDecision(tx, actor, target, { text, version: out.outcome.version!, editId: out.outcome.editId });
      settled = await settleFixedFlags(tx, actor, target, out.outcome);
      await write?.commit(tx, { ...out, decision, settled });
    },
    // With no decision to record, only what the pipeline writes goes beside it; an edit that may settle
    // flags stands so only while its pad has none open, and is otherwise written again through `commit`.
    ...(inline && text === undefined
      ? {
          inline: (out: PadEdit) => {
            const beside = inline({ ...out, decision: null, settled: [] });
            return beside && settlesFlags(target.seat) ? { ...beside, onlyUnflagged: true } : beside;
          },
        }
      : {}),
  });
  return { ...edit, decision, settled };
}
