import { Hocuspocus, type ConnectionConfiguration } from '@hocuspocus/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ReadAheads } from '../../sync/readAhead.ts';
import type { PadLog } from '../../sync/store.ts';

const log = (ids: number[]): PadLog => ({ state: null, generation: null, updates: ids.map(() => new Uint8Array([0, 0])), ids });
const connection = (): ConnectionConfiguration => ({ readOnly: false, isAuthenticated: false });

/**
 * A log read with a connection's access is applied by the load that follows, only when nothing this
 * instance did to the pad came in between; otherwise the load reads the log again. On a real
 * Hocuspocus instance (no server): a pad it holds is not read ahead at all.
 */
describe('logs read ahead of a load', () => {
  const instance = new Hocuspocus({ quiet: true });
  afterEach(() => instance.closeConnections());

  it('the load of the connection that read the log takes it, once', () => {
    const ahead = new ReadAheads();
    const mark = ahead.mark(instance, 'pad-a', false)!;
    expect(mark).not.toBeNull();
    const opener = connection();
    const read = log([1, 2]);
    ahead.keep(opener, 'pad-a', read, mark);
    expect(ahead.take(connection(), 'pad-a')).toBeUndefined();
    expect(ahead.take(opener, 'pad-b')).toBeUndefined();
    ahead.keep(opener, 'pad-a', read, mark);
    expect(ahead.take(opener, 'pad-a')).toBe(read);
    expect(ahead.take(opener, 'pad-a')).toBeUndefined();
  });

  it('a load, unload, queued or appended update of the pad after the read began leaves the log unused', () => {
    const ahead = new ReadAheads();
    const opener = connection();
    const mark = ahead.mark(instance, 'pad-a', false)!;
    // Another pad's doings do not matter.
    ahead.touch('pad-b');
    ahead.keep(opener, 'pad-a', log([1]), mark);
    expect(ahead.take(opener, 'pad-a')).toBeDefined();
    const later = ahead.mark(instance, 'pad-a', false)!;
    ahead.touch('pad-a');
    ahead.keep(opener, 'pad-a', log([1]), later);
    expect(ahead.take(opener, 'pad-a')).toBeUndefined();
  });

  it('a log read before the remembered pads were forgotten is not used', () => {
    const ahead = new ReadAheads();
    const opener = connection();
    const mark = ahead.mark(instance, 'pad-a', false)!;
    for (let i = 0; i < 10_001; i++) ahead.touch(`pad-${i}-other`);
    ahead.keep(opener, 'pad-a', log([1]), mark);
    expect(ahead.take(opener, 'pad-a')).toBeUndefined();
  });

  it('a pad held here, or with updates waiting to be stored, is not read ahead', async () => {
    const ahead = new ReadAheads();
    expect(ahead.mark(instance, 'pad-held', true)).toBeNull();
    const direct = await instance.openDirectConnection('pad-held');
    expect(ahead.mark(instance, 'pad-held', false)).toBeNull();
    await direct.disconnect();
    await expect.poll(() => instance.documents.has('pad-held')).toBe(false);
    expect(ahead.mark(instance, 'pad-held', false)).not.toBeNull();
  });

  it('a connection that did not load the pad lets go of its log', () => {
    const ahead = new ReadAheads();
    const opener = connection();
    ahead.keep(opener, 'pad-a', log([1]), ahead.mark(instance, 'pad-a', false)!);
    ahead.drop(opener);
    expect(ahead.take(opener, 'pad-a')).toBeUndefined();
  });
});
