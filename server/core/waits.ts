import { sql } from 'slonik';
import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { AppError, invalid } from './errors.ts';
import type { Watched } from './policies.ts';
import { VersionRow } from '../../schema/rows.ts';

export const WAIT_DEFAULT_S = 20;
export const WAIT_MAX_S = 25;
export const WAITS_PER_PARTICIPANT = 4;
/** Other instances' changes are seen by a short query this often; no connection is held between. */
const POLL_MS = 1_000;

const open = new Map<string, number>();

export type WaitOutcome = Watched & { version: number; have: number; changed: boolean; waitedS: number };

/**
 * Long-polls a pad or a thread: answers as soon as its version passes the one the caller has, or at
 * the timeout. Holds no database connection while it waits.
 */
export async function waitForChanges(
  core: Core,
  actor: Actor,
  watched: Watched,
  input: { version: number | string; timeout_seconds?: number | undefined },
): Promise<WaitOutcome> {
  const have = Number(input.version);
  if (!Number.isInteger(have) || have < 0) throw invalid('version is the version you have: a whole number.', { issues: [{ path: 'version', message: 'A whole number.' }] });
  const conn = core.db.pool;
  const { id, kind } = watched;
  const current = () =>
    conn.oneFirst(
      kind === 'pad'
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
        const off = kind === 'pad' ? core.sync.onVersion((padId, v) => padId === id && v > have && finish(v)) : () => {};
        function finish(v: number) {
          clearTimeout(deadline);
          clearInterval(poll);
          off();
          resolve(v);
        }
      });
    }
    return { kind, id, version, have, changed: version > have, waitedS: timeoutMs / 1000 };
  } finally {
    const left = (open.get(actor.id) ?? 1) - 1;
    if (left > 0) open.set(actor.id, left);
    else open.delete(actor.id);
  }
}
