/**
 * How attribution names the way a change came in beside its author's name (SPEC part 4, the three
 * kinds of caller; server/core/kernel/caller.ts records them): "by their assistant" for a host's
 * model acting as the person, "via <host>" for an agent chosen there with as_agent, nothing for an
 * agent on its own key or the person themselves ("agent", "direct"), which the author's kind says.
 */
export function callerNote(caller: string | null | undefined): string {
  if (caller === 'assistant') return 'by their assistant';
  if (caller?.startsWith('via ')) return caller;
  return '';
}
