import type { Actor } from '../kernel/actor.ts';
import type { Core } from '../kernel/context.ts';
import { invalid, notFound } from '../../../schema/errors.ts';
import { hasInboxAfter } from './inbox.ts';
import type { Watched } from '../kernel/policy.ts';
import { WAIT_DEFAULT_S, WAIT_MAX_S } from '../../../schema/tools/inbox.ts';

export { WAITS_PER_PARTICIPANT } from '../kernel/waitRegistry.ts';

export type WaitOutcome = {
  watched: (Watched & { version: number; have: number; changed: boolean }) | null;
  /** Asked about the inbox: whether an item came after the cursor. */
  inbox?: boolean;
  waitedS: number;
};

export type WaitInput = {
  version?: number | string | undefined;
  inbox?: boolean | undefined;
  inbox_cursor?: string | undefined;
  timeout_seconds?: number | undefined;
};

/**
 * Long-polls a pad or a thread, the caller's inbox, or both: answers as soon as the pad or thread
 * passes the version the caller has, or an item the caller may read lands in its inbox after
 * `inbox_cursor` (any unacked one without it), or at the timeout. Holds no database connection
 * while it waits (`core.waits`).
 */
export async function waitForChanges(core: Core, actor: Actor, watched: Watched | null, input: WaitInput, gone?: AbortSignal): Promise<WaitOutcome> {
  if (!watched && !input.inbox) {
    throw invalid('Give pad_id or thread_id with the version you have, or inbox: true.', { issues: [{ path: 'pad_id', message: 'Give pad_id, thread_id or inbox.' }] });
  }
  const have = typeof input.version === 'string' && !/^\d{1,10}$/.test(input.version) ? NaN : Number(input.version);
  if (watched && (input.version === undefined || !Number.isSafeInteger(have) || have < 0)) {
    throw invalid('version is the version you have: a whole number.', { issues: [{ path: 'version', message: 'A whole number.' }] });
  }
  const keys: string[] = [];
  const key = watched && (`${watched.kind}:${watched.id}` as const);
  if (key) keys.push(key);
  if (input.inbox) keys.push(`inbox:${actor.id}`);

  let version = null as number | null;
  let inbox = false;
  const check = async () => {
    [version, inbox] = await Promise.all([key ? core.waits.version(key) : null, input.inbox ? hasInboxAfter(core.db.pool, actor.id, input.inbox_cursor) : false]);
    return (key !== null && (version === null || version > have)) || inbox;
  };
  const waitedS = Math.min(input.timeout_seconds ?? WAIT_DEFAULT_S, WAIT_MAX_S);
  // A caller that went away frees its wait at once: a closed browser tab must not hold one of its four.
  await core.waits.until(actor.id, keys, check, waitedS * 1000, gone);
  if (watched && version === null) throw notFound(`The ${watched.kind} ${watched.id} is gone.`);
  return {
    watched: watched && { ...watched, version: version!, have, changed: version! > have },
    ...(input.inbox ? { inbox } : {}),
    waitedS,
  };
}
