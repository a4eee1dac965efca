/**
 * Comparison with an earlier period ("this week against the same week a year ago"):
 * the engine runs the same query over the range shifted back by an offset
 * ({@link shiftedRange}) and aligns the two bucket lists bucket by bucket
 * ({@link compareWithPrevious}). Like Prometheus' `offset` modifier and InfluxDB's
 * `timeShift()`, but calendar-aware: one month back from March is February, whatever
 * their lengths.
 */
import { TZDate } from '@date-fns/tz';
import { UTCDate } from '@date-fns/utc';
import { addDays, addMonths, addQuarters, addWeeks, addYears } from 'date-fns';
import { ErrorCode, InputError } from '../errors.ts';
import { Limits } from '../model/limits.ts';
import { HOUR_MS, MINUTE_MS } from '../model/time.ts';
import type { BucketSpan } from './fill.ts';
import type { TransformedBucket } from './transforms.ts';

/** Unit of an {@link Offset}. */
export type OffsetUnit = 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'QUARTER' | 'YEAR';

/** Every {@link OffsetUnit}, finest first. */
export const OFFSET_UNITS: readonly OffsetUnit[] = ['MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'];

/** Smallest and largest number of units of an offset. */
export const OFFSET_AMOUNT = { min: 1, max: 1000 } as const;

/**
 * How far back the earlier period lies: `amount` whole `unit`s, e.g. `{amount: 1, unit:
 * 'WEEK'}`. `MINUTE` and `HOUR` are exact durations; `DAY` and `WEEK` are calendar days
 * (24 h in UTC; 23 or 25 h across a daylight-saving change in a time zone); `MONTH`,
 * `QUARTER` and `YEAR` are calendar units, clamped to the end of a shorter month (March
 * 31 one month back is February 28 or 29), as date-fns' `addMonths` does.
 */
export interface Offset {
  amount: number;
  unit: OffsetUnit;
}

/**
 * Checks an offset.
 * @param inputPath where the offset came from in the request, for the error.
 * @throws InputError INVALID_ARGUMENT when `amount` is not an integer in
 * {@link OFFSET_AMOUNT} or `unit` is not an {@link OffsetUnit}.
 */
export function validateOffset(offset: Offset, inputPath = 'offset'): Offset {
  if (!Number.isInteger(offset.amount) || offset.amount < OFFSET_AMOUNT.min || offset.amount > OFFSET_AMOUNT.max) {
    throw new InputError(
      ErrorCode.INVALID_ARGUMENT,
      `An offset must be a whole number of units from ${OFFSET_AMOUNT.min} to ${OFFSET_AMOUNT.max}; got ${String(offset.amount)}`,
      `${inputPath}.amount`,
    );
  }
  if (!OFFSET_UNITS.includes(offset.unit)) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, `Unknown offset unit ${String(offset.unit)}`, `${inputPath}.unit`);
  }
  return offset;
}

const calendarAdd = { DAY: addDays, WEEK: addWeeks, MONTH: addMonths, QUARTER: addQuarters, YEAR: addYears } as const;

/**
 * The instant `offset` before `ms` (ms since the epoch). Calendar units are counted in
 * `timeZone` (an IANA name, UTC when omitted): one day before 12:00 local time is 12:00
 * local time the day before, even across a daylight-saving change.
 * @throws Error when `timeZone` is not a known time zone (validate it first).
 */
export function shiftBack(ms: number, offset: Offset, timeZone?: string): number {
  if (offset.unit === 'MINUTE') return ms - offset.amount * MINUTE_MS;
  if (offset.unit === 'HOUR') return ms - offset.amount * HOUR_MS;
  const date = timeZone === undefined || timeZone === 'UTC' ? new UTCDate(ms) : new TZDate(ms, timeZone);
  const shifted = calendarAdd[offset.unit](date, -offset.amount).getTime();
  if (Number.isNaN(shifted)) throw new Error(`shiftBack: unknown time zone ${String(timeZone)}`);
  return shifted;
}

/**
 * The range of the earlier period: `[from, to)` with both ends shifted back by
 * `offset` (see {@link shiftBack}). Its bucket list may be shorter or longer than the
 * current one (February against March by day); {@link compareWithPrevious} aligns them.
 * @throws InputError INVALID_ARGUMENT when the shifted range would start before
 * 1970-01-01 (`Limits.minTimeMs`), where no reading can be.
 */
export function shiftedRange(range: { from: number; to: number }, offset: Offset, timeZone?: string): { from: number; to: number } {
  const from = shiftBack(range.from, offset, timeZone);
  if (from < Limits.minTimeMs) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, 'The offset reaches back before 1970-01-01, where there is no data', 'offset');
  }
  return { from, to: shiftBack(range.to, offset, timeZone) };
}

/**
 * The bucket list of one period: every bucket span of its range (as for `fillBuckets`)
 * and its listed buckets, each with its `value` (see `transformBuckets`).
 */
export interface PeriodBuckets<B extends { start: Date; value: number | null }> {
  spans: readonly BucketSpan[];
  buckets: readonly B[];
}

/** What a bucket gains from the comparison with the earlier period. */
export interface Comparison {
  /** The value of the aligned bucket of the earlier period; null when it is null, not listed, or the earlier period has fewer buckets. */
  previous: number | null;
  /** Start of the aligned bucket of the earlier period; null when the earlier period has fewer buckets. */
  previousStart: Date | null;
  /** `value - previous`; null when either is null. */
  change: number | null;
  /**
   * `(value - previous) / |previous|`, as a fraction (0.25 is 25% more); null when
   * either is null or `previous` is 0. Dividing by the magnitude keeps the sign of the
   * change when `previous` is negative (-10 to -5 is +0.5).
   */
  relativeChange: number | null;
}

/** A bucket of the current period with its comparison with the earlier one. */
export interface ComparedBucket extends TransformedBucket, Comparison {}

/**
 * Aligns the bucket list of the earlier period (the same query over
 * {@link shiftedRange}) with the current one and compares their values.
 *
 * Buckets are aligned by position in their range: the i-th bucket of the current
 * range with the i-th bucket of the earlier one, as each range's `spans` list them.
 * So a MONTH list shifted by one month compares each month with the month before,
 * a DAY list shifted by a year compares the i-th day of the range with the i-th day of
 * the range a year earlier, and a DAY list of March against February has no earlier
 * bucket for its last days (`previous` null). The values are those `transformBuckets`
 * gave (a plain statistic through the `none` transform, or a transformed one; both
 * periods transformed the same way); the buckets may be filled in any mode, `NONE`
 * included (an unlisted bucket has no value).
 *
 * @returns the current period's listed buckets, same order, each with its
 * {@link Comparison}: new objects holding exactly the fields of a {@link ComparedBucket}.
 * @throws Error when a listed bucket's start is not among its period's spans.
 */
export function compareWithPrevious(
  current: PeriodBuckets<TransformedBucket>,
  previous: PeriodBuckets<{ start: Date; value: number | null }>,
): ComparedBucket[] {
  const position = new Map(current.spans.map((span, i) => [span.start.getTime(), i]));
  const earlier = new Map<number, number | null>();
  const earlierStarts = new Set(previous.spans.map((span) => span.start.getTime()));
  for (const bucket of previous.buckets) {
    const start = bucket.start.getTime();
    if (!earlierStarts.has(start))
      throw new Error(`compareWithPrevious: ${bucket.start.toISOString()} is not a bucket of the earlier period`);
    earlier.set(start, bucket.value);
  }
  return current.buckets.map((b) => {
    const i = position.get(b.start.getTime());
    if (i === undefined) throw new Error(`compareWithPrevious: ${b.start.toISOString()} is not a bucket of the current period`);
    const span = previous.spans[i];
    const before = span === undefined ? null : (earlier.get(span.start.getTime()) ?? null);
    const change = b.value === null || before === null ? null : finiteOrNull(b.value - before);
    return {
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
      value: b.value,
      previous: before,
      previousStart: span?.start ?? null,
      change,
      relativeChange: change === null || before === 0 ? null : finiteOrNull(change / Math.abs(before!)),
    };
  });
}

/** `value`, or null when arithmetic overflowed. */
const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);
