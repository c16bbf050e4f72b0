import { describe, expect, it } from 'vitest';
import { applyDeltas, changedBetween, deltaBetween, nextBlocks, type VersionBlock } from '../../sync/blockLists.ts';

const list = (spec: string): VersionBlock[] => spec.split(' ').filter(Boolean).map((pair) => {
  const [id, text] = pair.split('=');
  return { id: id!, text: text ?? id!.toUpperCase() };
});

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state % n;
  };
}

describe('version block lists', () => {
  it('a delta folded onto the list before it gives the list after it, for any change', () => {
    const pick = random(7);
    let next = 0;
    let blocks = list('a b c d e');
    let start = blocks;
    const deltas = [];
    for (let round = 0; round < 500; round++) {
      const after = [...blocks];
      for (let change = pick(4); change >= 0; change--) {
        const at = pick(after.length + 1);
        const kind = pick(4);
        if (kind === 0 || after.length === 0) after.splice(at, 0, { id: `n${next++}`, text: `new ${round}` });
        else if (kind === 1) after.splice(Math.min(at, after.length - 1), 1);
        else if (kind === 2) after[Math.min(at, after.length - 1)] = { ...after[Math.min(at, after.length - 1)]!, text: `text ${round}` };
        else after.splice(pick(after.length + 1), 0, ...after.splice(Math.min(at, after.length - 1), 1));
      }
      const delta = deltaBetween(blocks, after);
      expect(applyDeltas(blocks, [delta])).toEqual(after);
      deltas.push(delta);
      blocks = after;
      if (round % 50 === 49) {
        // A run of deltas folds like one at a time.
        expect(applyDeltas(start, deltas)).toEqual(blocks);
        start = blocks;
        deltas.length = 0;
      }
    }
  });

  it('a paragraph rewritten in place is one short entry', () => {
    expect(deltaBetween(list('a b c'), list('a b=changed c'))).toEqual([['b', 'changed']]);
    expect(deltaBetween(list('a b c'), list('a x b c'))).toEqual([['x', 'a', 'X'], ['b', 'x', 'B']]);
    expect(deltaBetween(list('a b c'), list('a c'))).toEqual([['c', 'a', 'C'], ['b']]);
  });

  it("a version takes from the live pad only its writer's blocks; the rest stay as the last version has them", () => {
    const previous = list('a b c');
    // Live: b rewritten by someone else (not committed yet), c removed by someone else, x inserted by us after b.
    const live = list('a b=theirs x');
    const next = nextBlocks(previous, live, new Set(['x']));
    expect(next).toEqual(list('a b x c'));
    expect(changedBetween(previous, next)).toEqual(['x']);
    // Our own removal and rewrite count; theirs do not.
    expect(nextBlocks(previous, list('a=ours b=theirs'), new Set(['a', 'c']))).toEqual(list('a=ours b'));
  });
});
