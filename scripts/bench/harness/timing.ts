/** Timing helpers of the benchmarks: repeated runs after a warm-up, medians and percentiles, all in ms. */

/** The value at percentile `p` (0..100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** The median of `values` (nearest rank, see {@link percentile}). */
export const median = (values: readonly number[]) => percentile(values, 50);

/** Latency of `run`: one untimed warm-up, then `repetitions` timed runs, in ms. */
export async function latency(run: () => Promise<unknown>, repetitions: number): Promise<{ p50: number; p99: number; runs: number[] }> {
  await run();
  const runs: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const started = performance.now();
    await run();
    runs.push(performance.now() - started);
  }
  return { p50: percentile(runs, 50), p99: percentile(runs, 99), runs };
}

/**
 * Latencies of two alternatives measured in alternation (a, b, a, b, ...) after one
 * warm-up each, so drift of the server (caches, garbage collection) hits both alike.
 * @returns the median of each, in ms.
 */
export async function alternating(a: () => Promise<unknown>, b: () => Promise<unknown>, repetitions: number): Promise<[number, number]> {
  await a();
  await b();
  const runsA: number[] = [];
  const runsB: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    let started = performance.now();
    await a();
    runsA.push(performance.now() - started);
    started = performance.now();
    await b();
    runsB.push(performance.now() - started);
  }
  return [percentile(runsA, 50), percentile(runsB, 50)];
}

/** Splits `items` into consecutive batches of `size`. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Times `run` `runs + 1` times and leaves the first (a warm-up) out.
 * @returns the timed runs (ms), their median and what the last run returned.
 */
export async function warmedRuns<T>(run: () => T | Promise<T>, runs: number): Promise<{ ms: number[]; median: number; result: T }> {
  const ms: number[] = [];
  let result: T | undefined;
  for (let i = 0; i <= runs; i++) {
    const started = performance.now();
    result = await run();
    if (i > 0) ms.push(performance.now() - started);
  }
  return { ms, median: median(ms), result: result as T };
}

/** A copy of `items` in a random order. */
export function shuffled<T>(items: readonly T[]): T[] {
  return items
    .map((item) => ({ item, key: Math.random() }))
    .sort((a, b) => a.key - b.key)
    .map(({ item }) => item);
}

/**
 * Fastest and median of `runs` timed runs of each case after one warm-up each; every
 * round runs all cases in a new random order, so load from other work on a shared
 * machine does not fall on one case (the fastest run is the steadier figure there).
 * @returns the figures by case name, in ms.
 */
export async function timeCases(
  cases: readonly { name: string; run: () => Promise<unknown> }[],
  runs: number,
): Promise<Map<string, { fastest: number; median: number }>> {
  for (const c of cases) await c.run();
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let i = 0; i < runs; i++) {
    for (const c of shuffled(cases)) {
      const started = performance.now();
      await c.run();
      times.get(c.name)!.push(performance.now() - started);
    }
  }
  return new Map([...times].map(([name, values]) => [name, { fastest: Math.min(...values), median: median(values) }]));
}
