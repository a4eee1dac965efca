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
}

/**
 * `value`, or null when it is NaN or infinite. GraphQL's Float cannot carry either, and a
 * query must never fail because of what is stored: values are bounded at recording
 * (`Limits.maxAbsValue`) so this only guards against arithmetic overflow in `n * sq`.
 */
const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

/**
 * Derives the client-facing {@link Summary} from stored {@link Stats}.
 * The variance is computed as `(n*sq - sum^2) / n^2`: for integer data whose sums stay
 * below 2^53 every intermediate is exact, so the result is the correctly rounded
 * variance; rounding noise on other data is clamped at 0. A statistic whose arithmetic
 * overflows (`n * sq` beyond about 1.8e308) is null rather than infinite.
 */
export function summarize(stats: Stats | null | undefined): Summary {
  if (!stats || stats.n <= 0) {
    return { count: 0, sum: null, min: null, max: null, avg: null, variance: null, stddev: null, sampleStddev: null };
  }
  const { n, sum, sq } = stats;
  const spread = Math.max(0, n * sq - sum * sum);
  const variance = spread / (n * n);
  const sample = n > 1 ? Math.sqrt(spread / (n * (n - 1))) : null;
  return {
    count: n,
    sum: finiteOrNull(sum),
    min: finiteOrNull(stats.min),
    max: finiteOrNull(stats.max),
    avg: finiteOrNull(sum / n),
    variance: finiteOrNull(variance),
    stddev: finiteOrNull(Math.sqrt(variance)),
    sampleStddev: sample === null ? null : finiteOrNull(sample),
  };
}
