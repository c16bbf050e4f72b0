import { z } from 'zod';
import { padId } from './fields.ts';
import { SuggestionState } from '../rows.ts';

// ui_my_suggestions: what became of the suggestions the caller made to a pad.

export const OwnSuggestionsInput = z.object({ pad_id: padId });

export const OwnSuggestionsView = z.object({
  pad_id: z.string(),
  /** The caller's latest suggestions to the pad, newest first: waiting, or what their check made of them. */
  suggestions: z.array(
    z.object({
      id: z.string(),
      state: SuggestionState,
      base_version: z.number(),
      created_at: z.string(),
      /** The checker's note, once checked. */
      note: z.string().optional(),
      /** The version its acceptance (or unchecked merge) made. */
      accepted_version: z.number().optional(),
    }),
  ),
});
export type OwnSuggestionsView = z.infer<typeof OwnSuggestionsView>;
