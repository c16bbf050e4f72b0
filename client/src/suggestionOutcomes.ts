// What became of the suggestions a person sent to a pad: still waiting (open_pad lists the pad's
// waiting suggestions), or checked.
import { callTool } from './api'

export type SuggestionOutcome = { state: 'waiting' | 'accepted' | 'turned_down' | 'checked'; version?: number; note?: string }

export async function suggestionOutcomes(padId: string, ids: string[]): Promise<Record<string, SuggestionOutcome>> {
  const { data } = await callTool('open_pad', { pad_id: padId })
  const waiting = new Set(((data as { suggestions?: { id: string }[] }).suggestions ?? []).map((s) => s.id))
  return Object.fromEntries(ids.map((id) => [id, { state: waiting.has(id) ? 'waiting' : 'checked' } satisfies SuggestionOutcome]))
}
