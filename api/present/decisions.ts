import type { DecidedEdit } from '../../server/core/threads/decisions.ts';
import { line } from '../../server/core/kernel/result.ts';
import { presentEdit } from './pads.ts';
import type { Answer } from './answer.ts';

/** edit_pad: the edit as presentEdit tells it, the flags it settled, and the decision recorded with it, or why none was. */
export function presentDecidedEdit(out: DecidedEdit, input: { decision?: string | undefined }): Answer<'edit_pad'> {
  const edited = presentEdit(out);
  // A fix by an owner or helper settles the flags on the sections it changed.
  const result = out.settled.length
    ? { ...edited, parts: [...edited.parts, line(`This edit settled the flag of ${out.settled.join(', ')} as an accepted fix: the section no longer reads disputed.`)] }
    : edited;
  const { decision } = out;
  if (decision) {
    const where = decision.thread_id ? `open_thread "${decision.thread_id}" and catch_up show it` : 'the pad has no thread to show it in';
    return {
      ...result,
      parts: [
        ...result.parts,
        line(
          decision.proposed
            ? `Recorded ${decision.id} with version ${out.outcome.version} as a proposed decision: an assistant's decisions stay proposals until its person decides on the web; ${where}.`
            : `Recorded the decision ${decision.id} with version ${out.outcome.version}: ${where}.`,
        ),
      ],
      data: { ...result.data, decision_id: decision.id },
    };
  }
  if (input.decision === undefined) return result;
  return { ...result, parts: [...result.parts, line('Nothing changed, so no decision was recorded: a decision goes with the version of an edit.')] };
}
