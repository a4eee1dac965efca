/**
 * The range-vector functions of PromQL computed from buckets instead of samples (pure).
 *
 * A series reaches the evaluator as its buckets ({@link Cell}s: one span of the stored
 * levels, a minute for example, with the count, sum, min and max of its readings, its
 * first and last reading with their exact times, and the reset-aware increase between
 * them). Prometheus evaluates a function at time `t` over the samples in the window
 * `(t - range, t]`. {@link windowCells} picks the buckets of that window: every bucket
 * whose readings all lie inside it; a bucket that holds the window's start and readings
 * on both sides of it is taken whole (the window is answered by whole buckets covering
 * it), one that holds readings after `t` is left out (nothing later than `t` is read).
 * When the window's edges fall on bucket boundaries no bucket is cut, and the answer is
 * Prometheus' own from the same samples: the count, sum, min, max and last of a window
 * are those of its buckets; its first and last samples are the first reading of its
 * first bucket and the last of its last; the reset-aware increase between them is the
 * buckets' increases plus the reset-aware differences from each bucket's last reading
 * to the next one's first. That is all `rate` and `increase` need, extrapolation
 * included (`extrapolatedRate`, after Prometheus' `promql/functions.go`).
 */
import { percentile } from '../model/stats.ts';
import type { SketchBins } from '../model/sketch.ts';
import type { RangeFunction } from './functions.ts';

/** A reading's time (ms since the epoch, UTC) and value. */
export interface Sample {
  t: number;
  v: number;
}

/**
 * One bucket of one series, as the evaluator reads it: the readings of the span
 * `[start, start + width)`; `n > 0` always (buckets without readings are not listed).
 */
export interface Cell {
  start: number;
  n: number;
  sum: number;
  min: number;
  max: number;
  first: Sample;
  last: Sample;
  /**
   * The reset-aware increase from `first` to `last` (a drop counts the value after it;
   * see `model/counter.ts`); null when unknown (see {@link insideIncrease}).
   */
  inside: number | null;
  /** The quantile sketch of the bucket's readings, or null when not read or not complete. */
  sketch: SketchBins | null;
}

/** The reset-aware difference from one reading to the next: the difference, or the later value after a drop. */
const counterDelta = (previous: number, next: number) => (next >= previous ? next - previous : next);

/**
 * The increase between a cell's first and last reading as far as it is known: the
 * stored one; 0 for one reading; the reset-aware difference for two; otherwise
 * (a metric not declared a counter, so none was stored) the reset-aware difference of
 * the first and last reading, which misses a reset between them. `exact` says which.
 */
export function insideIncrease(cell: Cell): { value: number; exact: boolean } {
  if (cell.inside !== null) return { value: cell.inside, exact: true };
  if (cell.n === 1) return { value: 0, exact: true };
  return { value: counterDelta(cell.first.v, cell.last.v), exact: cell.n === 2 };
}

/** The cells of one window and whether a bucket was cut by its start (the answer is then from whole buckets covering it). */
export interface Window {
  from: number;
  to: number;
  cut: boolean;
}

/**
 * The index range `[from, to)` of `cells` (in time order, not overlapping) that answers
 * the window `(t - rangeMs, t]`, see the module comment; `cut` when a bucket straddles
 * the window's start or end.
 */
export function windowCells(cells: readonly Cell[], t: number, rangeMs: number): Window {
  const start = t - rangeMs;
  // First cell with a reading after the window's start.
  let low = 0;
  let high = cells.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (cells[mid]!.last.t > start) high = mid;
    else low = mid + 1;
  }
  const from = low;
  // First cell whose first reading is after t.
  high = cells.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (cells[mid]!.first.t > t) high = mid;
    else low = mid + 1;
  }
  let to = low;
  let cut = false;
  if (to > from && cells[to - 1]!.last.t > t) {
    to -= 1;
    cut = true;
  }
  if (to > from && cells[from]!.first.t <= start) cut = true;
  return { from, to, cut };
}

/** What a window of cells gives a function: its samples' count, first and last samples, and the reset-aware increase between them. */
interface Span {
  n: number;
  first: Sample;
  last: Sample;
  increase: number;
}

function spanOf(cells: readonly Cell[], window: Window): Span {
  let n = 0;
  let increase = 0;
  for (let i = window.from; i < window.to; i++) {
    const cell = cells[i]!;
    n += cell.n;
    increase += insideIncrease(cell).value;
    if (i > window.from) increase += counterDelta(cells[i - 1]!.last.v, cell.first.v);
  }
  return { n, first: cells[window.from]!.first, last: cells[window.to - 1]!.last, increase };
}

/**
 * Prometheus' `extrapolatedRate` (rate, increase, delta) over a window's span: the
 * difference (counters: reset-aware increase) between its first and last sample,
 * extrapolated towards the window's edges when the samples come close enough to them
 * (within 1.1 average sample intervals; else by half an interval), and for counters not
 * below zero; divided by the range in seconds for `rate`. Undefined with fewer than two
 * samples. A window answered from buckets covering it (its start bucket cut) never
 * extrapolates past its first sample.
 */
function extrapolatedRate(span: Span, t: number, rangeMs: number, isCounter: boolean, isRate: boolean): number | undefined {
  if (span.n < 2) return undefined;
  const rangeStart = t - rangeMs;
  let result = isCounter ? span.increase : span.last.v - span.first.v;
  let durationToStart = Math.max(0, (span.first.t - rangeStart) / 1000);
  let durationToEnd = (t - span.last.t) / 1000;
  const sampledInterval = (span.last.t - span.first.t) / 1000;
  const averageDurationBetweenSamples = sampledInterval / (span.n - 1);
  const extrapolationThreshold = averageDurationBetweenSamples * 1.1;
  if (durationToStart >= extrapolationThreshold) durationToStart = averageDurationBetweenSamples / 2;
  if (isCounter) {
    let durationToZero = durationToStart;
    if (result > 0 && span.first.v >= 0) durationToZero = sampledInterval * (span.first.v / result);
    if (durationToZero < durationToStart) durationToStart = durationToZero;
  }
  if (durationToEnd >= extrapolationThreshold) durationToEnd = averageDurationBetweenSamples / 2;
  let factor = sampledInterval === 0 ? 1 : (sampledInterval + durationToStart + durationToEnd) / sampledInterval;
  if (isRate) factor /= rangeMs / 1000;
  result *= factor;
  return result;
}

/** Prometheus' `irate`: the per-second change between the last two samples of the window (a drop counts the later value). */
function irate(cells: readonly Cell[], window: Window): number | undefined {
  const lastCell = cells[window.to - 1]!;
  let previous: Sample;
  let change: number;
  if (lastCell.n >= 2) {
    // The last two readings are the bucket's first and last when it holds two; with more,
    // the bucket's average rate between them stands in for the last two's.
    previous = lastCell.first;
    change = insideIncrease(lastCell).value;
  } else {
    if (window.to - 1 <= window.from) return undefined;
    previous = cells[window.to - 2]!.last;
    change = counterDelta(previous.v, lastCell.last.v);
  }
  const seconds = (lastCell.last.t - previous.t) / 1000;
  if (seconds === 0) return undefined;
  return change / seconds;
}

/**
 * Prometheus' `resets`: the number of drops between consecutive samples of the window.
 * Between buckets it is read from their last and first readings; inside a bucket of two
 * readings from those; inside a bucket of more, a drop shows as an increase above the
 * difference of its first and last reading, and counts one.
 */
function resets(cells: readonly Cell[], window: Window): number {
  let count = 0;
  for (let i = window.from; i < window.to; i++) {
    const cell = cells[i]!;
    if (i > window.from && cells[i - 1]!.last.v > cell.first.v) count += 1;
    if (cell.n === 2) count += cell.first.v > cell.last.v ? 1 : 0;
    else if (cell.n > 2) {
      const inside = insideIncrease(cell);
      count += inside.exact ? (inside.value > cell.last.v - cell.first.v ? 1 : 0) : cell.first.v > cell.last.v ? 1 : 0;
    }
  }
  return count;
}

/**
 * The value at 0-based rank `rank` of `count` values from a merged sketch (within 1%,
 * see `percentile` in `model/stats.ts`, clamped to the exact `min` and `max`).
 */
export function valueAtRank(summary: { sketch: SketchBins; min: number; max: number }, count: number, rank: number): number | null {
  if (count <= 1 || rank <= 0) return summary.min;
  if (rank >= count - 1) return summary.max;
  return percentile(summary, Math.min(100, (100 * (rank + 0.5)) / (count - 1)));
}

/**
 * Prometheus' `quantile_over_time` from the merged sketches of a window: the value at
 * rank `q * (n - 1)`, interpolated between the two readings around it, each within 1%.
 * Undefined when a bucket of the window has no complete sketch.
 */
function quantileOverTime(cells: readonly Cell[], window: Window, q: number): number | undefined {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const merged: SketchBins = new Map();
  let n = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = window.from; i < window.to; i++) {
    const cell = cells[i]!;
    if (cell.sketch === null) return undefined;
    for (const [key, count] of cell.sketch) merged.set(key, (merged.get(key) ?? 0) + count);
    n += cell.n;
    min = Math.min(min, cell.min);
    max = Math.max(max, cell.max);
  }
  const summary = { sketch: merged, min, max };
  const rank = q * (n - 1);
  const lowerRank = Math.max(0, Math.floor(rank));
  const upperRank = Math.min(n - 1, lowerRank + 1);
  const weight = rank - Math.floor(rank);
  const lower = valueAtRank(summary, n, lowerRank);
  const upper = valueAtRank(summary, n, upperRank);
  if (lower === null || upper === null) return undefined;
  return lower * (1 - weight) + upper * weight;
}

/**
 * The value of range function `func` at time `t` (ms) over the window `(t - rangeMs, t]`
 * of one series' cells; undefined where Prometheus gives no sample (an empty window,
 * too few samples for a rate). `q` is `quantile_over_time`'s quantile.
 */
export function rangeFunction(func: RangeFunction, cells: readonly Cell[], t: number, rangeMs: number, q = 0): number | undefined {
  const window = windowCells(cells, t, rangeMs);
  if (window.to <= window.from) return undefined;
  switch (func) {
    case 'rate':
      return extrapolatedRate(spanOf(cells, window), t, rangeMs, true, true);
    case 'increase':
      return extrapolatedRate(spanOf(cells, window), t, rangeMs, true, false);
    case 'delta':
      return extrapolatedRate(spanOf(cells, window), t, rangeMs, false, false);
    case 'irate':
      return irate(cells, window);
    case 'resets':
      return resets(cells, window);
    case 'last_over_time':
      return cells[window.to - 1]!.last.v;
    case 'quantile_over_time':
      return quantileOverTime(cells, window, q);
    default: {
      let n = 0;
      let sum = 0;
      let min = Infinity;
      let max = -Infinity;
      for (let i = window.from; i < window.to; i++) {
        const cell = cells[i]!;
        n += cell.n;
        sum += cell.sum;
        if (cell.min < min) min = cell.min;
        if (cell.max > max) max = cell.max;
      }
      if (func === 'count_over_time') return n;
      if (func === 'sum_over_time') return sum;
      if (func === 'avg_over_time') return sum / n;
      if (func === 'min_over_time') return min;
      return max;
    }
  }
}

/** The value of an instant selector at `t`: the last reading in `(t - lookbackMs, t]`, or undefined. */
export function instantValue(cells: readonly Cell[], t: number, lookbackMs: number): number | undefined {
  const window = windowCells(cells, t, lookbackMs);
  return window.to > window.from ? cells[window.to - 1]!.last.v : undefined;
}
