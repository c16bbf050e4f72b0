import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keptBatch } from '../../server/core/kernel/keptBatch.ts';

const AGE = 4_000;

/** A batch over a store of `values` that counts its loads, on a clock of its own. */
function batchOver(values: Map<string, string>) {
  let clock = 0;
  const loads: string[][] = [];
  let gate: Promise<void> | undefined;
  const batch = keptBatch<string>({
    maxAgeMs: AGE,
    now: () => clock,
    loadMany: async (keys) => {
      loads.push([...keys]);
      const found = new Map(keys.flatMap((key) => (values.has(key) ? [[key, values.get(key)!] as const] : [])));
      await gate;
      return found;
    },
    readAheadFailed: () => {},
  });
  return {
    batch,
    loads,
    wait: (ms: number) => void (clock += ms),
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

describe('reads kept in batches', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('keeps a read, reads it again ahead of its age with the others due, and never answers past its age', async () => {
    const values = new Map([
      ['a', 'one'],
      ['b', 'two'],
    ]);
    const { batch, loads, wait } = batchOver(values);
    expect(await batch.get('a')).toBe('one');
    expect(await batch.get('b')).toBe('two');
    expect(await batch.get('c')).toBeNull();
    expect(loads).toEqual([['a'], ['b'], ['c']]);

    // Past half its age, a key is answered as kept and read again soon, with the others due then.
    values.set('a', 'three');
    wait(AGE / 2);
    expect(await batch.get('a')).toBe('one');
    expect(await batch.get('b')).toBe('two');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loads.slice(3)).toEqual([['a', 'b']]);
    expect(await batch.get('a')).toBe('three');

    // Past its age, a key is read before it is answered.
    wait(AGE);
    values.set('a', 'four');
    expect(await batch.get('a')).toBe('four');
    expect(loads).toHaveLength(5);
  });

  it('reads a key not kept with every key in use that is past half its age', async () => {
    const { batch, loads, wait } = batchOver(new Map([['a', 'one']]));
    await batch.get('a');
    await batch.get('b');
    wait(AGE / 2);
    expect(await batch.get('c')).toBeNull();
    expect(loads.at(-1)).toEqual(['c', 'a', 'b']);
    // Read along, they are fresh again: nothing is due.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loads).toHaveLength(3);
  });

  it('answers a read under way when the kept reads are dropped, but does not keep it', async () => {
    const values = new Map([['a', 'before']]);
    const { batch, loads, hold } = batchOver(values);
    const release = hold();
    const reading = batch.get('a');
    // A second caller waits for the same read.
    const alsoReading = batch.get('a');
    batch.drop();
    values.set('a', 'after');
    release();
    expect(await reading).toBe('before');
    expect(await alsoReading).toBe('before');
    expect(loads).toHaveLength(1);
    expect(await batch.get('a')).toBe('after');
    expect(loads).toHaveLength(2);
  });

  it('does not share a read under way with those who ask after the kept reads were dropped', async () => {
    const values = new Map([['a', 'before']]);
    const { batch, loads, hold } = batchOver(values);
    const release = hold();
    const reading = batch.get('a');
    batch.drop('a');
    values.set('a', 'after');
    const afterTheDrop = batch.get('a');
    release();
    expect(await reading).toBe('before');
    expect(await afterTheDrop).toBe('after');
    expect(loads).toHaveLength(2);
  });

  it('tells a failed read to its caller, and reads the key again when next asked for', async () => {
    const loads: string[][] = [];
    let fail = true;
    const failing = keptBatch<string>({
      maxAgeMs: AGE,
      now: () => 0,
      loadMany: async (keys) => {
        loads.push([...keys]);
        if (fail) throw new Error('store down');
        return new Map([['a', 'one']]);
      },
      readAheadFailed: () => {},
    });
    await expect(failing.get('a')).rejects.toThrow('store down');
    fail = false;
    expect(await failing.get('a')).toBe('one');
    expect(loads).toEqual([['a'], ['a']]);
  });
});

describe('what batches keep between them', () => {
  it('is counted as keys are kept and dropped', async () => {
    const tally = { kept: 0 };
    const made = () => keptBatch<string>({ maxAgeMs: AGE, now: () => 0, loadMany: async (keys) => new Map(keys.map((key) => [key, key])), readAheadFailed: () => {}, tally });
    const [one, two] = [made(), made()];
    await one.get('a');
    await one.get('b');
    await one.get('a');
    await two.get('a');
    expect(tally.kept).toBe(3);
    one.drop('a');
    one.drop('a');
    expect(tally.kept).toBe(2);
    two.drop();
    expect(tally.kept).toBe(1);
  });
});
