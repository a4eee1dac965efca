/**
 * Expected answers by plain loops over the readings a test sent, shared by the tests of
 * folds, compactions, rollups and read pins (test/integration/): readings
 * of field `v` over three hosts and two days, and what the server must answer for them.
 */
import { expect } from 'vitest';
import { SKETCH_ACCURACY } from '../../src/model/sketch.ts';
import type { TestApp } from './app.ts';

/** One reading as the test sends it: field `v` of series `<metric>,host=<host>` at `time` (ms since epoch, UTC). */
export interface Sent {
  host: string;
  time: number;
  value: number;
}

/** A bucket's start (ISO), count and sum. */
export interface BucketCountSum {
  start: string;
  count: number;
  sum: number;
}

/** Count, sum, min and max of the values of `readings`, by a plain loop (min Infinity and max -Infinity for none). */
export function totalsOf(readings: readonly Pick<Sent, 'value'>[]): { count: number; sum: number; min: number; max: number } {
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const r of readings) {
    sum += r.value;
    min = Math.min(min, r.value);
    max = Math.max(max, r.value);
  }
  return { count: readings.length, sum, min, max };
}

/**
 * `count` readings over three hosts and two days from `start` (ms, UTC midnight),
 * numbered from `seed`: reading k is at minute (k x 7919) mod 2880 and second k mod 60,
 * so readings numbered below 2880 all have distinct times; values are halves between
 * -20 and 20.5, so every sum is exact in floating point whatever the order of additions.
 */
export function spread(start: number, count: number, seed: number): Sent[] {
  return Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    return {
      host: `h${k % 3}`,
      time: start + ((k * 7919) % (2 * 1440)) * 60_000 + (k % 60) * 1000,
      value: ((k * 37) % 41) - 20 + (k % 2) * 0.5,
    };
  });
}

/** Count and sum per bucket of `size` ms (UTC-aligned), non-empty buckets only, by start. */
export function expectedBuckets(readings: readonly Sent[], size: number): BucketCountSum[] {
  const buckets = new Map<number, { count: number; sum: number }>();
  for (const r of readings) {
    const start = Math.floor(r.time / size) * size;
    const bucket = buckets.get(start) ?? { count: 0, sum: 0 };
    bucket.count += 1;
    bucket.sum += r.value;
    buckets.set(start, bucket);
  }
  return [...buckets.entries()].sort(([a], [b]) => a - b).map(([start, bucket]) => ({ start: new Date(start).toISOString(), ...bucket }));
}

/**
 * Checks a percentile answer against the documented guarantee (schema `percentile`,
 * `SKETCH_ACCURACY`): within 1% (relative) of the exact value of the reading of rank
 * floor(p/100 x (count - 1)) in value order, computed here by sorting the values.
 */
export function expectPercentile(answer: number | null, readings: readonly Sent[], p: number): void {
  const sorted = readings.map((r) => r.value).sort((a, b) => a - b);
  const exact = sorted[Math.floor((p / 100) * (sorted.length - 1))]!;
  expect(answer).not.toBeNull();
  // A tiny absolute slack for floating point at the bound itself.
  expect(Math.abs(answer! - exact)).toBeLessThanOrEqual(SKETCH_ACCURACY * Math.abs(exact) + 1e-9);
}

/** The readings of `host`, newest first (the tests send distinct times). */
export const newestFirst = (readings: readonly Sent[], host: string): Sent[] =>
  readings.filter((r) => r.host === host).sort((a, b) => b.time - a.time);

/**
 * Records `readings` into `metric` through the GraphQL mutation (tag `host`, field `v`)
 * and expects every one applied, then appends them to `sent`, the readings a test's
 * plain loops add up.
 * @throws a failed `expect` when the mutation answers errors or applies fewer readings.
 */
export async function recordSent(t: TestApp, metric: string, readings: readonly Sent[], sent: Sent[]): Promise<void> {
  const answer = await t.graphql<{ recordReadings: { applied: number } }>(
    `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { applied } }`,
    {
      readings: readings.map((r) => ({
        metric,
        tags: [{ key: 'host', value: r.host }],
        time: new Date(r.time).toISOString(),
        fields: [{ name: 'v', value: r.value }],
      })),
    },
  );
  expect(answer.errors).toBeUndefined();
  expect(answer.data!.recordReadings.applied).toBe(readings.length);
  sent.push(...readings);
}
