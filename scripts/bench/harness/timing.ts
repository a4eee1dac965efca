/** Timing helpers of the benchmarks: repeated runs after a warm-up, medians and percentiles, all in ms. */

/** The value at percentile `p` (0..100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** The median of `values` (nearest rank, see {@link percentile}). */
export const median = (values: readonly number[]) => percentile(values, 50);

/** Splits `items` into consecutive batches of `size`. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A copy of `items` in a random order. */
function shuffled<T>(items: readonly T[]): T[] {
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

/** One side of {@link takingTurns}: the median of its timed runs, the first run's answer, and its error if a run failed. */
export interface TurnOutcome<T> {
  /** Median ms of the timed runs (failed runs included: their time until the error). */
  median: number;
  /** What the warm-up run returned (undefined when it failed). */
  first?: T;
  /** The first error of any run, e.g. a QUERY_TIMEOUT; the other side is still timed. */
  error?: Error;
}

/**
 * Two alternatives taking turns (a, b, a, b, ...) `runs + 1` times each: the first turn
 * of each is a warm-up whose answer is kept (to check) but not its time. A side whose
 * run throws is timed until the error and keeps going. `a` may be null (a question one
 * side cannot ask): then only `b` runs.
 */
export async function takingTurns<A, B>(
  a: (() => Promise<A>) | null,
  b: () => Promise<B>,
  runs: number,
): Promise<{ a: TurnOutcome<A> | null; b: TurnOutcome<B> }> {
  const side = <T>() => ({ ms: [] as number[], first: undefined as T | undefined, error: undefined as Error | undefined });
  const sides = { a: side<A>(), b: side<B>() };
  const turn = async <T>(run: () => Promise<T>, into: ReturnType<typeof side<T>>, warmUp: boolean) => {
    const started = performance.now();
    try {
      const answer = await run();
      if (warmUp) into.first = answer;
    } catch (error) {
      into.error ??= error as Error;
    }
    if (!warmUp) into.ms.push(performance.now() - started);
  };
  for (let i = 0; i <= runs; i++) {
    if (a !== null) await turn(a, sides.a, i === 0);
    await turn(b, sides.b, i === 0);
  }
  const outcome = <T>(s: ReturnType<typeof side<T>>): TurnOutcome<T> => ({
    median: median(s.ms),
    ...(s.first === undefined ? {} : { first: s.first }),
    ...(s.error === undefined ? {} : { error: s.error }),
  });
  return { a: a === null ? null : outcome(sides.a), b: outcome(sides.b) };
}
