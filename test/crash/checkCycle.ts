import * as Y from 'yjs';
import { readBlocks } from '../../sync/blocks.ts';
import { connectProvider } from '../bench/setup.ts';
import { acknowledged, ackData, inFlight, type CycleLog, type Write } from './ledger.ts';
import { hasVersion, occurrences, readPad, readThread, type PadState, type ThreadState } from './readBack.ts';
import { retryWrites } from './retryWrites.ts';
import { stagedText, type StoreRun } from './stageCycle.ts';
import type { Stage } from './writers.ts';

/** What a cycle came to: the broken promises, and figures for the summary. */
export type Checked = { violations: string[]; figures: string };

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max)}…` : text);
const padText = (pad: PadState) => pad.blocks.map((b) => b.text).join('\n\n');

/** Everything the store holds of the pads and threads it was given, read with nothing written first. */
async function readAll(store: StoreRun) {
  const { url } = store.server;
  const pads = new Map<string, PadState>();
  const threads = new Map<string, ThreadState>();
  for (const padId of store.known.pads.keys()) pads.set(padId, await readPad(url, store.key, padId));
  for (const threadId of store.known.threads.keys()) threads.set(threadId, await readThread(url, store.key, threadId));
  return { pads, threads };
}

/** Versions never go back, and what the last checks saw is all still there, unchanged and in order. */
function checkFloors(store: StoreRun, pads: Map<string, PadState>, threads: Map<string, ThreadState>): string[] {
  const out: string[] = [];
  for (const [padId, known] of store.known.pads) {
    const now = pads.get(padId)!;
    if (now.version < known.floor) out.push(`pad ${padId}: version ${now.version} after the restart, but version ${known.floor} was acknowledged or read before the kill`);
    const at = new Map(now.blocks.map((block, index) => [block.id, { index, text: block.text }]));
    let last = -1;
    for (const block of known.blocks ?? []) {
      const found = at.get(block.id);
      if (!found) out.push(`pad ${padId}: block ${block.id} ("${clip(block.text)}"), there at the last checks, is gone`);
      else if (found.text !== block.text) out.push(`pad ${padId}: block ${block.id} read "${clip(block.text)}" at the last checks and now reads "${clip(found.text)}"`);
      else if (found.index < last) out.push(`pad ${padId}: block ${block.id} moved since the last checks`);
      if (found) last = found.index;
    }
  }
  for (const [threadId, known] of store.known.threads) {
    const now = threads.get(threadId)!;
    if (now.version < known.floor) out.push(`thread ${threadId}: version ${now.version} after the restart, but version ${known.floor} was read before the kill`);
    if (now.postCount < known.seqFloor) out.push(`thread ${threadId}: ${now.postCount} posts after the restart, but post seq ${known.seqFloor} was acknowledged`);
    const seqs = now.posts.map((p) => p.seq).join(',');
    const expected = Array.from({ length: now.postCount }, (_, i) => i + 1).join(',');
    if (seqs !== expected) out.push(`thread ${threadId}: post_count ${now.postCount} but the listed seqs are ${clip(seqs, 200)}`);
    const ids = new Set(now.posts.map((p) => p.id));
    const gone = (known.posts ?? []).filter((id) => !ids.has(id));
    if (gone.length) out.push(`thread ${threadId}: ${gone.length} posts there at the last checks are gone: ${clip(gone.join(', '), 200)}`);
  }
  return out;
}

/** Each post and inserted block of the cycle: once if acknowledged, at most once if in flight (`exact`: once, after retries). */
function checkTokens(log: CycleLog, pads: Map<string, PadState>, threads: Map<string, ThreadState>, exact: boolean): string[] {
  const out: string[] = [];
  for (const write of log.writes) {
    if (write.effect === 'rewrite') continue;
    const acked = acknowledged(write);
    const retried = exact && inFlight(write) && write.retry !== undefined && acknowledged(write, write.retry);
    if (!acked && !inFlight(write)) continue;
    // In flight and not (or not yet) retried: it may have been applied, but once at most.
    const wanted = acked || retried ? 'once' : 'at most once';
    const text = write.effect === 'post' ? threads.get(write.target)!.text : padText(pads.get(write.target)!);
    const count = occurrences(text, write.token);
    if (wanted === 'once' ? count !== 1 : count > 1) {
      const state = acked ? 'acknowledged' : retried ? 'in flight at the kill, then retried with its key' : 'in flight at the kill';
      out.push(`${write.effect === 'post' ? 'post' : 'inserted block'} ${write.token} (${state}, via ${write.door}) is there ${count} times, not ${wanted}`);
    }
    const data = ackData(write);
    if (write.effect === 'post' && data) {
      const { post_id: id, seq } = data;
      const listed = threads.get(write.target)!.posts.filter((p) => p.id === id);
      if (listed.length !== 1 || listed[0]!.seq !== seq) out.push(`post ${write.token} was acknowledged as ${id} seq ${seq}; the thread lists ${listed.map((p) => `seq ${p.seq}`).join(', ') || 'no such post'}`);
    }
  }
  return out;
}

/**
 * Each editor's own block holds the text of its last acknowledged rewrite, or of the rewrite in flight
 * at the kill (`exact`: after retries, the last rewrite sent).
 */
function checkOwnBlocks(stage: Stage, log: CycleLog, pad: PadState, exact: boolean): string[] {
  const out: string[] = [];
  for (const via of ['rest', 'mcp'] as const) {
    const rewrites = log.writes.filter((w) => w.effect === 'rewrite' && w.worker === via);
    const lastAcked = rewrites.findLastIndex((w) => acknowledged(w) || (exact && w.retry !== undefined && acknowledged(w, w.retry)));
    const pending = exact ? [] : rewrites.slice(lastAcked + 1).filter(inFlight);
    const expected = [lastAcked >= 0 ? rewrites[lastAcked]!.text : stagedText(stage.cycle, via), ...pending.map((w) => w.text)];
    const block = pad.blocks.find((b) => b.id === stage.own[via]);
    if (!block) out.push(`the own block ${stage.own[via]} of the ${via} editor is gone`);
    else if (!expected.includes(block.text)) out.push(`the own block of the ${via} editor reads "${clip(block.text)}"; expected ${expected.map((t) => `"${clip(t)}"`).join(' or ')}`);
  }
  return out;
}

/**
 * Every edit acknowledged with a version still has that version. Read before any retry writes, so a
 * lost version cannot have been made again by a later write.
 */
async function checkVersions(store: StoreRun, stage: Stage, log: CycleLog, pad: PadState): Promise<string[]> {
  const out: string[] = [];
  const edits = log.writes.flatMap((write) => {
    const data = write.tool === 'edit_pad' ? ackData(write) : null;
    return data ? [{ write, data }] : [];
  });
  for (const { write, data } of edits) {
    const version = Number(data.version);
    if (version < pad.version && !(await hasVersion(store.server.url, store.key, stage.pad, version))) {
      out.push(`edit ${write.token} (${data.edit_id}) was acknowledged as version ${version}; the pad, at version ${pad.version}, has no version ${version}`);
    }
  }
  return out;
}

/** Live typing the server acknowledged at least `graceMs` before the kill is in the typist's block, in order. */
function checkTyping(log: CycleLog, pad: PadState, graceMs: number): { violations: string[]; due: number } {
  const typing = log.typing!;
  const strokes = typing.strokes;
  const cutoff = log.killedAt! - graceMs;
  const due = strokes.filter((s) => s.ackedAt !== null && s.ackedAt <= cutoff).length;
  const block = pad.blocks.find((b) => b.id === typing.block);
  if (!block) return { violations: [`the typist's block ${typing.block} is gone`], due };
  const typed = typing.prefix + strokes.map((s) => s.text).join('');
  const kept = strokes.filter((s) => block.text.includes(s.text.trim())).length;
  if (!typed.startsWith(block.text)) return { violations: [`the typist's block reads "${clip(block.text, 200)}", which is not what was typed ("${clip(typed, 200)}")`], due };
  if (kept < due) {
    const lost = strokes[kept]!;
    const age = Math.round(log.killedAt! - lost.ackedAt!);
    return { violations: [`live typing: ${due} strokes were acknowledged at least ${graceMs} ms before the kill, only ${kept} survived; the first lost ("${lost.text.trim()}") was acknowledged ${age} ms before the kill`], due };
  }
  return { violations: [], due };
}

/**
 * Last, the typist's editor comes back as the web app's does after a restart: it sends the server
 * what it has and the server lacks (its unsaved typing, and anything the server showed it before the
 * kill but never saved). Nothing may then be there twice, and all that was typed is there.
 */
async function rejoinTypist(store: StoreRun, stage: Stage, log: CycleLog, threads: Map<string, ThreadState>): Promise<{ violations: string[]; pad: PadState | null }> {
  // Edits the server had shown the editor live, by calls the kill left without an answer.
  const shown = readBlocks(stage.typist.doc.getXmlFragment('default')).map((b) => b.text).join('\n\n');
  const leaked = log.writes.filter((w) => w.effect !== 'post' && inFlight(w) && shown.includes(w.token)).map((w) => `${w.token} via ${w.door}`);
  const live = await connectProvider({ url: store.server.url }, store.key, stage.pad);
  try {
    Y.applyUpdate(live.doc, Y.encodeStateAsUpdate(stage.typist.doc));
    const deadline = Date.now() + 10_000;
    while (live.provider.hasUnsyncedChanges && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (live.provider.hasUnsyncedChanges) return { violations: ['the typist\'s editor, back after the restart, was not answered within 10 s'], pad: null };
  } finally {
    live.close();
  }
  const pad = await readPad(store.server.url, store.key, stage.pad);
  const out = [...checkTokens(log, new Map([[stage.pad, pad]]), threads, true), ...checkOwnBlocks(stage, log, pad, true)].map((v) => `once the typist's editor was back: ${v}`);
  const typing = log.typing!;
  const typed = typing.prefix + typing.strokes.map((s) => s.text).join('');
  const block = pad.blocks.find((b) => b.id === typing.block);
  if (block?.text !== typed) out.push(`once the typist's editor was back, its block reads "${clip(block?.text ?? '(gone)', 200)}", not all it typed ("${clip(typed, 200)}")`);
  if (out.length && leaked.length) {
    out.push(`the typist's editor held edit_pad changes it was shown live before they were saved, by calls in flight at the kill (${leaked.join(', ')}): sending them back after the restart adds them to their keyed retries`);
  }
  return { violations: out, pad };
}

/** After the restart: read back, check every promise, retry what was in flight, check again, remember. */
export async function checkCycle(store: StoreRun, stage: Stage, log: CycleLog, graceMs: number): Promise<Checked> {
  const violations = log.anomalies.map((a) => `while the server ran: ${a}`);
  const before = await readAll(store);
  const pad = before.pads.get(stage.pad)!;
  violations.push(...checkFloors(store, before.pads, before.threads));
  violations.push(...checkTokens(log, before.pads, before.threads, false));
  violations.push(...checkOwnBlocks(stage, log, pad, false));
  violations.push(...(await checkVersions(store, stage, log, pad)));
  const typing = checkTyping(log, pad, graceMs);
  violations.push(...typing.violations);

  const retried = await retryWrites(store, log, before.pads, before.threads);
  violations.push(...retried.violations);
  const after = { pads: new Map(before.pads), threads: new Map(before.threads) };
  after.pads.set(stage.pad, await readPad(store.server.url, store.key, stage.pad));
  after.threads.set(stage.thread, await readThread(store.server.url, store.key, stage.thread));
  violations.push(...checkTokens(log, after.pads, after.threads, true));
  violations.push(...checkOwnBlocks(stage, log, after.pads.get(stage.pad)!, true));
  const rejoined = await rejoinTypist(store, stage, log, after.threads);
  violations.push(...rejoined.violations);
  if (rejoined.pad) after.pads.set(stage.pad, rejoined.pad);

  // What the next cycles must find unchanged.
  for (const [padId, state] of after.pads) {
    store.known.raisePad(padId, state.version);
    store.known.pads.get(padId)!.blocks = state.blocks;
  }
  for (const [threadId, state] of after.threads) {
    store.known.raiseThread(threadId, state.version, state.postCount);
    store.known.threads.get(threadId)!.posts = state.posts.map((p) => p.id);
  }
  store.pad = { id: stage.pad, length: padText(after.pads.get(stage.pad)!).length };
  // A write found wrong before the retries and still wrong after them is one finding.
  return { violations: [...new Set(violations)], figures: figures(log, typing.due, retried.count) };
}

function figures(log: CycleLog, due: number, retried: number): string {
  const count = (effect: Write['effect'][], pick: (w: Write) => boolean) => log.writes.filter((w) => effect.includes(w.effect) && pick(w)).length;
  const strokes = log.typing!.strokes;
  return [
    `posts ${count(['post'], acknowledged)} acknowledged, ${count(['post'], inFlight)} in flight`,
    `edits ${count(['insert', 'rewrite'], acknowledged)} acknowledged, ${count(['insert', 'rewrite'], inFlight)} in flight`,
    `typing ${strokes.filter((s) => s.ackedAt !== null).length} of ${strokes.length} strokes acknowledged, ${due} due to be durable`,
    `${retried} calls retried with their keys`,
  ].join('; ');
}
