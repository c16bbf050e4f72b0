/**
 * Closed-loop load, and rounds that take turns so that the machine's other work falls on every side
 * of a comparison alike (the reads beside their baselines, durable edits beside the bare endpoint).
 */
import { int, percentile, prng } from './stats.ts';

/** One stretch of load: completed requests, the time they took in all, and each one's latency. */
export type LoadRun = { requests: number; seconds: number; latencies: number[] };

/**
 * Closed-loop load: each worker makes one request after another until the time is up; the stretch
 * lasts until the last request in flight has answered, and that request counts.
 */
export async function closedLoop(workers: readonly (() => Promise<void>)[], seconds: number): Promise<LoadRun> {
  const deadline = performance.now() + seconds * 1000;
  return workersUntil(workers, () => performance.now() < deadline);
}

/** Closed-loop load of `total` requests shared by the workers, each worker one request at a time. */
export async function countedLoop(workers: readonly (() => Promise<void>)[], total: number): Promise<LoadRun> {
  let left = total;
  return workersUntil(workers, () => left-- > 0);
}

/** Every worker makes one request after another while `more()` says so; the stretch ends with the last answer. */
async function workersUntil(workers: readonly (() => Promise<void>)[], more: () => boolean): Promise<LoadRun> {
  const started = performance.now();
  const latencies: number[] = [];
  await Promise.all(
    workers.map(async (work) => {
      while (more()) {
        const t0 = performance.now();
        await work();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { requests: latencies.length, seconds: (performance.now() - started) / 1000, latencies };
}

export type SideFigures = { rate: number; requests: number; seconds: number; p50: number; p99: number; roundRates: number[] };

/**
 * Every side measured in the same run: one warm-up stretch each, then `rounds` rounds in which each
 * side has one stretch, in an order drawn afresh per round (from a fixed seed), so that neither
 * side has the machine to itself for longer than the other. A side is given the size of its
 * stretch (`stretch`, `warmup`) in whatever unit it loads by: seconds, or requests.
 */
export async function sideBySide<Side extends string>(
  sides: Record<Side, (size: number) => Promise<LoadRun>>,
  options: { rounds: number; stretch: number; warmup: number; seed: number },
): Promise<Record<Side, SideFigures>> {
  const names = Object.keys(sides) as Side[];
  for (const name of names) await sides[name](options.warmup);
  const runs = Object.fromEntries(names.map((name) => [name, [] as LoadRun[]])) as Record<Side, LoadRun[]>;
  const random = prng(options.seed);
  for (let round = 0; round < options.rounds; round++) {
    const order = [...names];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const name of order) runs[name].push(await sides[name](options.stretch));
  }
  return Object.fromEntries(
    names.map((name) => {
      const stretches = runs[name];
      const requests = stretches.reduce((sum, run) => sum + run.requests, 0);
      const seconds = stretches.reduce((sum, run) => sum + run.seconds, 0);
      const latencies = stretches.flatMap((run) => run.latencies).sort((a, b) => a - b);
      return [name, { rate: requests / seconds, requests, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), roundRates: stretches.map((run) => run.requests / run.seconds) }];
    }),
  ) as Record<Side, SideFigures>;
}

/** A verdict cell: the figure against a lower bound. */
export const atLeast = (value: number, target: number) => (value >= target ? 'met' : '**missed**');

export const perSecond = (value: number) => `${int(value)} req/s`;

/** The slowest and fastest round, to show how much the machine moved the figure. */
export const spread = (rates: readonly number[]) => `${int(Math.min(...rates))}-${int(Math.max(...rates))}`;
