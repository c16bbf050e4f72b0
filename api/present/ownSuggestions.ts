import type { OwnSuggestion } from '../../server/core/pads/ownSuggestions.ts';
import { line, said, type TextPart } from '../../server/core/kernel/result.ts';
import type { Answer } from './answer.ts';

const STATE_WORDS = { waiting: 'waiting', accepted: 'accepted', turned_down: 'turned down', merged_unchecked: 'went in unchecked', withdrawn: 'withdrawn' } as const;

/** ui_my_suggestions: each suggestion's state, its note (the checker's words, framed) and the version it made. */
export function presentOwnSuggestions(out: { padId: string; suggestions: readonly OwnSuggestion[] }): Answer<'ui_my_suggestions'> {
  const parts: TextPart[] = [line(out.suggestions.length ? `Your suggestions to ${out.padId}, newest first:` : `You have made no suggestion to ${out.padId}.`)];
  for (const s of out.suggestions) {
    parts.push(line(`- ${s.id}: ${STATE_WORDS[s.state]}${s.accepted_version !== null ? ` as v${s.accepted_version}` : ''}, from v${s.base_version}`));
    if (s.note) parts.push(said(s.note));
  }
  const suggestions = out.suggestions.map((s) => ({
    id: s.id,
    state: s.state,
    base_version: s.base_version,
    created_at: new Date(s.created_at).toISOString(),
    ...(s.note !== null ? { note: s.note } : {}),
    ...(s.accepted_version !== null ? { accepted_version: s.accepted_version } : {}),
  }));
  return { parts, data: { pad_id: out.padId, suggestions: suggestions.map(({ note: _note, ...rest }) => rest) }, view: () => ({ pad_id: out.padId, suggestions }) };
}
