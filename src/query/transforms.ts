/**
 * Transforms of a bucket list: one chosen statistic of every bucket turned into a
 * chart value (a rate, a difference, a running total, a moving average).
 *
 * Where they are computed: in the engine, on the bucket list after shaping and fill,
 * not in the database with `$setWindowFields` (MongoDB 5.0+). Measured with
 * `scripts/bench/transforms.ts` (retired after 5e534e9) on the embedded SecantusDB (2 shared cores, other work
 * running), from the same 90,467 pipeline rows (10 groups x 10,000 minute buckets, 10%
 * of them empty), median of 5 alternating runs, ms:
 *
 * | transform | engine: ship rows, shape, fill, transform | of which the engine's JS | window stage in the pipeline | ratio |
 * | --- | ---: | ---: | ---: | ---: |
 * | rate (`$addFields`) | 7,122 | 820 | 16,006 | 2.25x |
 * | difference (`$shift`) | 8,412 | 867 | 34,906 | 4.15x |
 * | movingAverage(10) (`$avg`, documents [-9, 0]) | 7,759 | 1,092 | 38,424 | 4.95x |
 *
 * `cumulativeSum` (`$sum`, documents [unbounded, current]) and `movingAverage(1000)`
 * (documents [-999, 0]) grow with the number of rows times the window on this server, so
 * they were measured on one group: 447, 893 and 1,797 rows took 1,654, 9,665 and 32,412
 * ms (cumulativeSum) and 1,661, 6,549 and 28,251 ms (movingAverage(1000)), against 36 to
 * 157 ms in the engine. Extrapolated to the 90,467 rows: about 2 hours and half an
 * hour; and the server ignores `maxTimeMS`, so such a query cannot even be cut short.
 * Of the engine's JS share (timed step by step at the end of the same script, 100,000
 * buckets), `fillBuckets` takes 117 ms and a transform 43 to 60 ms; most of the rest is
 * shaping the rows (`shapeBucketGroups`, 418 ms), which both ways need.
 *
 * So: shipping and shaping the rows cost the same either way; a window stage makes the
 * query 2.2 to 5 times slower (far more for long windows), where the transform costs
 * the engine 43 to 60 ms. Besides, the engine needs the complete bucket list anyway (fill modes,
 * empty buckets the pipeline never returns as rows, calendar-exact bucket durations for
 * `rate`), which `$setWindowFields` would only see after `$densify` (5.1+) and `$fill`
 * (5.3+); and it computes the same thing on every server the project supports, whatever
 * its version. `mongod` evaluates windows incrementally and would cost less; the
 * figures must be taken there (`MONGODB_URI=... npx tsx scripts/bench/transforms.ts` on the tree of 5e534e9)
 * before that choice is revisited.
 */
import { ErrorCode, InputError } from '../errors.ts';
import { percentile, type Summary } from '../model/stats.ts';
import type { FilledBucket } from './fill.ts';
import type { Bucket } from './shape.ts';

/** The statistics a bucket carries as plain numbers. */
type NumericStatistic = 'count' | 'sum' | 'min' | 'max' | 'avg' | 'variance' | 'stddev' | 'sampleStddev' | 'increase' | 'rate';

/**
 * A statistic of a bucket that a transform or a comparison reads: a key of
 * {@link Bucket}'s numeric statistics (a counter's `increase` and `rate` among them), the
 * value of its first or last reading, or a percentile (`p50`: the median) from its sketch.
 */
export type Statistic = NumericStatistic | 'first' | 'last' | 'p50' | 'p90' | 'p95' | 'p99';

/** Every {@link Statistic}. */
export const STATISTICS: readonly Statistic[] = [
  'count',
  'sum',
  'min',
  'max',
  'avg',
  'variance',
  'stddev',
  'sampleStddev',
  'first',
  'last',
  'p50',
  'p90',
  'p95',
  'p99',
  'increase',
  'rate',
];

/** The percent of each percentile {@link Statistic}. */
const PERCENTS: Partial<Record<Statistic, number>> = { p50: 50, p90: 90, p95: 95, p99: 99 };

/** True for the statistics that need the first and last readings merged. */
export const needsFirstLast = (statistic: Statistic) => statistic === 'first' || statistic === 'last';
/** True for the statistics that need the merged sketch. */
export const needsSketch = (statistic: Statistic) => PERCENTS[statistic] !== undefined;
/** True for the statistics of counters, which need the counter pipeline and a counter metric. */
export const needsCounter = (statistic: Statistic) => statistic === 'increase' || statistic === 'rate';

/** `statistic` of a bucket: null where the bucket has none (no readings, or first, last or sketch unknown). */
export function statisticValue(bucket: Summary, statistic: Statistic): number | null {
  if (statistic === 'first' || statistic === 'last') return bucket[statistic]?.v ?? null;
  const percent = PERCENTS[statistic];
  if (percent !== undefined) return percentile(bucket, percent);
  return bucket[statistic as NumericStatistic];
}

/** Smallest and largest `movingAverage` window, in values. */
export const MOVING_AVERAGE_WINDOW = { min: 1, max: 1000 } as const;

/**
 * What a transform makes of the chosen statistic `x` of each bucket, giving its
 * `value` (null where it is undefined):
 * - `none`: `x` itself (so a comparison with an earlier period can read a plain
 *   statistic).
 * - `rate`: `x` per second of the bucket's real duration: the part of `[start, end)`
 *   inside the query range `[from, to)`, so a first bucket that starts before `from`
 *   or a last one that ends after `to` is divided by the time it covers; a month by its
 *   true length. This is MMS's "avg/sec" and Prometheus' `rate()` without counter
 *   semantics: `x / seconds`, no reset detection, no extrapolation. Of `count`: readings
 *   per second; of `sum`: the amount per second.
 * - `difference`: `x` minus the previous bucket's `x`; null at the first bucket, and
 *   next to a bucket whose `x` is null or that is not listed (fill `NONE`): a difference
 *   is only taken between adjacent buckets (the previous one ends where this one
 *   starts). Like InfluxQL's `DIFFERENCE` on a continuous list.
 * - `cumulativeSum`: the running total of `x` from the first bucket of the list (the
 *   range start) up to and including this one; a null `x` adds nothing, so an empty
 *   bucket shows the total so far (0 before any value). Like InfluxQL's
 *   `CUMULATIVE_SUM`.
 * - `movingAverage`: the mean of the last `window` non-null values of `x`, this
 *   bucket's included; fewer at the start of the list (the mean of those there are);
 *   null where this bucket's own `x` is null, so an empty bucket stays empty. `window`
 *   is an integer in {@link MOVING_AVERAGE_WINDOW}.
 */
export type Transform =
  | { kind: 'none' }
  | { kind: 'rate' }
  | { kind: 'difference' }
  | { kind: 'cumulativeSum' }
  | { kind: 'movingAverage'; window: number };

/** A bucket of a filled list with the value a transform gave it. */
export interface TransformedBucket extends FilledBucket {
  /** The transform's value for this bucket; null where it is undefined (see {@link Transform}). */
  value: number | null;
}

/**
 * Checks a transform's arguments.
 * @param inputPath where the window came from in the request, for the error.
 * @throws InputError INVALID_ARGUMENT when a `movingAverage` window is not an integer
 * in {@link MOVING_AVERAGE_WINDOW}.
 */
export function validateTransform(transform: Transform, inputPath = 'window'): Transform {
  if (transform.kind === 'movingAverage') {
    const { window } = transform;
    if (!Number.isInteger(window) || window < MOVING_AVERAGE_WINDOW.min || window > MOVING_AVERAGE_WINDOW.max) {
      throw new InputError(
        ErrorCode.INVALID_ARGUMENT,
        `A moving average window must be an integer from ${MOVING_AVERAGE_WINDOW.min} to ${MOVING_AVERAGE_WINDOW.max}; got ${String(window)}`,
        inputPath,
      );
    }
  }
  return transform;
}

/**
 * Applies `transform` to `statistic` of each bucket of one bucket list (one group):
 * the values only, one per bucket, same order (see {@link transformBuckets}).
 *
 * It reads the statistic as listed: call it after `fillBuckets` (`query/fill.ts`), and
 * a filled value counts as a value, as in InfluxQL and Flux where `fill()` applies to
 * the aggregate before the transform. So a `cumulativeSum` over fill `PREVIOUS` or
 * `LINEAR` adds the filled values; over `NULL` or `ZERO` it adds the readings only.
 * `count` is 0, never null, in an empty bucket, so its transforms treat an empty
 * bucket as a real 0. For fill `NONE`, transform the `NONE` list, or the `NULL` list
 * and drop the empty buckets afterwards: the results agree (`difference` is null next
 * to a bucket that is not listed).
 *
 * @param buckets one group's buckets in time order.
 * @param options.range the query range `[from, to)` in ms since the epoch (UTC), for
 * `rate`'s real durations.
 * @throws InputError INVALID_ARGUMENT for a bad `movingAverage` window (see {@link validateTransform}).
 */
export function transformValues(
  buckets: readonly Bucket[],
  options: { statistic: Statistic; transform: Transform; range: { from: number; to: number } },
): (number | null)[] {
  const transform = validateTransform(options.transform);
  const x = buckets.map((bucket) => statisticValue(bucket, options.statistic));
  switch (transform.kind) {
    case 'none':
      return x;
    case 'rate':
      return buckets.map((bucket, i) => {
        const v = x[i]!;
        const seconds = (Math.min(bucket.end.getTime(), options.range.to) - Math.max(bucket.start.getTime(), options.range.from)) / 1000;
        return v === null || !(seconds > 0) ? null : v / seconds;
      });
    case 'difference':
      return buckets.map((bucket, i) => {
        if (i === 0) return null;
        const v = x[i]!;
        const before = x[i - 1]!;
        const adjacent = buckets[i - 1]!.end.getTime() === bucket.start.getTime();
        return v === null || before === null || !adjacent ? null : finiteOrNull(v - before);
      });
    case 'cumulativeSum': {
      let total = 0;
      return x.map((v) => {
        if (v !== null) total += v;
        return finiteOrNull(total);
      });
    }
    case 'movingAverage':
      return movingAverage(x, transform.window);
  }
}

/**
 * {@link transformValues} with each value attached to its bucket: new objects holding
 * exactly the fields of a {@link TransformedBucket}, built field by field (see
 * `fillBuckets` on why not by spreading).
 * @param buckets one group's buckets in time order, as `fillBuckets` lists them.
 * @throws InputError INVALID_ARGUMENT for a bad `movingAverage` window (see {@link validateTransform}).
 */
export function transformBuckets(
  buckets: readonly FilledBucket[],
  options: { statistic: Statistic; transform: Transform; range: { from: number; to: number } },
): TransformedBucket[] {
  const values = transformValues(buckets, options);
  return buckets.map((b, i) => ({
    start: b.start,
    end: b.end,
    partial: b.partial,
    localStart: b.localStart,
    count: b.count,
    sum: b.sum,
    min: b.min,
    max: b.max,
    avg: b.avg,
    variance: b.variance,
    stddev: b.stddev,
    sampleStddev: b.sampleStddev,
    first: b.first,
    last: b.last,
    sketch: b.sketch,
    increase: b.increase,
    rate: b.rate,
    filled: b.filled,
    value: values[i]!,
  }));
}

/**
 * Mean of the last `window` non-null values at each position (null where the value
 * itself is null). The window's sum is kept with Neumaier's compensated summation, so
 * taking out a large value that left does not leave its rounding error behind.
 */
function movingAverage(x: readonly (number | null)[], window: number): (number | null)[] {
  const ring: number[] = [];
  let head = 0;
  let sum = 0;
  let compensation = 0;
  const add = (v: number) => {
    const t = sum + v;
    compensation += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
    sum = t;
  };
  return x.map((v) => {
    if (v === null) return null;
    if (ring.length < window) ring.push(v);
    else {
      add(-ring[head]!);
      ring[head] = v;
      head = (head + 1) % window;
    }
    add(v);
    return finiteOrNull((sum + compensation) / ring.length);
  });
}

/** `value`, or null when arithmetic overflowed (GraphQL's Float cannot carry infinities). */
const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);
