import { typeInto } from '../support/server.ts';
import type { connectProvider } from '../bench/setup.ts';
import { restDoor, type Door } from './doors.ts';
import { ackData, answered, type CycleLog, type Keystroke, type Known, type Typing, type Write } from './ledger.ts';
import type { Random } from './seeded.ts';

/** What one cycle's writers work on: set up before the load by `stageCycle`. */
export type Stage = {
  url: string;
  key: string;
  /** Prefix of every idempotency key of this run, so keys never meet those of an earlier run. */
  run: string;
  cycle: number;
  pad: string;
  thread: string;
  /** The block each editor alone rewrites and inserts after, by door. */
  own: Record<Door['via'], string>;
  /** The pad version the editors start from. */
  base: number;
  typist: Awaited<ReturnType<typeof connectProvider>>;
  typing: Typing;
  /** The MCP editor's session, opened before the load so the kill never falls on its handshake. */
  mcp: Door;
};

type Crew = { stage: Stage; log: CycleLog; known: Known; rng: Random; stop: AbortSignal };

/** When the writers stop: all at the kill; the editors earlier on cycles that leave the typist alone at the end. */
export type Stops = { all: AbortSignal; editors: AbortSignal };

/** A marker found nowhere else: cycle, worker and count, closed by a letter so `n1Q` is not in `n12Q`. */
export const tokenOf = (cycle: number, worker: string, n: number) => `K${cycle}${worker}n${n}Q`;

/** The whole text of an editor's own block, each time it is rewritten. */
export const ownBlockText = (via: Door['via'], token: string) => `Own block of ${via}, now ${token}.`;

const pause = (ms: number, stop: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (stop.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    }
    stop.addEventListener('abort', done);
  });

/** Sends one write through a door and records it; null once the server stopped answering. */
async function send(crew: Crew, door: Door, write: Omit<Write, 'door'>): Promise<Write | null> {
  const sent: Write = { ...write, door: door.via };
  crew.log.writes.push(sent);
  answered(crew.log, sent, await door.call(sent.tool, sent.args));
  const answer = sent.answer!;
  // Lost: sent with no answer. It is retried with its key after the restart, so the worker stops here.
  return !answer.ok && answer.lost ? null : sent;
}

/** An agent posting to the cycle's thread over REST, each post with its own idempotency key. */
async function poster(crew: Crew, name: string) {
  const { stage } = crew;
  const door = restDoor(stage.url, stage.key);
  const rng = crew.rng.fork(name);
  for (let n = 1; !crew.stop.aborted; n++) {
    const token = tokenOf(stage.cycle, name, n);
    const body = `Post ${token} from the crash test.`;
    const args = { thread_id: stage.thread, body, idempotency_key: `${stage.run}-${token}` };
    const write = await send(crew, door, { worker: name, tool: 'post_reply', args, token, effect: 'post', target: stage.thread, text: body });
    if (!write) return;
    const acked = ackData(write);
    if (acked) crew.known.raiseThread(stage.thread, 0, Number(acked.seq));
    await pause(rng.int(0, 8), crew.stop);
  }
}

/**
 * An agent editing the pad paragraph by paragraph: it rewrites its own block, or inserts a new one
 * after it, from the last version it was answered (others move the pad on meanwhile).
 */
async function editor(crew: Crew, door: Door) {
  const { stage } = crew;
  const name = door.via;
  const rng = crew.rng.fork(name);
  const own = stage.own[name];
  let base = stage.base;
  try {
    for (let n = 1; !crew.stop.aborted; n++) {
      const token = tokenOf(stage.cycle, name, n);
      const rewrite = rng.next() < 0.6;
      const text = rewrite ? ownBlockText(name, token) : `Inserted ${token}.`;
      const change = rewrite ? { edits: [{ block_id: own, text }] } : { inserts: [{ after: own, text }] };
      const args = { pad_id: stage.pad, base_version: base, ...change, idempotency_key: `${stage.run}-${token}` };
      const write = await send(crew, door, {
        worker: name,
        tool: 'edit_pad',
        args,
        token,
        effect: rewrite ? 'rewrite' : 'insert',
        target: stage.pad,
        text,
        ...(rewrite ? { block: own } : {}),
      });
      if (!write) return;
      const acked = ackData(write);
      if (acked) {
        base = Math.max(base, Number(acked.version));
        crew.known.raisePad(stage.pad, Number(acked.version));
      }
      await pause(rng.int(0, 15), crew.stop);
    }
  } finally {
    await door.close().catch(() => {});
  }
}

/**
 * A person's editor over the WebSocket: types a word at the end of its block, waits until the server
 * says it applied it (Hocuspocus' sync status), types the next.
 */
async function typist(crew: Crew) {
  const { stage } = crew;
  const { provider, doc } = stage.typist;
  const rng = crew.rng.fork('typist');
  const strokes = stage.typing.strokes;
  // The server answers each update in order; at zero unanswered, everything sent so far is applied.
  provider.on('unsyncedChanges', ({ number }: { number: number }) => {
    if (number !== 0) return;
    const now = performance.now();
    for (const stroke of strokes) stroke.ackedAt ??= now;
  });
  const fragment = doc.getXmlFragment('default');
  for (let n = 1; !crew.stop.aborted; n++) {
    const stroke: Keystroke = { text: ` ${tokenOf(stage.cycle, 'type', n)}`, ackedAt: null };
    strokes.push(stroke);
    typeInto(doc, fragment, stage.typing.block, 'end', stroke.text);
    while (stroke.ackedAt === null && !crew.stop.aborted) await pause(5, crew.stop);
    await pause(rng.int(10, 60), crew.stop);
  }
}

/** An agent polling the pad and the thread: every version it reads is committed and may never be lower again. */
async function reader(crew: Crew) {
  const { stage, known, log } = crew;
  const door = restDoor(stage.url, stage.key);
  const watched = [
    { what: `pad ${stage.pad}`, tool: 'open_pad', args: { pad_id: stage.pad }, raise: (v: number) => known.raisePad(stage.pad, v), seen: 0 },
    { what: `thread ${stage.thread}`, tool: 'open_thread', args: { thread_id: stage.thread }, raise: (v: number) => known.raiseThread(stage.thread, v), seen: 0 },
  ];
  while (!crew.stop.aborted) {
    for (const item of watched) {
      const read = await door.call(item.tool, item.args);
      if (!read.ok) {
        if (!read.lost || log.killedAt === null) log.anomalies.push(`reader: ${item.tool}: ${read.error}`);
        continue;
      }
      const version = Number(read.data.version);
      if (version < item.seen) log.anomalies.push(`reader: ${item.what} read version ${version} after version ${item.seen}`);
      item.seen = Math.max(item.seen, version);
      item.raise(version);
    }
    await pause(25, crew.stop);
  }
}

/** Every writer of a cycle at once, until told to stop; resolves when the last has given up on the dead server. */
export async function runWriters(stage: Stage, log: CycleLog, known: Known, rng: Random, stops: Stops): Promise<void> {
  const crew: Crew = { stage, log, known, rng, stop: stops.all };
  // An API edit also saves the live typing waiting to be saved: only without edits is typing on its own.
  const editors: Crew = { ...crew, stop: AbortSignal.any([stops.all, stops.editors]) };
  await Promise.all([poster(crew, 'posta'), poster(crew, 'postb'), editor(editors, restDoor(stage.url, stage.key)), editor(editors, stage.mcp), typist(crew), reader(crew)]);
}
