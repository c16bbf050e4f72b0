import { inline } from '../../server/core/kernel/framing.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { PadChange } from '../../server/core/checked/padChange.ts';
import type { Suggested, WaitingSuggestion } from '../../server/core/checked/suggestions.ts';
import type { ModeChange } from '../../server/core/checked/hubMode.ts';
import type { Verified } from '../../server/core/checked/verify.ts';
import type { WaitingSuggestionView } from '../../schema/tools/checked.ts';
import { presentDecidedEdit } from './decisions.ts';
import type { Answer } from './answer.ts';

const iso = (t: number) => new Date(t).toISOString();

const WHY: Record<Suggested['reason'], string> = {
  checked: 'is a Checked hub: members suggest and someone else checks',
  proposal: 'took it as a proposal (propose: true)',
  edit_war: 'has a section under an edit war: it takes suggestions only until someone outside the war accepts one',
};

/** Who checks a suggestion in its hub, as the text says it. */
const checkers = (slug: string) => `The owner and helpers of ${slug}, or a member with a track record, check it with verify {"id", "verdict": "verify" or "turn_down", "note"}`;

/** edit_pad when the edit was kept as a suggestion: nothing changed in the pad. */
export function presentSuggested(out: Suggested): Answer<'edit_pad'> {
  return {
    parts: [
      line(`Kept as suggestion ${out.suggestion_id}, waiting for a check: ${out.hub.slug} ${WHY[out.reason]}. The pad is unchanged (your base was version ${out.base_version}).`),
      line(`${checkers(out.hub.slug)}; you withdraw it with verdict "turn_down". Sections: ${out.sections.join(', ') || 'none'}. ${out.small ? 'Small: if nobody checks it, it goes in unchecked after 24 hours.' : 'Not small: it waits for a check.'}`),
    ],
    data: { suggestion_id: out.suggestion_id, pad_id: out.pad_id, state: 'waiting', base_version: out.base_version, sections: out.sections, small: out.small },
  };
}

/** edit_pad: an edit, or a suggestion. */
export const presentPadChange = (out: PadChange, input: { decision?: string | undefined }): Answer<'edit_pad'> =>
  'suggestion_id' in out ? presentSuggested(out) : presentDecidedEdit(out, input);

export function presentHubMode({ hub, mode, changed }: ModeChange): Answer<'set_hub_mode'> {
  const name = inline(hub.name);
  const what =
    mode === 'checked'
      ? `${name} is Checked${changed ? ' now' : ' already; nothing changed'}: members' edit_pad calls become suggestions that the owner, helpers or members with a track record check with verify.`
      : `${name} is Open${changed ? ' now' : ' already; nothing changed'}: edits go live at once and work counts as done on its author's say-so.`;
  return { parts: [line(what)], data: { hub_id: hub.id, slug: hub.slug, mode, changed } };
}

const DONE: Record<Verified['state'], string> = {
  accepted: 'Accepted',
  turned_down: 'Turned down',
  withdrawn: 'Withdrew',
  verified: 'Verified',
  unchanged: 'Nothing to check:',
};

export function presentVerify(out: Verified): Answer<'verify'> {
  const data = {
    id: out.id,
    subject: out.subject,
    state: out.state,
    ...(out.check_id ? { check_id: out.check_id } : {}),
    ...(typeof out.version === 'number' ? { version: out.version } : {}),
    ...(out.edit_id ? { edit_id: out.edit_id } : {}),
    ...(out.sections ? { sections: out.sections } : {}),
    ...(out.conflicts?.length ? { conflicts: out.conflicts } : {}),
  };
  if (out.subject === 'none') {
    return { parts: [line(`Nothing to verify: hub ${out.hub.slug} is Open, where work counts as done on its author's say-so. Your own "done" counts; nothing changed.`)], data };
  }
  const parts: TextPart[] = [];
  if (out.state === 'accepted') {
    parts.push(line(`Accepted ${out.id}: it is in the pad as version ${out.version}${out.edit_id ? ` (edit ${out.edit_id})` : ''}, attributed to its author; the check is yours. Sections marked checked: ${out.sections?.join(', ') || 'none'}.`));
    if (out.conflicts?.length) parts.push(line(`Left as they are (changed by others since its base): ${out.conflicts.map((c) => c.block_id).join(', ')}.`));
  } else if (out.state === 'withdrawn') parts.push(line(`Withdrew your suggestion ${out.id}; nothing reaches the pad.`));
  else parts.push(line(`${DONE[out.state]} ${out.subject} ${out.id}${out.task ? ` (task ${out.task.did.replace('_', ' ')})` : ''}; its author is told in their inbox.`));
  return { parts, data };
}

export const suggestionView = (s: WaitingSuggestion): WaitingSuggestionView => ({
  id: s.id,
  pad_id: s.pad_id,
  author: s.author,
  base_version: s.base_version,
  sections: s.sections,
  small: s.small,
  summary: s.summary,
  created_at: iso(s.created_at),
  changes: s.changes,
});

/** A waiting suggestion as lines for agents: who, on which version, and its changes block by block. */
export function suggestionParts(s: WaitingSuggestion): TextPart[] {
  const parts: TextPart[] = [line(`- ${s.id} by ${inline(s.author.name)}${s.author.kind === 'agent' ? ' (agent)' : ''} on version ${s.base_version}${s.small ? ' · small' : ''}: ${inline(s.summary)}`)];
  for (const c of s.changes) {
    parts.push(line(`  ${c.change} ${c.change === 'added' ? `after ${c.block_id}` : c.block_id}:`));
    if (c.before !== undefined) parts.push(said(c.before));
    if (c.change !== 'removed') parts.push(said(c.text));
  }
  return parts;
}

/** ui_review_queue: the suggestions waiting on the person, with their changes. */
export function presentReviewQueue(rows: readonly WaitingSuggestion[]): Answer<'ui_review_queue'> {
  return {
    parts: rows.length ? rows.flatMap(suggestionParts) : [line('No suggestions wait on you.')],
    data: { count: rows.length },
    view: () => ({ suggestions: rows.map((s) => ({ ...suggestionView(s), pad_title: s.pad_title, hub: s.hub })) }),
  };
}

/**
 * open_pad with the pad's waiting suggestions: ids and shapes in `data`, their texts in the answer's
 * text (framed as participants'), and how to check them.
 */
export function withSuggestions(answer: Answer<'open_pad'>, suggestions: readonly WaitingSuggestion[], hub: { slug: string; mode: 'open' | 'checked' }): Answer<'open_pad'> {
  if (!suggestions.length) return answer;
  const how =
    hub.mode === 'checked'
      ? `${checkers(hub.slug)}; verify accepts one into the pad as its author's edit.`
      : 'Any member but its author accepts one with verify {"id", "verdict": "verify", "note"} or turns it down with "turn_down".';
  return {
    parts: [...answer.parts, line(''), line(`${suggestions.length === 1 ? '1 suggestion waits' : `${suggestions.length} suggestions wait`} for a check. ${how}`), ...suggestions.flatMap(suggestionParts)],
    data: {
      ...answer.data,
      suggestions: suggestions.map((s) => ({
        id: s.id,
        author: s.author.id,
        base_version: s.base_version,
        sections: s.sections,
        small: s.small,
        created_at: iso(s.created_at),
        changes: s.changes.map((c) => ({ block_id: c.block_id, change: c.change })),
      })),
    },
    ...(answer.view ? { view: () => ({ ...answer.view!(), suggestions: suggestions.map(suggestionView) }) } : {}),
  };
}

/** show_dotpad with the suggestions waiting on the caller in Checked hubs. */
export function withWaitingOnYou(answer: Answer<'show_dotpad'>, suggestions: readonly WaitingSuggestion[]): Answer<'show_dotpad'> {
  if (!suggestions.length) return answer;
  const parts: TextPart[] = [line(''), line(`## Suggestions waiting on you (${suggestions.length}, oldest first): verify {"id", "verdict", "note"} accepts or turns one down; open_pad shows its changes.`)];
  for (const s of suggestions) {
    parts.push(line(`- ${s.id} · pad ${inline(s.pad_title)} (${s.pad_id}) · hub ${s.hub.slug} · by ${inline(s.author.name)}${s.small ? ' · small' : ''} · ${iso(s.created_at)}: ${inline(s.summary)}`));
  }
  return {
    ...answer,
    parts: [...answer.parts, ...parts],
    data: { ...answer.data, suggestions: suggestions.map((s) => ({ id: s.id, pad_id: s.pad_id, hub: s.hub.slug, small: s.small })) },
  };
}
