/**
 * Counters: metrics whose fields count something that only grows (requests served,
 * bytes sent) until the process keeping the count restarts and starts again from 0.
 * Their useful statistic is the increase between readings with resets taken into
 * account, as Prometheus' `increase()`/`rate()`, InfluxDB's `non_negative_derivative`
 * and TimescaleDB's `counter_agg` do (see docs/statistics.md, "Counters").
 */
import { ErrorCode, InputError } from '../errors.ts';
import { compareTimed, isEarlier, type TimedValue } from './stats.ts';

/**
 * What a metric's fields measure (its registry entry's `kind`, `setMetricKind`):
 * - `gauge`: a value at a time (a temperature, a delay); the default.
 * - `counter`: a running count that only grows except when it is reset to 0; the fold
 *   keeps what the reset-aware increase needs (see {@link CounterPiece}) and queries
 *   answer `increase` and `rate`.
 */
export type MetricKind = 'gauge' | 'counter';

/**
 * The reset-aware increase from a reading of value `previous` to the next one of value
 * `next`: `next - previous` when the counter did not fall; when it fell, a reset, the
 * new value itself (the counter restarted from 0 and has counted `next` since), as
 * Prometheus' `increase()` treats a drop ("Breaks in monotonicity (such as counter
 * resets due to target restarts) are automatically adjusted for", Prometheus query
 * functions). A counter is expected to be >= 0; a negative value after a drop counts as
 * it is.
 */
export function counterDelta(previous: number, next: number): number {
  return next >= previous ? next - previous : next;
}

/**
 * The reset-aware increase over readings in the order of {@link TimedValue} (time, then
 * value): the sum of {@link counterDelta} between consecutive readings; 0 for one
 * reading or none.
 */
export function readingsIncrease(readings: readonly TimedValue[]): number {
  let increase = 0;
  for (let i = 1; i < readings.length; i++) increase += counterDelta(readings[i - 1]!.v, readings[i]!.v);
  return increase;
}

/**
 * What a slot of a counter field keeps for the increase, for one set of readings (one
 * part of a series-day, or one slot of a merged document): its first and last reading,
 * its count, and `inc`, the sum of {@link counterDelta} between its consecutive readings
 * (null when unknown: readings stored before the metric was a counter, or merged from
 * pieces that interleave in time, see {@link chainIncrease}).
 */
export interface CounterPiece {
  first: TimedValue;
  last: TimedValue;
  n: number;
  inc: number | null;
}

/**
 * The `inc` of a piece as far as it is known: its stored value, or 0 for a piece of one
 * reading (nothing between readings to add), or null.
 */
export const knownIncrease = (piece: Pick<CounterPiece, 'n' | 'inc'>): number | null => piece.inc ?? (piece.n === 1 ? 0 : null);

/**
 * The increase of the readings of several pieces taken together (pure): the pieces
 * ordered by their first reading, the sum of their `inc` plus the {@link counterDelta}
 * from each piece's last reading to the next piece's first. Exact when the pieces do
 * not interleave in time: each piece's first reading comes at or after the last reading
 * of every piece before it (in the order of {@link TimedValue}), as for the parts of a
 * slot written by folds of readings that arrived in time order, or for slots of
 * different times. When they interleave, the readings' order between the pieces is
 * unknown (the readings themselves are not kept), and so is the increase: null. Null
 * too when a piece's own `inc` is unknown ({@link knownIncrease}).
 * @returns the increase, 0 for no pieces, or null when unknown.
 */
export function chainIncrease(pieces: readonly CounterPiece[]): number | null {
  const ordered = [...pieces].sort((a, b) => compareTimed(a.first, b.first));
  let increase = 0;
  let last: TimedValue | null = null;
  for (const piece of ordered) {
    const own = knownIncrease(piece);
    if (own === null) return null;
    if (last !== null) {
      if (isEarlier(piece.first, last)) return null;
      increase += counterDelta(last.v, piece.first.v);
    }
    increase += own;
    last = piece.last;
  }
  return increase;
}

/**
 * The refusal of `increase` or `rate` of a metric that is not a counter: NOT_A_COUNTER,
 * with `extensions.metric`. A gauge's readings have no increase worth the name, and a
 * metric declared a counter only later has no `inc` in the slots folded before.
 */
export function notACounter(metric: string): InputError {
  const error = new InputError(
    ErrorCode.NOT_A_COUNTER,
    `Metric "${metric}" is not a counter: increase and rate need setMetricKind(metric: "${metric}", kind: COUNTER) before its readings are folded`,
  );
  error.extensions.metric = metric;
  return error;
}
