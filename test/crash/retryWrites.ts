import { callAfterRestart, mcpDoor, restDoor, type Answer, type Door } from './doors.ts';
import { acknowledged, ackData, inFlight, type CycleLog, type Write } from './ledger.ts';
import { occurrences, type PadState, type ThreadState } from './readBack.ts';
import type { StoreRun } from './stageCycle.ts';

/** Whether the restarted server holds what the write adds, as read before any retry. */
function applied(write: Write, pads: Map<string, PadState>, threads: Map<string, ThreadState>): boolean {
  if (write.effect === 'post') return occurrences(threads.get(write.target)!.text, write.token) > 0;
  const pad = pads.get(write.target)!;
  if (write.effect === 'insert') return pad.blocks.some((b) => b.text.includes(write.token));
  return pad.blocks.some((b) => b.id === write.block && b.text === write.text);
}

const idOf = (write: Write, answer: Answer) => (answer.ok ? String(write.tool === 'post_reply' ? answer.data.post_id : `${answer.data.edit_id} (version ${answer.data.version})`) : 'nothing');

/**
 * The calls the kill left without an answer, sent again exactly as before (same door, arguments and
 * idempotency key), as an agent retries: each must be acknowledged, and replayed if the first call
 * had been applied. Each worker's last acknowledged call is sent again too: its key must replay it.
 */
export async function retryWrites(store: StoreRun, log: CycleLog, pads: Map<string, PadState>, threads: Map<string, ThreadState>): Promise<{ violations: string[]; count: number }> {
  const out: string[] = [];
  const lastAcked = new Map<string, Write>();
  for (const write of log.writes) if (acknowledged(write)) lastAcked.set(write.worker, write);
  const retries = [...log.writes.filter(inFlight), ...lastAcked.values()];
  let mcp: Door | null = null;
  try {
    for (const write of retries) {
      const wasInFlight = inFlight(write);
      const door = write.door === 'mcp' ? (mcp ??= await mcpDoor(store.server.url, store.key)) : restDoor(store.server.url, store.key);
      const answer = await callAfterRestart(door, write.tool, write.args);
      if (wasInFlight) write.retry = answer;
      const what = `${write.tool} ${write.token} via ${write.door}`;
      const data = ackData(write, answer);
      if (!data) {
        out.push(`${what}, sent again after the restart with its key, was not acknowledged: ${answer.ok ? JSON.stringify(answer.data) : answer.error}`);
        continue;
      }
      if (write.tool === 'edit_pad') store.known.raisePad(write.target, Number(data.version));
      const replayed = data.replayed === true;
      if (!wasInFlight) {
        const first = idOf(write, write.answer!);
        if (!replayed || idOf(write, answer) !== first) out.push(`${what} was acknowledged as ${first}; the same key after the restart answered ${replayed ? 'a replay of' : 'a new write,'} ${idOf(write, answer)}`);
        continue;
      }
      const wasApplied = applied(write, pads, threads);
      if (wasApplied && !replayed) out.push(`${what} was in flight at the kill and had been applied, yet its retry with the same key wrote it again (${idOf(write, answer)})`);
      if (!wasApplied && replayed) out.push(`${what} was in flight at the kill; its retry was replayed as ${idOf(write, answer)}, but the store does not hold the write`);
    }
  } finally {
    await mcp?.close().catch(() => {});
  }
  return { violations: out, count: retries.length };
}
