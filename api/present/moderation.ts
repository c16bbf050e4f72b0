import { inline } from '../../server/core/kernel/framing.ts';
import { line, type TextPart } from '../../server/core/kernel/result.ts';
import type { UndoCounts, UndoOutcome, UndoTarget } from '../../server/core/policies/undoEverything.ts';
import type { Takeover, TakeoverRequest } from '../../server/core/places/takeover.ts';
import type { UndoPreviewView, TakeoverNotice } from '../../schema/tools/moderation.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const tally = (c: UndoCounts) => `${count(c.posts, 'post')}, ${count(c.edits, 'pad edit')}, ${count(c.suggestions, 'suggestion')}, ${count(c.claims, 'task claim')}`;

export function presentUndo(out: UndoOutcome): Answer<'undo_everything'> {
  const who = `${inline(out.person.name)} (${out.person.id})`;
  const parts: TextPart[] = [
    line(
      out.takenBack
        ? `Took back undo ${out.runId} of ${who} in ${out.hub.slug}: ${tally(out)} restored.`
        : out.runId
          ? `Undid ${who} in ${out.hub.slug} (undo ${out.runId}): ${tally(out)}. undo_everything with take_back: true restores it.`
          : `${who} has nothing left to undo in ${out.hub.slug}.`,
    ),
  ];
  if (out.linked) parts.push(line(`With include_linked, posts of the last 72 hours by ${out.linked.join(', ')} are hidden too.`));
  if (out.conflicts.length) parts.push(line(`Left as they are, changed by others since: ${out.conflicts.map((c) => `${c.pad_id} ${c.block_id}`).join('; ')}.`));
  return {
    parts,
    data: {
      hub_id: out.hub.id,
      participant_id: out.person.id,
      run_id: out.runId,
      taken_back: out.takenBack,
      posts: out.posts,
      edits: out.edits,
      suggestions: out.suggestions,
      claims: out.claims,
      ...(out.linked ? { linked: [...out.linked] } : {}),
      conflicts: out.conflicts,
    },
  };
}

export function presentUndoPreview({ target, counts, last }: { target: UndoTarget; counts: UndoCounts; last: { id: string; created_at: number } | null }): Answer<'ui_undo_preview'> {
  return {
    parts: [line(`Undoing ${inline(target.person.name)} in ${target.hub.slug} would undo ${tally(counts)}.`)],
    data: {},
    view: (): UndoPreviewView => ({ participant_id: target.person.id, name: target.person.name, ...counts, last_run: last && { id: last.id, at: iso(last.created_at) } }),
  };
}

export const takeoverNotice = (request: TakeoverRequest): TakeoverNotice => ({
  request_id: request.id,
  asker: { id: request.asker_id, name: request.asker_name },
  asked: iso(request.created_at),
  due: iso(request.due),
});

export function presentTakeover({ hub, status, request }: Takeover): Answer<'take_over_hub'> {
  const text = {
    taken_over: `You own ${hub.slug} now; its old owner is a helper.`,
    asked: `You asked to take over ${hub.slug}: it goes to you on ${request ? iso(request.due) : ''} unless the owner objects or acts. Its members see the notice.`,
    waiting: `Your request to take over ${hub.slug} is waiting: it goes through on ${request ? iso(request.due) : ''} unless the owner acts.`,
    objected: `You objected: the takeover request for ${hub.slug} ended, and the hub stays yours.`,
    no_request: `You own ${hub.slug}, and nobody is asking to take it over; your call counts as activity.`,
  }[status];
  return {
    parts: [line(text)],
    data: { hub_id: hub.id, slug: hub.slug, status, ...(request ? { request_id: request.id, due: iso(request.due) } : {}) },
  };
}
