/** Small statistics and formatting helpers for the benchmarks. */
import { readFileSync } from 'node:fs';


export type Summary = { n: number; p50: number; p99: number; mean: number; min: number; max: number };

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sum / sorted.length,
    min: sorted[0] ?? NaN,
    max: sorted.at(-1) ?? NaN,
  };
}

/** Milliseconds with two decimals. */
export const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)} ms` : 'n/a');

export const int = (value: number) => Math.round(value).toLocaleString('en-US');

export const bytes = (value: number) =>
  value >= 1 << 20 ? `${(value / (1 << 20)).toFixed(2)} MiB` : value >= 1024 ? `${(value / 1024).toFixed(1)} KiB` : `${value} B`;

/** A verdict cell: the figure against an upper bound. */
export const verdict = (value: number, target: number) => (value <= target ? 'met' : '**missed**');

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Progress goes to stderr so stdout stays clean. */
export const progress = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** A small deterministic PRNG (mulberry32), so every run types the same text. */
export function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The whole machine's CPU time so far from /proc/stat, in clock ticks: in all, busy (not idle or waiting on I/O), and stolen by the hypervisor (Linux). */
export function machineCpu(): { total: number; busy: number; steal: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return { total, busy: total - fields[3]! - fields[4]!, steal: fields[7] ?? 0 };
}
