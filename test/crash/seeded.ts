/**
 * A small seeded generator (mulberry32): one seed gives the same kill moments and the same choices
 * of the writers, so a failing run can be repeated with CRASH_SEED. What the server does in between
 * (timing) is not seeded, so a repeat is close to the failing run, not identical to it.
 */
export type Random = {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [low, high]. */
  int(low: number, high: number): number;
  /** An independent generator for one worker, derived from this seed and a label. */
  fork(label: string): Random;
};

export function seeded(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (low, high) => low + Math.floor(next() * (high - low + 1)),
    fork(label) {
      let hash = seed >>> 0;
      for (const char of label) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
      return seeded(hash);
    },
  };
}
