import { UTCDate } from '@date-fns/utc';
import { addMonths, addQuarters, addYears, startOfMonth, startOfQuarter, startOfYear } from 'date-fns';
import type { Document } from 'mongodb';
import { DAY_MS, HOUR_MS, MINUTE_MS, WEEK_MS } from '../model/time.ts';

/** The levels stored in a bucket document, finest first. */
export type Level = 'minute' | 'hour' | 'day';

/** Width of one slot of each stored level, in milliseconds. */
export const LEVEL_MS: Record<Level, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };

/** The stored levels ordered from coarsest to finest. */
export const LEVELS_COARSE_FIRST: readonly Level[] = ['day', 'hour', 'minute'];

/**
 * How a granularity cuts time into buckets (all in UTC):
 * - `fixed`: buckets of `widthMs` starting at `(t + offsetMs) mod widthMs == 0`, i.e.
 *   aligned to the Unix epoch (weeks shifted by 3 days so they start on Monday, as in
 *   ISO-8601; 1970-01-01 was a Thursday);
 * - `calendar`: calendar months, quarters or years, which have no fixed width.
 */
export type Cut =
  | { kind: 'fixed'; widthMs: number; offsetMs: number }
  | { kind: 'calendar'; unit: 'month' | 'quarter' | 'year' };

/** A bucket granularity: how it cuts time and the coarsest stored level it can be computed from. */
export interface Granularity {
  name: GranularityName;
  description: string;
  cut: Cut;
  /** Coarsest stored level whose slots never straddle two of its buckets. */
  level: Level;
}

const fixed = (widthMs: number, offsetMs = 0): Cut => ({ kind: 'fixed', widthMs, offsetMs });

/** The granularities, as data: GraphQL enum values, bucket arithmetic and pipelines read this table. */
export const GRANULARITIES = {
  MINUTE: { description: 'One minute, read from minute slots.', cut: fixed(MINUTE_MS), level: 'minute' },
  FIVE_MINUTES: { description: 'Five minutes (:00, :05, …), read from minute slots.', cut: fixed(5 * MINUTE_MS), level: 'minute' },
  FIFTEEN_MINUTES: { description: 'Fifteen minutes (:00, :15, :30, :45), read from minute slots.', cut: fixed(15 * MINUTE_MS), level: 'minute' },
  HOUR: { description: 'One hour, read from hour slots.', cut: fixed(HOUR_MS), level: 'hour' },
  SIX_HOURS: { description: 'Six hours starting at 00:00, 06:00, 12:00 and 18:00 UTC, read from hour slots.', cut: fixed(6 * HOUR_MS), level: 'hour' },
  DAY: { description: 'One UTC day, read from day totals.', cut: fixed(DAY_MS), level: 'day' },
  WEEK: { description: 'One ISO week, Monday 00:00 UTC to the next Monday, read from day totals.', cut: fixed(WEEK_MS, 3 * DAY_MS), level: 'day' },
  MONTH: { description: 'One calendar month (UTC), computed from day totals.', cut: { kind: 'calendar', unit: 'month' }, level: 'day' },
  QUARTER: { description: 'One calendar quarter (UTC), computed from day totals.', cut: { kind: 'calendar', unit: 'quarter' }, level: 'day' },
  YEAR: { description: 'One calendar year (UTC), computed from day totals.', cut: { kind: 'calendar', unit: 'year' }, level: 'day' },
} as const satisfies Record<string, Omit<Granularity, 'name'>>;

/** Name of a granularity, e.g. `HOUR`; the GraphQL enum `Granularity`. */
export type GranularityName = keyof typeof GRANULARITIES;

/** The names of all granularities, finest first. */
export const GRANULARITY_NAMES = Object.keys(GRANULARITIES) as GranularityName[];

/** Looks up a granularity by name. */
export function granularity(name: GranularityName): Granularity {
  return { name, ...GRANULARITIES[name] } as Granularity;
}

const calendarStart = { month: startOfMonth, quarter: startOfQuarter, year: startOfYear } as const;
const calendarAdd = { month: addMonths, quarter: addQuarters, year: addYears } as const;

/** Start of the bucket holding `ms` (ms since epoch, UTC, >= 0). */
export function bucketStart(ms: number, cut: Cut): number {
  if (cut.kind === 'fixed') return ms - ((ms + cut.offsetMs) % cut.widthMs);
  return calendarStart[cut.unit](new UTCDate(ms)).getTime();
}

/** Start of the bucket after the one starting at `start`. */
export function nextBucketStart(start: number, cut: Cut): number {
  if (cut.kind === 'fixed') return start + cut.widthMs;
  return calendarAdd[cut.unit](new UTCDate(start), 1).getTime();
}

/**
 * Number of buckets of `cut` that overlap `[from, to)`, computed without listing them
 * (so a huge request is refused cheaply).
 */
export function countBuckets(from: number, to: number, cut: Cut): number {
  if (to <= from) return 0;
  const first = bucketStart(from, cut);
  if (cut.kind === 'fixed') return Math.ceil((to - first) / cut.widthMs);
  const a = new Date(first);
  const b = new Date(to - 1);
  const months = (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + (b.getUTCMonth() - a.getUTCMonth());
  const perBucket = { month: 1, quarter: 3, year: 12 }[cut.unit];
  return Math.floor(months / perBucket) + 1;
}

/**
 * MongoDB aggregation expression for the start of the bucket holding the date at
 * `timePath` (e.g. `'$time'`). Fixed widths use `$toLong` and `$mod` arithmetic,
 * calendar units `$dateFromParts` (both in the MongoDB manual since 4.0, UTC).
 */
export function bucketStartExpression(timePath: string, cut: Cut): Document {
  if (cut.kind === 'fixed') {
    const sinceEpoch = { $toLong: timePath };
    const shifted = cut.offsetMs === 0 ? sinceEpoch : { $add: [sinceEpoch, cut.offsetMs] };
    return { $subtract: [timePath, { $mod: [shifted, cut.widthMs] }] };
  }
  const year = { $year: timePath };
  if (cut.unit === 'year') return { $dateFromParts: { year } };
  const month = { $month: timePath };
  if (cut.unit === 'month') return { $dateFromParts: { year, month } };
  // Quarter: month - ((month - 1) mod 3) gives 1, 4, 7 or 10.
  return { $dateFromParts: { year, month: { $subtract: [month, { $mod: [{ $subtract: [month, 1] }, 3] }] } } };
}
