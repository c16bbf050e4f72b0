import { sql } from 'slonik';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, invalid } from './errors.ts';
import { readablePad } from './pads.ts';
import { line, type Result } from './result.ts';
import { readableThread } from './threads.ts';
import { VersionRow } from '../../schema/rows.ts';

export const WAIT_DEFAULT_S = 20;
export const WAIT_MAX_S = 25;
export const WAITS_PER_PARTICIPANT = 4;
/** Other instances' changes are seen by a short query this often; no connection is held between. */
const POLL_MS = 1_000;

const open = new Map<string, number>();

/**
 * Long-polls a pad or a thread: answers as soon as its version passes the one the caller has, or at
 * the timeout. Holds no database connection while it waits.
 */
export async function waitForChanges(
  core: Core,
  actor: Actor,
  input: { pad_id?: string | undefined; thread_id?: string | undefined; version: number | string; timeout_seconds?: number | undefined },
): Promise<Result> {
  if ((input.pad_id === undefined) === (input.thread_id === undefined)) {
    throw invalid('Give either pad_id or thread_id.', { issues: [{ path: 'pad_id', message: 'Give exactly one of pad_id and thread_id.' }] });
  }
  const have = Number(input.version);
  if (!Number.isInteger(have) || have < 0) throw invalid('version is the version you have: a whole number.', { issues: [{ path: 'version', message: 'A whole number.' }] });
  const conn = core.db.pool;
  const isPad = input.pad_id !== undefined;
  const id = isPad ? (await readablePad(core, conn, input.pad_id!, actor)).pad.id : (await readableThread(core, conn, input.thread_id!, actor)).thread.id;
  const current = () =>
    conn.oneFirst(
      isPad
        ? sql.type(VersionRow)`SELECT version FROM pads WHERE id = ${id}`
        : sql.type(VersionRow)`SELECT version FROM threads WHERE id = ${id}`,
    );

  const mine = open.get(actor.id) ?? 0;
  if (mine >= WAITS_PER_PARTICIPANT) {
    throw new AppError('rate_limited', `At most ${WAITS_PER_PARTICIPANT} waits are open per participant; let one finish first.`, { retry_after_seconds: 1, retryAfterSeconds: 1 });
  }
  open.set(actor.id, mine + 1);
  const timeoutMs = Math.min(input.timeout_seconds ?? WAIT_DEFAULT_S, WAIT_MAX_S) * 1000;
  try {
    let version = await current();
    if (version <= have) {
      version = await new Promise<number>((resolve) => {
        const deadline = setTimeout(() => finish(version), timeoutMs);
        const poll = setInterval(() => void current().then((v) => v > have && finish(v), () => {}), POLL_MS);
        const off = isPad ? core.sync.onVersion((padId, v) => padId === id && v > have && finish(v)) : () => {};
        function finish(v: number) {
          clearTimeout(deadline);
          clearInterval(poll);
          off();
          resolve(v);
        }
      });
    }
    const changed = version > have;
    const kind = isPad ? 'pad' : 'thread';
    return {
      parts: [
        line(
          changed
            ? `The ${kind} ${id} is at version ${version} (you had ${have}). Read what changed with ${isPad ? `open_pad mode "changes" since ${have}` : `open_thread after_seq`}.`
            : `No change to the ${kind} ${id} within ${timeoutMs / 1000} s; it is still at version ${version}. Wait again when you like.`,
        ),
      ],
      data: { [isPad ? 'pad_id' : 'thread_id']: id, version: isPad ? version : String(version), changed },
    };
  } finally {
    const left = (open.get(actor.id) ?? 1) - 1;
    if (left > 0) open.set(actor.id, left);
    else open.delete(actor.id);
  }
}
