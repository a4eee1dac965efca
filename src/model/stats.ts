import { SKETCH_ACCURACY, sketchCount, sketchQuantile, type SketchBins } from './sketch.ts';

/**
 * Partial aggregates of one field over a span of time, as stored at every level of a
 * series-day document: the `_stats` reducer of Cloudant's "Time-series Data Storage". They merge by adding
 * `n`, `sum`, `sq` and combining `min`/`max`, so any coarser span is computed exactly
 * from finer ones.
 */
export interface Stats {
  /** Number of readings. 0 means "no data" (a pre-allocated or empty slot). */
  n: number;
  /** Sum of the values. */
  sum: number;
  /** Smallest value; +Infinity when `n` is 0. */
  min: number;
  /** Largest value; -Infinity when `n` is 0. */
  max: number;
  /** Sum of the squares of the values (for variance and standard deviation). */
  sq: number;
}

/**
 * A reading's value with its time, as kept for the first and last reading of a slot:
 * `t` in ms since the epoch (UTC), `v` the value. Pairs are ordered by time, then by
 * value (as MongoDB compares the embedded documents `{t, v}` field by field, "Comparison/Sort
 * Order" in the MongoDB manual): of several readings in the same millisecond the first is
 * the one with the smallest value and the last the one with the largest.
 */
export interface TimedValue {
  t: number;
  v: number;
}

/** True when pair `a` comes before pair `b` in the order of {@link TimedValue}. */
export function isEarlier(a: TimedValue, b: TimedValue): boolean {
  return a.t < b.t || (a.t === b.t && a.v < b.v);
}

/** A sort comparator in the order of {@link TimedValue}: negative when `a` comes first, 0 for equal pairs. */
export function compareTimed(a: TimedValue, b: TimedValue): number {
  return isEarlier(a, b) ? -1 : isEarlier(b, a) ? 1 : 0;
}

/** A new empty {@link Stats}: `n = 0`, `min = +Infinity`, `max = -Infinity`. */
export function emptyStats(): Stats {
  return { n: 0, sum: 0, min: Infinity, max: -Infinity, sq: 0 };
}

/** Adds one value to `stats` in place. */
export function addValue(stats: Stats, value: number): void {
  stats.n += 1;
  stats.sum += value;
  stats.sq += value * value;
  if (value < stats.min) stats.min = value;
  if (value > stats.max) stats.max = value;
}

/** Adds `other` into `into` in place. */
export function mergeStats(into: Stats, other: Stats): void {
  into.n += other.n;
  into.sum += other.sum;
  into.sq += other.sq;
  if (other.min < into.min) into.min = other.min;
  if (other.max > into.max) into.max = other.max;
}

/**
 * The statistics a query reads for a bucket or a range: {@link Stats} and, when asked for
 * and known for every reading, the first and last reading and the merged sketch.
 */
export interface RowStats extends Stats {
  /** The earliest reading; null when not asked for or not known for every reading. */
  first?: TimedValue | null;
  /** The latest reading; null likewise. */
  last?: TimedValue | null;
  /** The merged quantile sketch (`model/sketch.ts`); null when not asked for or when it does not hold every reading. */
  sketch?: SketchBins | null;
  /**
   * Counters: the reset-aware increase of the readings of the bucket or range, summed over
   * its series (docs/statistics.md, "Counters"); null when not asked for or not known.
   */
  increase?: number | null;
}

/**
 * The statistics a client sees for a bucket or a range. Every value but `count` is
 * null when `count` is 0, so an empty bucket is never mistaken for a real zero.
 */
export interface Summary {
  count: number;
  sum: number | null;
  min: number | null;
  max: number | null;
  /** Arithmetic mean. */
  avg: number | null;
  /** Population variance, `sq/n - (sum/n)^2` (like MongoDB's `$stdDevPop` squared). */
  variance: number | null;
  /** Population standard deviation, the square root of `variance`. */
  stddev: number | null;
  /** Sample standard deviation (divides by `n - 1`, like `$stdDevSamp`); null when `count < 2`. */
  sampleStddev: number | null;
  /** The earliest reading (the smallest value of several in the same millisecond); null when unknown (see {@link RowStats}). */
  first: TimedValue | null;
  /** The latest reading (the largest value of several in the same millisecond); null when unknown. */
  last: TimedValue | null;
  /** The merged quantile sketch of every reading, for percentiles (see `model/sketch.ts`); null when unknown. */
  sketch: SketchBins | null;
  /**
   * Counters: the reset-aware increase over the readings, each series' readings in time
   * order, a drop counting as a reset (see `model/counter.ts`), summed over the series;
   * null when unknown or not asked for.
   */
  increase: number | null;
  /** `increase` per second of the span's time inside the query range; null with `increase`. */
  rate: number | null;
}

/**
 * `value`, or null when it is NaN or infinite. GraphQL's Float cannot carry either, and a
 * query must never fail because of what is stored: values are bounded at recording
 * (`Limits.maxAbsValue`) so this only guards against arithmetic overflow in `n * sq`.
 */
const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

/**
 * Derives the client-facing {@link Summary} from stored {@link Stats}. A sketch is kept
 * only when its count equals the readings' (a slot written without a sketch, or before
 * sketches existed, would otherwise make percentiles of part of the readings). `rate` is
 * `increase / seconds`, `seconds` being the span's time inside the query range (null
 * when not given or not positive).
 * The variance is computed as `(n*sq - sum^2) / n^2`: for integer data whose sums stay
 * below 2^53 every intermediate is exact, so the result is the correctly rounded
 * variance; rounding noise on other data is clamped at 0. A statistic whose arithmetic
 * overflows (`n * sq` beyond about 1.8e308) is null rather than infinite.
 */
export function summarize(stats: RowStats | null | undefined, seconds?: number): Summary {
  if (!stats || stats.n <= 0) {
    return {
      count: 0,
      sum: null,
      min: null,
      max: null,
      avg: null,
      variance: null,
      stddev: null,
      sampleStddev: null,
      first: null,
      last: null,
      sketch: null,
      increase: null,
      rate: null,
    };
  }
  const { n, sum, sq } = stats;
  const spread = Math.max(0, n * sq - sum * sum);
  const variance = spread / (n * n);
  const sample = n > 1 ? Math.sqrt(spread / (n * (n - 1))) : null;
  const increase = stats.increase === undefined || stats.increase === null ? null : finiteOrNull(stats.increase);
  return {
    count: n,
    sum: finiteOrNull(sum),
    min: finiteOrNull(stats.min),
    max: finiteOrNull(stats.max),
    avg: finiteOrNull(sum / n),
    variance: finiteOrNull(variance),
    stddev: finiteOrNull(Math.sqrt(variance)),
    sampleStddev: sample === null ? null : finiteOrNull(sample),
    first: stats.first ?? null,
    last: stats.last ?? null,
    sketch: stats.sketch !== undefined && stats.sketch !== null && sketchCount(stats.sketch) === n ? stats.sketch : null,
    increase,
    rate: increase !== null && seconds !== undefined && seconds > 0 ? finiteOrNull(increase / seconds) : null,
  };
}

/**
 * The `percent` percentile (0 to 100) of the readings a summary describes, from its
 * merged sketch: within {@link SKETCH_ACCURACY} (1%) of the exact value of the reading of
 * 0-based rank `floor(percent / 100 * (count - 1))` in value order (see `sketchQuantile`),
 * clamped to the exact min and max. Null when the summary has no sketch (no readings, or
 * a sketch that does not hold every reading).
 * @throws RangeError when `percent` is outside [0, 100].
 */
export function percentile(summary: Pick<Summary, 'sketch' | 'min' | 'max'>, percent: number): number | null {
  if (!(percent >= 0 && percent <= 100)) throw new RangeError(`A percentile must be from 0 to 100; got ${percent}`);
  if (summary.sketch === null) return null;
  const bounds = summary.min !== null && summary.max !== null ? { min: summary.min, max: summary.max } : undefined;
  return sketchQuantile(summary.sketch, percent / 100, bounds);
}
