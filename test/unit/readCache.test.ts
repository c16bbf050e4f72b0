import { describe, expect, it } from 'vitest';
import type { ChangeListener } from '../../server/db/changeFeed.ts';
import { createReadCache, KEPT_READ_MS } from '../../server/core/kernel/readCache.ts';

/** The cache's bookkeeping, told of changes as the store tells it (`Db.watchChanges`). */
function cacheWithChanges(hearing: boolean) {
  let told: ChangeListener | undefined;
  let clock = 0;
  const cache = createReadCache({ watchChanges: (listener) => ((told = listener), listener.hearing(hearing)) }, () => clock);
  let loads = 0;
  const load = (value: string) => async () => {
    loads++;
    return value;
  };
  return { cache, told: () => told!, load, loads: () => loads, wait: (ms: number) => void (clock += ms) };
}

describe('kept reads', () => {
  it('keeps a read until a change, then reads again', async () => {
    const { cache, told, load, loads } = cacheWithChanges(true);
    expect(await cache.read('k', load('one'))).toBe('one');
    expect(await cache.read('k', load('two'))).toBe('one');
    expect(loads()).toBe(1);
    told().changed();
    expect(await cache.read('k', load('three'))).toBe('three');
    expect(loads()).toBe(2);
  });

  it('hands out but does not keep a read that was loading when a change came', async () => {
    const { cache, told, load } = cacheWithChanges(true);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const loading = cache.read('k', async () => {
      await gate;
      return 'before the change';
    });
    told().changed();
    release();
    expect(await loading).toBe('before the change');
    expect(await cache.read('k', load('after the change'))).toBe('after the change');
  });

  it('has callers who come while a read loads wait for it, unless a change came since it began', async () => {
    const { cache, told, load, loads } = cacheWithChanges(true);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = (value: string) => async () => {
      await gate;
      return load(value)();
    };
    const first = cache.read('k', slow('one'));
    const second = cache.read('k', slow('two'));
    told().changed();
    const third = cache.read('k', slow('three'));
    release();
    expect([await first, await second, await third]).toEqual(['one', 'one', 'three']);
    expect(loads()).toBe(2);
    // The read begun after the change is kept.
    expect(await cache.read('k', load('four'))).toBe('three');
  });

  it('keeps nothing while changes elsewhere cannot be heard, and nothing from before', async () => {
    const { cache, told, load, loads } = cacheWithChanges(false);
    await cache.read('k', load('one'));
    await cache.read('k', load('two'));
    expect(loads()).toBe(2);
    told().hearing(true);
    expect(await cache.read('k', load('three'))).toBe('three');
    expect(await cache.read('k', load('four'))).toBe('three');
    told().hearing(false);
    expect(await cache.read('k', load('five'))).toBe('five');
    told().hearing(true);
    expect(await cache.read('k', load('six'))).toBe('six');
  });

  it('reads again a read kept with a largest age once it is that old, though nothing changed', async () => {
    const { cache, load, loads, wait } = cacheWithChanges(true);
    expect(await cache.read('k', load('one'), { maxAgeMs: 1_000 })).toBe('one');
    wait(999);
    expect(await cache.read('k', load('two'), { maxAgeMs: 1_000 })).toBe('one');
    wait(1);
    expect(await cache.read('k', load('three'), { maxAgeMs: 1_000 })).toBe('three');
    expect(loads()).toBe(2);
    // Without one, it is kept until a change or KEPT_READ_MS: a change whose announcement was lost
    // (its writer stopped after the commit) is read within that.
    await cache.read('j', load('four'));
    wait(KEPT_READ_MS - 1);
    expect(await cache.read('j', load('five'))).toBe('four');
    wait(1);
    expect(await cache.read('j', load('six'))).toBe('six');
  });
});
