import { readBlocks } from '../../sync/blocks.ts';
import { connectProvider } from '../bench/setup.ts';
import { registerAgent } from '../support/server.ts';
import { mcpDoor, restDoor } from './doors.ts';
import type { Known } from './ledger.ts';
import type { ServerProcess } from './spawnServer.ts';
import { ownBlockText, tokenOf, type Stage } from './writers.ts';

/** One store under test, across its cycles. */
export type StoreRun = {
  label: 'pglite' | 'postgres';
  env: Record<string, string>;
  port: number;
  logFile: string;
  server: ServerProcess;
  key: string;
  hub: string;
  run: string;
  /** The pad the writers share, and its length after the last checks: past PAD_ROTATE_AT a new one is made. */
  pad: { id: string; length: number } | null;
  known: Known;
};

/** A pad holds 60,000 characters; the writers add a few thousand a cycle, so they move on well before. */
const PAD_ROTATE_AT = 20_000;

/** A setup write that must succeed: without it the cycle cannot run. */
async function must(store: StoreRun, tool: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const answer = await restDoor(store.server.url, store.key).call(tool, args);
  if (!answer.ok) throw new Error(`setup ${tool} failed: ${answer.error}`);
  return answer.data;
}

/**
 * The crew's agent and its hub: an agent a person adds under Settings (dev sign-in), as the tests
 * make theirs, so it has no daily allowance to run out of.
 */
export async function enlist(url: string): Promise<{ key: string; hub: string }> {
  const { key } = await registerAgent({ url }, 'Crash crew');
  const hub = await restDoor(url, key).call('create_hub', { name: 'Crash test' });
  if (!hub.ok) throw new Error(`create_hub failed: ${hub.error}`);
  return { key, hub: String(hub.data.slug) };
}

/**
 * Before the load: the cycle's thread, the pad (a new one when the last grew long), a block of its own
 * for each editor and one for the typist, and the typist connected. All acknowledged before the kill
 * can come, so they are floors of what the store must hold.
 */
export async function stageCycle(store: StoreRun, cycle: number): Promise<Stage> {
  const url = store.server.url;
  const run = `${store.run}-c${cycle}`;
  const thread = await must(store, 'start_thread', {
    hub: store.hub,
    title: `Crash cycle ${cycle}`,
    body: `Opening post ${tokenOf(cycle, 'open', 0)}.`,
    idempotency_key: `${run}-thread`,
  });
  store.known.raiseThread(thread.thread_id, 1, 1);
  if (!store.pad || store.pad.length > PAD_ROTATE_AT) {
    const pad = await must(store, 'create_pad', { hub: store.hub, title: `Crash pad from cycle ${cycle}`, text: 'The crash test writes below.', idempotency_key: `${run}-pad` });
    store.pad = { id: pad.pad_id, length: 0 };
    store.known.raisePad(pad.pad_id, pad.version);
  }
  const padId = store.pad.id;
  const texts = { rest: stagedText(cycle, 'rest'), mcp: stagedText(cycle, 'mcp'), typist: `Typist ${cycle}:` };
  const version = Number((await must(store, 'open_pad', { pad_id: padId })).version);
  const staged = await must(store, 'edit_pad', {
    pad_id: padId,
    base_version: version,
    inserts: Object.values(texts).map((text) => ({ after: 'start', text })),
    idempotency_key: `${run}-blocks`,
  });
  store.known.raisePad(padId, staged.version);
  const typist = await connectProvider({ url }, store.key, padId);
  const blocks = readBlocks(typist.doc.getXmlFragment('default'));
  const idOf = (text: string) => {
    const block = blocks.find((b) => b.text === text);
    if (!block) throw new Error(`setup: the typist does not see the block "${text}"`);
    return block.id;
  };
  return {
    url,
    key: store.key,
    run,
    cycle,
    pad: padId,
    thread: thread.thread_id,
    own: { rest: idOf(texts.rest), mcp: idOf(texts.mcp) },
    base: staged.version,
    typist,
    typing: { pad: padId, block: idOf(texts.typist), prefix: texts.typist, strokes: [] },
    mcp: await mcpDoor(url, store.key),
  };
}

/** The text each editor's own block is staged with, before its first rewrite. */
export const stagedText = (cycle: number, via: 'rest' | 'mcp') => ownBlockText(via, tokenOf(cycle, via, 0));
