// What became of the suggestions a person sent to a pad (ui_my_suggestions): waiting, or what the
// check made of them, with the checker's note.
import { callTool } from './api'
import type { ToolView } from '../../schema/tools/contract.ts'

export type SuggestionOutcome = ToolView<'ui_my_suggestions'>['suggestions'][number]

export async function suggestionOutcomes(padId: string): Promise<Record<string, SuggestionOutcome>> {
  const { view } = await callTool('ui_my_suggestions', { pad_id: padId })
  return Object.fromEntries(view.suggestions.map((s) => [s.id, s]))
}
