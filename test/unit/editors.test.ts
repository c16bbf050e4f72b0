import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEditorCache, EDITOR_TTL_MS, type PadAccess } from '../../server/core/kernel/editors.ts';

const access = (padId: string, role: PadAccess['role'] = 'member'): PadAccess => ({
  id: padId,
  hub_id: 'hub_1',
  thread_id: null,
  title: 'Plan',
  created_by: 'p_owner',
  created_at: 0,
  updated_at: 0,
  locked_by: null,
  hub: { id: 'hub_1', slug: 'plans', name: 'Plans', readme: '', audience: 'public', mode: 'open', owner_id: 'p_owner', accepts_guests: false, created_at: 0, updated_at: 0 },
  role,
  war: [],
});

/** A cache on a clock of its own, whose store answers `roles` (by key) and counts its reads. */
function cacheOver(roles: Map<string, PadAccess['role']>) {
  let now = 1_000;
  const loads: string[][] = [];
  const cache = createEditorCache(() => now);
  const reads = cache.reads(async (keys) => {
    loads.push([...keys]);
    return new Map(keys.map((key) => [key, access(key.split(' ')[1]!, roles.get(key) ?? null)]));
  });
  return { cache, reads, loads, wait: (ms: number) => void (now += ms) };
}

describe('the editor cache', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('keeps what an edit read for EDITOR_TTL_MS, and reads it again ahead of its age, off the edit’s path', async () => {
    const roles = new Map<string, PadAccess['role']>([['p_1 pad_a', 'member']]);
    const { cache, reads, loads, wait } = cacheOver(roles);
    const key = cache.key('p_1', 'pad_a');
    reads.keep(key, access('pad_a'), reads.begin());
    expect(reads.peek(key)?.role).toBe('member');
    expect(reads.peek(cache.key('p_2', 'pad_a'))).toBeUndefined();
    expect(reads.peek(cache.key('p_1', 'pad_b'))).toBeUndefined();
    // Young, it is answered as kept and nothing is read.
    wait(EDITOR_TTL_MS / 2 - 1);
    expect(reads.peek(key)?.role).toBe('member');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loads).toEqual([]);
    // Past half its age, it is still answered as kept, and read again in the background: the seat
    // taken away meanwhile shows in the read.
    roles.set(key, 'helper');
    wait(1);
    expect(reads.peek(key)?.role).toBe('member');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loads).toEqual([[key]]);
    expect(reads.peek(key)?.role).toBe('helper');
    // Never asked for again, it is gone at its age.
    wait(EDITOR_TTL_MS);
    expect(reads.peek(key)).toBeUndefined();
  });

  it('forgets everyone’s access, and keeps no read that began before', () => {
    const { cache, reads } = cacheOver(new Map());
    const begun = reads.begin();
    reads.keep(cache.key('p_1', 'pad_a'), access('pad_a'), begun);
    reads.keep(cache.key('p_10', 'pad_a'), access('pad_a'), begun);
    cache.forget();
    expect(reads.peek(cache.key('p_1', 'pad_a'))).toBeUndefined();
    expect(reads.peek(cache.key('p_10', 'pad_a'))).toBeUndefined();
    // A read that was under way when the right was taken away may hold it still: it is not kept.
    reads.keep(cache.key('p_1', 'pad_a'), access('pad_a'), begun);
    expect(reads.peek(cache.key('p_1', 'pad_a'))).toBeUndefined();
    reads.keep(cache.key('p_1', 'pad_a'), access('pad_a'), reads.begin());
    expect(reads.peek(cache.key('p_1', 'pad_a'))?.role).toBe('member');
  });
});
