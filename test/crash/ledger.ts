import type { Answer } from './doors.ts';

/**
 * One write a worker sent and what came of it. Every write adds a token found nowhere else (in a
 * post, a new block, or the worker's own block), so its presence can be counted after a crash.
 */
export type Write = {
  worker: string;
  door: 'rest' | 'mcp';
  tool: 'post_reply' | 'edit_pad';
  args: Record<string, unknown>;
  token: string;
  /** A post in a thread, a new block in a pad, or the worker's own block rewritten. */
  effect: 'post' | 'insert' | 'rewrite';
  /** The thread or pad written to. */
  target: string;
  /** With `rewrite`: the block rewritten; its whole new text is `text`. */
  block?: string;
  text: string;
  answer?: Answer;
  answeredAt?: number;
  /** After the restart: the answer to the same call, same idempotency key, sent again. */
  retry?: Answer;
};

/** A piece of live typing: sent over the WebSocket, acknowledged when the server said it applied it. */
export type Keystroke = { text: string; ackedAt: number | null };

/** Live typing of one cycle, at the end of one block that the typist alone writes. */
export type Typing = { pad: string; block: string; prefix: string; strokes: Keystroke[] };

/** The writes of one cycle, and what went wrong while they ran. */
export type CycleLog = {
  writes: Write[];
  typing: Typing | null;
  /** When the server was killed (performance.now()); null while it runs. */
  killedAt: number | null;
  /** Unexpected answers while the server was up: refusals, lost connections before the kill, versions going back. */
  anomalies: string[];
};

/** An acknowledgement is an answer with what the tool promises: a post id, or an edit id with nothing refused. */
export function acknowledged(write: Write, answer: Answer | undefined = write.answer): boolean {
  if (!answer?.ok) return false;
  if (write.tool === 'post_reply') return typeof answer.data.post_id === 'string';
  return typeof answer.data.edit_id === 'string' && Array.isArray(answer.data.conflicts) && answer.data.conflicts.length === 0;
}

/** The data of an acknowledged write, or null. */
export function ackData(write: Write, answer: Answer | undefined = write.answer): Record<string, any> | null {
  return answer?.ok && acknowledged(write, answer) ? answer.data : null;
}

/** Sent, with no answer at all: the server died with it (or the connection did), so it may have been applied. */
export const inFlight = (write: Write) => write.answer === undefined || (!write.answer.ok && write.answer.lost);

/**
 * What a store has been seen to hold, across cycles: the lowest version each pad and thread may ever
 * read again (the highest acknowledged or read), and after each cycle's checks, what it held then.
 */
export class Known {
  readonly pads = new Map<string, { floor: number; blocks: { id: string; text: string }[] | null }>();
  readonly threads = new Map<string, { floor: number; seqFloor: number; posts: string[] | null }>();

  raisePad(padId: string, version: number) {
    const pad = this.pads.get(padId) ?? { floor: 0, blocks: null };
    pad.floor = Math.max(pad.floor, version);
    this.pads.set(padId, pad);
  }

  raiseThread(threadId: string, version: number, seq = 0) {
    const thread = this.threads.get(threadId) ?? { floor: 0, seqFloor: 0, posts: null };
    thread.floor = Math.max(thread.floor, version);
    thread.seqFloor = Math.max(thread.seqFloor, seq);
    this.threads.set(threadId, thread);
  }
}

export function newCycleLog(): CycleLog {
  return { writes: [], typing: null, killedAt: null, anomalies: [] };
}

/** Records an answer, and as an anomaly anything but an acknowledgement while the server was up. */
export function answered(log: CycleLog, write: Write, answer: Answer) {
  write.answer = answer;
  write.answeredAt = performance.now();
  if (acknowledged(write)) return;
  const beforeKill = log.killedAt === null || write.answeredAt < log.killedAt;
  if (!answer.ok && answer.lost && !beforeKill) return;
  const what = answer.ok ? `answered without an acknowledgement: ${JSON.stringify(answer.data)}` : answer.error;
  log.anomalies.push(`${write.worker} ${write.tool} ${write.token} via ${write.door}: ${what}`);
}
