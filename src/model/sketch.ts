/**
 * A mergeable quantile sketch with a relative-error guarantee, after "DDSketch: A Fast
 * and Fully-Mergeable Quantile Sketch with Relative-Error Guarantees" (Masson, Rim, Lee,
 * VLDB 2019). Values are counted in logarithmically sized bins; a sketch is a plain map
 * from bin key to count, so sketches merge exactly by adding counts per key, in any
 * order and grouping, and the merge of the sketches of two sets of values is the sketch
 * of their union.
 *
 * Unlike the paper's bounded-size variant, bins are never collapsed: every finite
 * non-zero value gets its own bin index, so the guarantee holds for every quantile.
 * A sketch of values in a range spanning a factor R holds at most about
 * `ln(R) / ln(SKETCH_GAMMA)` bins per sign (about 1,730 for values from 1e-6 to 1e9).
 */

/**
 * Relative accuracy `alpha` of {@link sketchQuantile}: an estimate is within
 * `alpha * |x|` of the true value `x` (the paper's "alpha-accurate" quantile).
 */
export const SKETCH_ACCURACY = 0.01;

/**
 * Ratio between consecutive bin boundaries, `gamma = (1 + alpha) / (1 - alpha)`
 * (as in the paper): bin `i` holds the magnitudes in `(gamma^(i-1), gamma^i]`.
 */
export const SKETCH_GAMMA = (1 + SKETCH_ACCURACY) / (1 - SKETCH_ACCURACY);

/** Natural logarithm of {@link SKETCH_GAMMA}, computed once. */
const LOG_GAMMA = Math.log(SKETCH_GAMMA);

/** Factor from a bin's upper boundary `gamma^i` to its representative value, `2 / (gamma + 1)`. */
const REPRESENTATIVE_FACTOR = 2 / (SKETCH_GAMMA + 1);

/**
 * A sketch: bin key (see {@link sketchKey}) to the number of values counted in the bin.
 * Counts are positive integers; a key that is absent counts 0.
 */
export type SketchBins = Map<string, number>;

/** Bin entries as {@link sketchCount} and {@link sketchQuantile} accept them: a sketch or any list of `[key, count]` pairs. */
export type SketchEntries = ReadonlyMap<string, number> | Iterable<[string, number]>;

/** Key of the bin of exact zeros (both `0` and `-0`). */
const ZERO_KEY = 'z';

/**
 * Bin key of `value`: `'z'` for 0 and -0, `p${i}` for a positive value and `m${i}` for
 * a negative one ("m" for minus), where
 * `i = Math.ceil(Math.log(Math.abs(value)) / Math.log(SKETCH_GAMMA))` is the index of
 * the bin `(gamma^(i-1), gamma^i]` holding `|value|` (the paper's bucket index;
 * negative values are counted in a mirrored set of bins). `i` is an integer of either
 * sign, written in decimal without a leading `+` (values below 1 have negative
 * indexes, e.g. `p-12`). There is no lower bound on `|value|`: every finite non-zero
 * double, subnormals included, gets its own index (from -37,220 for the smallest
 * subnormal to 35,488 for the largest double), never the zero bin.
 *
 * @throws {Error} when `value` is NaN or infinite. Callers validate values first
 *   (`|value| <= 1e150`, see `Limits.maxAbsValue`).
 */
export function sketchKey(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`A sketch cannot count ${value}: values must be finite`);
  if (value === 0) return ZERO_KEY;
  // `${-0}` is "0", so an index computed as -0 (values just below 1) is written "0".
  const index = Math.ceil(Math.log(Math.abs(value)) / LOG_GAMMA);
  return value > 0 ? `p${index}` : `m${index}`;
}

/** Counts one `value` in `bins`, in place. @throws {Error} as {@link sketchKey}. */
export function addToSketch(bins: SketchBins, value: number): void {
  addKeyToSketch(bins, sketchKey(value));
}

/**
 * Counts one value whose bin key (see {@link sketchKey}) is `key` in `bins`, in place:
 * for a value counted in the sketches of several levels, whose key is computed once.
 */
export function addKeyToSketch(bins: SketchBins, key: string): void {
  bins.set(key, (bins.get(key) ?? 0) + 1);
}

/**
 * Adds the counts of `other` into `into`, in place: afterwards `into` is the sketch of
 * the values of both (the paper's merge). Keys are not checked here;
 * {@link sketchQuantile} rejects malformed ones.
 */
export function mergeSketch(into: SketchBins, other: Iterable<[string, number]>): void {
  for (const [key, count] of other) into.set(key, (into.get(key) ?? 0) + count);
}

/** Number of values counted in `bins`: the sum of the counts. 0 for an empty sketch. */
export function sketchCount(bins: SketchEntries): number {
  let total = 0;
  for (const [, count] of bins) total += count;
  return total;
}

/** A parsed bin key: the sign of the bin's values (-1, 0 or 1) and, for a non-zero sign, its index. */
interface ParsedKey {
  sign: -1 | 0 | 1;
  index: number;
}

/**
 * Parses a bin key written by {@link sketchKey}. Only canonical keys are accepted: the
 * index must be a safe integer written exactly as `String(index)` would (no `+`,
 * leading zeros, exponent or `-0`).
 *
 * @throws {Error} on any other string.
 */
function parseKey(key: string): ParsedKey {
  if (key === ZERO_KEY) return { sign: 0, index: 0 };
  const prefix = key.charAt(0);
  const digits = key.slice(1);
  const index = Number(digits);
  if ((prefix !== 'p' && prefix !== 'm') || !Number.isSafeInteger(index) || String(index) !== digits) {
    throw new Error(`Malformed sketch bin key ${JSON.stringify(key)}: expected 'z', 'p<integer>' or 'm<integer>'`);
  }
  return { sign: prefix === 'p' ? 1 : -1, index };
}

/**
 * Representative value of the bin with key `key`: 0 for `'z'`,
 * `2 * gamma^i / (gamma + 1)` for `p${i}` and its negative for `m${i}` (the paper's
 * bucket estimate). Every magnitude in the bin, `(gamma^(i-1), gamma^i]`, is within
 * `SKETCH_ACCURACY` times itself of this value. For the bins of values up to 1e150 in
 * magnitude the result is finite; for bins of subnormal values (below about 2.2e-308)
 * it loses precision.
 *
 * @throws {Error} when `key` is not a bin key as written by {@link sketchKey}.
 */
export function binValue(key: string): number {
  return representative(parseKey(key));
}

/** Representative value of a parsed bin (see {@link binValue}). */
function representative({ sign, index }: ParsedKey): number {
  if (sign === 0) return 0;
  return sign * REPRESENTATIVE_FACTOR * SKETCH_GAMMA ** index;
}

/** A bin ready for ordering: its parsed key and its count. */
interface OrderedBin extends ParsedKey {
  count: number;
}

/**
 * Orders bins by the values they hold, smallest first: negative bins from the most
 * negative (largest index) up, then zero, then positive bins by ascending index.
 * Comparing signs and indexes, not representative values, keeps the order exact even
 * where representatives of subnormal bins round together.
 */
function compareBins(a: OrderedBin, b: OrderedBin): number {
  if (a.sign !== b.sign) return a.sign - b.sign;
  return a.sign * (a.index - b.index);
}

/**
 * Parses and checks every entry of `bins`, dropping zero counts.
 *
 * @throws {Error} on a malformed key; {@link RangeError} on a count that is negative or not finite.
 */
function parseBins(bins: SketchEntries): OrderedBin[] {
  const parsed: OrderedBin[] = [];
  for (const [key, count] of bins) {
    if (!(Number.isFinite(count) && count >= 0)) {
      throw new RangeError(`Sketch bin ${JSON.stringify(key)} has count ${count}: counts must be finite and non-negative`);
    }
    const bin = parseKey(key);
    if (count > 0) parsed.push({ ...bin, count });
  }
  return parsed;
}

/** Sum of the counts of parsed bins. */
function totalCount(bins: readonly OrderedBin[]): number {
  let total = 0;
  for (const bin of bins) total += bin.count;
  return total;
}

/** The bin holding the element of 0-based rank `rank` among `sorted` bins (in value order). */
function binAtRank(sorted: readonly OrderedBin[], rank: number): OrderedBin {
  let seen = 0;
  for (const bin of sorted) {
    seen += bin.count;
    if (rank < seen) return bin;
  }
  // Unreachable for 0 <= rank < total count; the last bin guards against rounding in the sums.
  return sorted[sorted.length - 1]!;
}

/** Known exact extremes of the values counted in a sketch. */
export interface SketchBounds {
  /** Smallest value counted. */
  min: number;
  /** Largest value counted. */
  max: number;
}

/** Checks that `q` is a quantile. @throws {RangeError} unless `0 <= q <= 1`. */
function checkQuantile(q: number): void {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`Quantile ${q} is out of range: it must be between 0 and 1`);
}

/** Checks that `bounds` are ordered numbers. @throws {RangeError} unless `min <= max`. */
function checkBounds(bounds: SketchBounds): void {
  if (!(bounds.min <= bounds.max)) {
    throw new RangeError(`Sketch bounds [${bounds.min}, ${bounds.max}] are invalid: min must not exceed max`);
  }
}

/**
 * Estimates the `q`-quantile of the values counted in `bins`, by the quantile query of
 * "DDSketch: A Fast and Fully-Mergeable Quantile Sketch with Relative-Error Guarantees"
 * (Masson, Rim, Lee, VLDB 2019).
 *
 * With `n` values counted, the target is `x_r`, the element of 0-based rank
 * `r = Math.floor(q * (n - 1))` among the values sorted in ascending order (the lower
 * element of the rank, as the paper's quantile definition). The bins are ordered by
 * value (`m` bins from the largest index down, then `'z'`, then `p` bins by ascending
 * index) and the representative value ({@link binValue}) of the bin holding `x_r` is
 * returned.
 *
 * Guarantee: for every `q` in [0, 1] the estimate `x~` satisfies
 * `|x~ - x_r| <= SKETCH_ACCURACY * |x_r|` (exact when `x_r` is 0), up to floating-point
 * rounding in the logarithm of {@link sketchKey} (a few ulps), for values of normal
 * magnitude.
 *
 * When `bounds` holds the exact smallest and largest values counted (known from the
 * exact statistics kept beside the sketch), rank 0 returns `bounds.min` and rank
 * `n - 1` returns `bounds.max` exactly, and any other estimate is clamped into
 * `[bounds.min, bounds.max]`: since `x_r` lies in that interval, clamping never moves
 * the estimate away from it.
 *
 * Sorts the non-empty bins once per call: O(b log b) for b bins.
 *
 * @param bins the sketch, or any list of `[key, count]` pairs (a key may repeat; its counts add up).
 * @param q the quantile, from 0 (minimum) to 1 (maximum); 0.5 is the median.
 * @param bounds optional exact minimum and maximum of the values counted.
 * @returns the estimate, or null when the sketch counts no value.
 * @throws {RangeError} when `q` is not in [0, 1] (or NaN), when `bounds.min > bounds.max`,
 *   or when a count is negative or not finite.
 * @throws {Error} when a key is not a bin key as written by {@link sketchKey}.
 */
export function sketchQuantile(bins: SketchEntries, q: number, bounds?: SketchBounds): number | null {
  checkQuantile(q);
  if (bounds) checkBounds(bounds);
  const sorted = parseBins(bins).sort(compareBins);
  const total = totalCount(sorted);
  if (total === 0) return null;
  const rank = Math.floor(q * (total - 1));
  const estimate = representative(binAtRank(sorted, rank));
  if (!bounds) return estimate;
  if (rank === 0) return bounds.min;
  if (rank >= total - 1) return bounds.max;
  return Math.min(Math.max(estimate, bounds.min), bounds.max);
}
