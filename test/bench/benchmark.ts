import type { Store } from '../support/server.ts';

/** A store a benchmark runs on; `label` names it in progress lines and in tables. */
export type StoreTarget = { store: Store; label: string };

/** One benchmark of `npm run bench`: it measures every store in turn, then writes its section of BENCHMARKS.md. */
export type Benchmark = {
  name: string;
  measure(targets: readonly StoreTarget[]): Promise<string>;
};

export type Measured<Figures> = { target: StoreTarget; figures: Figures };

/** A benchmark run once per store, its section drawn from every store's figures once all have run. */
export function perStore<Figures>(
  name: string,
  run: (target: StoreTarget) => Promise<Figures>,
  report: (results: Measured<Figures>[]) => string,
): Benchmark {
  return {
    name,
    async measure(targets) {
      const results: Measured<Figures>[] = [];
      for (const target of targets) results.push({ target, figures: await run(target) });
      return report(results);
    },
  };
}
