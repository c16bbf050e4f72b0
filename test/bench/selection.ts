import type { Benchmark } from './benchmark.ts';

/**
 * The benchmarks `BENCH_ONLY` names, so that one can be run again without the others: a
 * comma-separated list of words, each matched against the benchmarks' names regardless of case
 * (`BENCH_ONLY=reads`, `BENCH_ONLY=markdown,wal`, `BENCH_ONLY=live`). Unset, every benchmark runs.
 */
export function selected(benchmarks: Benchmark[], only = process.env.BENCH_ONLY): Benchmark[] {
  const words = (only ?? '').split(',').map((word) => word.trim().toLowerCase()).filter(Boolean);
  if (!words.length) return benchmarks;
  const chosen = benchmarks.filter((benchmark) => words.some((word) => benchmark.name.toLowerCase().includes(word)));
  if (!chosen.length) throw new Error(`BENCH_ONLY=${only} names none of: ${benchmarks.map((b) => b.name).join('; ')}`);
  return chosen;
}
