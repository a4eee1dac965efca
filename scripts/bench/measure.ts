/** Timing helpers of the benchmark: repeated runs after a warm-up, medians and percentiles. */
import { InvalidArgumentError } from 'commander';

/** Parses a command-line option that must be a positive integer. */
export function positiveInt(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
}

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

/** Formats a number of ms, bytes or a ratio for the tables. */
export const format = {
  ms: (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2)),
  rate: (perSecond: number) => Math.round(perSecond).toLocaleString('en-US'),
  bytes: (bytes: number) =>
    bytes >= 1024 * 1024
      ? `${(bytes / 1024 / 1024).toFixed(2)} MiB`
      : bytes >= 1024
        ? `${(bytes / 1024).toFixed(1)} KiB`
        : `${Math.round(bytes)} B`,
  ratio: (ratio: number) => (Number.isFinite(ratio) ? `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}x` : 'n/a'),
};
