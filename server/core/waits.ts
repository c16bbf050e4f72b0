import type { Actor } from './actor.ts';
import type { Core } from './context.ts';
import { invalid, notFound } from './errors.ts';
import type { Watched } from './policies.ts';

export const WAIT_DEFAULT_S = 20;
export const WAIT_MAX_S = 25;
export { WAITS_PER_PARTICIPANT } from './waitRegistry.ts';

export type WaitOutcome = {
  watched: (Watched & { version: number; have: number; changed: boolean }) | null;
  /** Asked about the inbox: whether an item came after the cursor. */
  inbox?: boolean;
  waitedS: number;
};

/**
 * Long-polls a pad or a thread: answers as soon as its version passes the one the caller has, or at
 * the timeout. Holds no database connection while it waits (`core.waits`).
 */
export async function waitForChanges(
  core: Core,
  actor: Actor,
  watched: Watched | null,
  input: { version?: number | string | undefined; timeout_seconds?: number | undefined },
): Promise<WaitOutcome> {
  if (!watched) throw invalid('Give pad_id or thread_id, with the version you have.', { issues: [{ path: 'pad_id', message: 'Give exactly one of pad_id and thread_id.' }] });
  const have = typeof input.version === 'string' && !/^\d{1,10}$/.test(input.version) ? NaN : Number(input.version);
  if (input.version === undefined || !Number.isSafeInteger(have) || have < 0) {
    throw invalid('version is the version you have: a whole number.', { issues: [{ path: 'version', message: 'A whole number.' }] });
  }
  const key = `${watched.kind}:${watched.id}` as const;
  let version = null as number | null;
  const check = async () => {
    version = await core.waits.version(key);
    return version === null || version > have;
  };
  const waitedS = Math.min(input.timeout_seconds ?? WAIT_DEFAULT_S, WAIT_MAX_S);
  await core.waits.until(actor.id, [key], check, waitedS * 1000);
  if (version === null) throw notFound(`The ${watched.kind} ${watched.id} is gone.`);
  return { watched: { ...watched, version, have, changed: version > have }, waitedS };
}
