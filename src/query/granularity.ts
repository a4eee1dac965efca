import { UTCDate } from '@date-fns/utc';
import { addMonths, addQuarters, addYears, startOfMonth, startOfQuarter, startOfYear } from 'date-fns';
import { Long, type Document } from 'mongodb';
import { ErrorCode, InputError } from '../errors.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, QUARTER_MS, WEEK_MS } from '../model/time.ts';
import { formatWithOffset, offsetAt, offsetSpans, UTC, type OffsetSpan } from './zone.ts';

/** The levels stored in a bucket document, finest first. */
export type Level = 'minute' | 'hour' | 'day';

/**
 * The levels a sketch pipeline reads: the stored levels and the quarter hours, which
 * keep sketches only (`q.hours.H.quarters.Q`, see `quarterSketchPath`).
 */
export type SketchLevel = Level | 'quarter';

/** Width of one slot of each level, in milliseconds. */
export const LEVEL_MS: Record<SketchLevel, number> = { minute: MINUTE_MS, quarter: QUARTER_MS, hour: HOUR_MS, day: DAY_MS };

/** The stored levels ordered from coarsest to finest. */
export const LEVELS_COARSE_FIRST: readonly Level[] = ['day', 'hour', 'minute'];

/** The levels of sketches ordered from coarsest to finest. */
export const SKETCH_LEVELS_COARSE_FIRST: readonly SketchLevel[] = ['day', 'hour', 'quarter', 'minute'];

/**
 * Which clock a granularity follows in a time zone whose offset changes:
 * - `elapsed`: buckets of real elapsed time, aligned to the zone's wall clock
 *   (+05:45 in Asia/Kathmandu puts hour buckets at :15 UTC). When the clocks go back,
 *   the repeated hour is a bucket of its own (New York, 2001-10-28: the hours starting
 *   `01:00-04:00` and `01:00-05:00`); a change by a fraction of the width
 *   (Australia/Lord_Howe moves by 30 minutes) starts a shorter bucket at the change.
 * - `local`: local wall-clock periods (days, months; six-hour periods starting at local
 *   00, 06, 12 and 18): a day with a daylight saving change has 23 or 25 hours. A
 *   bucket is a stretch of time during which the wall clock stays in one period: where
 *   clocks went back across a period boundary (America/St_Johns fell back from 00:01 to
 *   23:01 until 2011), the re-entered period is a bucket of its own.
 */
export type Clock = 'elapsed' | 'local';

/**
 * How a granularity cuts time into buckets:
 * - `fixed`: periods of `widthMs` whose (local) start satisfies
 *   `(start + offsetMs) mod widthMs == 0`, i.e. aligned to 1970-01-01 00:00 on the clock
 *   `clock` (weeks shifted by `offsetMs` so they start on a chosen weekday; 1970-01-01
 *   was a Thursday, so 3 days give Monday as in ISO 8601);
 * - `calendar`: calendar months, quarters or years of the local date, which have no
 *   fixed width (always `local`).
 * In UTC both clocks agree: buckets are aligned to the Unix epoch and the calendar.
 */
export type Cut =
  | { kind: 'fixed'; widthMs: number; offsetMs: number; clock: Clock }
  | { kind: 'calendar'; unit: 'month' | 'quarter' | 'year' };

/** A bucket granularity: how it cuts time and the coarsest stored level it can be computed from. */
export interface Granularity {
  name: GranularityName;
  description: string;
  cut: Cut;
  /**
   * Coarsest stored level whose slots never straddle two of its buckets in UTC. In other
   * zones a slot that holds a bucket boundary is read from finer slots (see
   * `query/segments.ts`).
   */
  level: Level;
}

const elapsed = (widthMs: number): Cut => ({ kind: 'fixed', widthMs, offsetMs: 0, clock: 'elapsed' });
const local = (widthMs: number, offsetMs = 0): Cut => ({ kind: 'fixed', widthMs, offsetMs, clock: 'local' });

/**
 * The granularities, finest first, as data: GraphQL enum values, bucket arithmetic and
 * pipelines read this table. "Local" is the query's time zone (UTC by default); slots
 * that hold a bucket boundary are read from finer slots (see `query/segments.ts`).
 */
export const GRANULARITIES = {
  MINUTE: { description: 'One minute, read from minute slots.', cut: elapsed(MINUTE_MS), level: 'minute' },
  TWO_MINUTES: {
    description: 'Two minutes (:00, :02, … of the local clock), read from minute slots.',
    cut: elapsed(2 * MINUTE_MS),
    level: 'minute',
  },
  FIVE_MINUTES: {
    description: 'Five minutes (:00, :05, … of the local clock), read from minute slots.',
    cut: elapsed(5 * MINUTE_MS),
    level: 'minute',
  },
  TEN_MINUTES: {
    description: 'Ten minutes (:00, :10, … of the local clock), read from minute slots.',
    cut: elapsed(10 * MINUTE_MS),
    level: 'minute',
  },
  FIFTEEN_MINUTES: {
    description:
      'Fifteen minutes (:00, :15, :30, :45 of the local clock), read from minute slots (percentiles from quarter-hour sketches where the metric keeps them).',
    cut: elapsed(15 * MINUTE_MS),
    level: 'minute',
  },
  THIRTY_MINUTES: {
    description:
      'Thirty minutes (:00, :30 of the local clock), read from minute slots (percentiles from quarter-hour sketches where the metric keeps them).',
    cut: elapsed(30 * MINUTE_MS),
    level: 'minute',
  },
  HOUR: {
    description:
      'One hour of the local clock (an hour repeated when clocks go back is a bucket of its own), read from hour slots, or from minute slots where the offset is not whole hours (percentiles there from quarter-hour sketches).',
    cut: elapsed(HOUR_MS),
    level: 'hour',
  },
  TWO_HOURS: {
    description: 'Two local hours from an even hour (00:00, 02:00, …), read from hour slots.',
    cut: local(2 * HOUR_MS),
    level: 'hour',
  },
  THREE_HOURS: {
    description: 'Three local hours from 00:00, 03:00, …, 21:00, read from hour slots.',
    cut: local(3 * HOUR_MS),
    level: 'hour',
  },
  SIX_HOURS: {
    description: 'Six local hours from 00:00, 06:00, 12:00 and 18:00, read from hour slots.',
    cut: local(6 * HOUR_MS),
    level: 'hour',
  },
  TWELVE_HOURS: { description: 'Twelve local hours from 00:00 and 12:00, read from hour slots.', cut: local(12 * HOUR_MS), level: 'hour' },
  DAY: {
    description: 'One local day (23 or 25 hours when clocks change): day totals when it is a UTC day, else hour slots.',
    cut: local(DAY_MS),
    level: 'day',
  },
  WEEK: {
    description: 'One week from local midnight of Monday (ISO 8601) or the chosen first weekday: day totals of the UTC days inside it.',
    cut: local(WEEK_MS, 3 * DAY_MS),
    level: 'day',
  },
  MONTH: {
    description: 'One local calendar month: day totals of the UTC days inside it.',
    cut: { kind: 'calendar', unit: 'month' },
    level: 'day',
  },
  QUARTER: {
    description: 'One local calendar quarter: day totals of the UTC days inside it.',
    cut: { kind: 'calendar', unit: 'quarter' },
    level: 'day',
  },
  YEAR: {
    description: 'One local calendar year: day totals of the UTC days inside it.',
    cut: { kind: 'calendar', unit: 'year' },
    level: 'day',
  },
} as const satisfies Record<string, Omit<Granularity, 'name'>>;

/** Name of a granularity, e.g. `HOUR`; the GraphQL enum `Granularity`. */
export type GranularityName = keyof typeof GRANULARITIES;

/** The names of all granularities, finest first. */
export const GRANULARITY_NAMES = Object.keys(GRANULARITIES) as GranularityName[];

/** A day of the week, the first day of `WEEK` buckets. */
export type Weekday = 'MONDAY' | 'TUESDAY' | 'WEDNESDAY' | 'THURSDAY' | 'FRIDAY' | 'SATURDAY' | 'SUNDAY';

/** The weekdays in ISO 8601 order (Monday first). */
export const WEEKDAYS: readonly Weekday[] = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];

/**
 * Looks up a granularity by name. `weekStart` (default Monday, as in ISO 8601) sets the
 * first day of `WEEK` buckets and is ignored by every other granularity.
 * @throws InputError BAD_USER_INPUT for an unknown name or weekday.
 */
export function granularity(name: GranularityName, options: { weekStart?: Weekday | null } = {}): Granularity {
  if (!Object.hasOwn(GRANULARITIES, name))
    throw new InputError(ErrorCode.BAD_USER_INPUT, `Unknown granularity ${String(name)}`, 'granularity');
  const found = { name, ...GRANULARITIES[name] } as Granularity;
  const weekStart = options.weekStart ?? 'MONDAY';
  if (name !== 'WEEK' || weekStart === 'MONDAY') return found;
  const isoDay = WEEKDAYS.indexOf(weekStart) + 1;
  if (isoDay === 0) throw new InputError(ErrorCode.BAD_USER_INPUT, `Unknown weekday ${String(weekStart)}`, 'weekStart');
  // 1970-01-01 was a Thursday (ISO day 4): a week starting on ISO day d began (4 - d) mod 7 days earlier.
  return { ...found, cut: local(WEEK_MS, ((4 - isoDay + 7) % 7) * DAY_MS) };
}

/** `value mod width` in `[0, width)`, also for negative values (local times before 1970 in zones west of UTC). */
const mod = (value: number, width: number) => ((value % width) + width) % width;

const calendarStart = { month: startOfMonth, quarter: startOfQuarter, year: startOfYear } as const;
const calendarAdd = { month: addMonths, quarter: addQuarters, year: addYears } as const;
const monthsPer = { month: 1, quarter: 3, year: 12 } as const;

/** Start of the period of `cut` holding `time`, on the same clock (both UTC or both local milliseconds). */
function periodStart(time: number, cut: Cut): number {
  if (cut.kind === 'fixed') return time - mod(time + cut.offsetMs, cut.widthMs);
  return calendarStart[cut.unit](new UTCDate(time)).getTime();
}

/** Start of the period after the one starting at `start`, on the same clock. */
function periodAfter(start: number, cut: Cut): number {
  if (cut.kind === 'fixed') return start + cut.widthMs;
  return calendarAdd[cut.unit](new UTCDate(start), 1).getTime();
}

/** A number per period, consecutive periods differing by 1 (for counting without listing). */
function periodIndex(start: number, cut: Cut): number {
  if (cut.kind === 'fixed') return Math.round((start + cut.offsetMs) / cut.widthMs);
  const date = new Date(start);
  return Math.floor((date.getUTCFullYear() * 12 + date.getUTCMonth()) / monthsPer[cut.unit]);
}

/**
 * How far before an instant the bucket holding it can start, beyond the local period
 * start read with the instant's own offset: the widest spread of offsets (UTC-12:00 to
 * UTC+14:00, 26 hours) and a margin.
 */
const REACH_MS = 2 * DAY_MS;

/** One offset span seen through a cut: its offset and the local periods of its first and last instant. */
interface SpanPeriods {
  span: OffsetSpan;
  first: number;
  last: number;
  /** Whether the span's first instant continues the bucket of the instant before it (in the previous span). */
  continues: boolean;
}

/**
 * The local periods of each span, and whether a span's first bucket continues the
 * previous span's last one: on the `local` clock when the local period is the same (the
 * day goes on after clocks change at 02:00), on the `elapsed` clock when the bucket
 * starts at the same instant (the grid of real time did not move).
 */
function spanPeriods(spans: readonly OffsetSpan[], cut: Cut): SpanPeriods[] {
  const clock = cut.kind === 'fixed' ? cut.clock : 'local';
  const result: SpanPeriods[] = [];
  for (const span of spans) {
    const first = periodStart(span.from + span.offsetMs, cut);
    const last = periodStart(span.to - 1 + span.offsetMs, cut);
    const previous = result[result.length - 1];
    const continues =
      previous !== undefined &&
      (clock === 'local' ? previous.last === first : previous.last - previous.span.offsetMs === first - span.offsetMs);
    result.push({ span, first, last, continues });
  }
  return result;
}

/**
 * Calls `visit` with the start of every bucket that begins in the spans (in time order)
 * and the offset in force there; the first span's start counts as a bucket start.
 * Stops when `visit` returns false.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a visitor may return nothing (go on) or false (stop).
function eachBucketStart(spans: readonly OffsetSpan[], cut: Cut, visit: (start: number, offsetMs: number) => boolean | void): void {
  for (const { span, first, last, continues } of spanPeriods(spans, cut)) {
    if (!continues && visit(span.from, span.offsetMs) === false) return;
    for (let period = periodAfter(first, cut); period <= last; period = periodAfter(period, cut)) {
      if (visit(period - span.offsetMs, span.offsetMs) === false) return;
    }
  }
}

/**
 * Start of the bucket holding instant `ms` (ms since epoch, UTC) in `zone` (an IANA name,
 * default UTC): the first instant of the run of time that shares its bucket (see {@link Clock}).
 * A local day that begins inside a daylight-saving gap starts when the gap ends.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function bucketStart(ms: number, cut: Cut, zone: string = UTC): number {
  if (zone === UTC) return periodStart(ms, cut);
  const offsetMs = offsetAt(zone, ms);
  const guess = periodStart(ms + offsetMs, cut) - offsetMs;
  const spans = offsetSpans(zone, guess - REACH_MS, ms + 1);
  if (spans.length === 1) return guess;
  let found = guess;
  eachBucketStart(spans, cut, (start) => {
    if (start > ms) return false;
    found = start;
  });
  return found;
}

/**
 * Start of the bucket after the one starting at `start` (a bucket start in `zone`), i.e.
 * the end of that bucket.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function nextBucketStart(start: number, cut: Cut, zone: string = UTC): number {
  if (zone === UTC) return periodAfter(start, cut);
  const offsetMs = offsetAt(zone, start);
  const guess = periodAfter(periodStart(start + offsetMs, cut), cut) - offsetMs;
  let next = guess;
  let seen = 0;
  eachBucketStart(offsetSpans(zone, start, guess + REACH_MS), cut, (at) => {
    seen += 1;
    if (seen === 2) {
      next = at;
      return false;
    }
  });
  return next;
}

/**
 * Number of buckets of `cut` in `zone` that overlap `[from, to)` (ms since epoch),
 * computed from the zone's offset changes in the range without listing the buckets, so
 * a huge request is refused cheaply. 0 when `to <= from`.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function countBuckets(from: number, to: number, cut: Cut, zone: string = UTC): number {
  if (to <= from) return 0;
  return countInSpans(offsetSpans(zone, from, to), cut);
}

function countInSpans(spans: readonly OffsetSpan[], cut: Cut): number {
  let count = 0;
  for (const { first, last, continues } of spanPeriods(spans, cut)) {
    count += periodIndex(last, cut) - periodIndex(first, cut) + (continues ? 0 : 1);
  }
  return count;
}

/** One bucket of a range: its real span, whether the range cuts it, and its local start. */
export interface BucketSpan {
  /** First instant of the bucket, ms since epoch (UTC). May be before the range's `from`. */
  start: number;
  /** First instant after the bucket (the next bucket's start), ms since epoch. */
  end: number;
  /** True when the range `[from, to)` does not cover the whole bucket (only the first and last can be). */
  partial: boolean;
  /** `start` as local wall-clock time with its offset, RFC 3339: `2001-04-01T00:00:00-05:00`. */
  localStart: string;
}

/**
 * Every bucket of `cut` in `zone` that overlaps `[from, to)`, in time order, each with
 * its real start and end (a local day with a clock change lasts 23 or 25 hours), whether
 * the range cuts it, and its local start as RFC 3339 text. Empty when `to <= from`.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function listBuckets(from: number, to: number, cut: Cut, zone: string = UTC): BucketSpan[] {
  if (to <= from) return [];
  const starts: { start: number; offsetMs: number }[] = [];
  const first = bucketStart(from, cut, zone);
  eachBucketStart(offsetSpans(zone, first, to), cut, (start, offsetMs) => {
    starts.push({ start, offsetMs });
  });
  const after = nextBucketStart(starts[starts.length - 1]!.start, cut, zone);
  return starts.map(({ start, offsetMs }, i) => {
    const end = starts[i + 1]?.start ?? after;
    return { start, end, partial: start < from || end > to, localStart: formatWithOffset(start, offsetMs) };
  });
}

/**
 * The bucket boundaries strictly inside `(from, to)`: the starts of every bucket but the
 * first, ascending. What the segment planner must not read across.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function bucketBoundaries(from: number, to: number, cut: Cut, zone: string = UTC): number[] {
  if (to <= from) return [];
  const boundaries: number[] = [];
  eachBucketStart(offsetSpans(zone, from, to), cut, (start) => {
    if (start > from) boundaries.push(start);
  });
  return boundaries;
}

/**
 * The finest granularity whose bucket count over `[from, to)` in `zone` is at most
 * `maxDataPoints`: Grafana's `maxDataPoints` (the panel's width in pixels), so a chart
 * gets as much detail as it can show. Counts come from {@link countBuckets}, the zone's
 * offset changes looked up once.
 * @throws InputError INVALID_ARGUMENT when `maxDataPoints` is not a positive integer;
 * TOO_MANY_BUCKETS when even `YEAR` gives more buckets; INVALID_TIME_ZONE.
 */
export function pickGranularity(
  from: number,
  to: number,
  maxDataPoints: number,
  zone: string = UTC,
  options: { weekStart?: Weekday | null } = {},
): Granularity {
  if (!Number.isSafeInteger(maxDataPoints) || maxDataPoints < 1) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, `maxDataPoints must be a positive integer, not ${maxDataPoints}`, 'maxDataPoints');
  }
  const spans = offsetSpans(zone, from, to);
  let fewest = Infinity;
  for (const name of GRANULARITY_NAMES) {
    const candidate = granularity(name, options);
    const count = spans.length === 0 ? 0 : countInSpans(spans, candidate.cut);
    if (count <= maxDataPoints) return candidate;
    fewest = Math.min(fewest, count);
  }
  throw new InputError(
    ErrorCode.TOO_MANY_BUCKETS,
    `Even YEAR buckets would give ${fewest} data points over this range, more than maxDataPoints ${maxDataPoints}. Use a shorter range.`,
    'maxDataPoints',
  );
}

/** A MongoDB expression: `$cond` choosing `then` when `test` holds. */
const choose = (test: Document, then: unknown, otherwise: unknown): Document => ({ $cond: [test, then, otherwise] });

/** A constant the server keeps as a 64-bit integer (`$toDate` refuses 32-bit ones). */
const long = (value: number) => Long.fromNumber(value);

/**
 * Expression for the start of the bucket holding `time` within one offset span, as ms
 * since epoch (a long). `time` is a field path or variable yielding ms since epoch.
 */
function spanStartExpression(time: string, periods: SpanPeriods, firstBucketStart: number, cut: Cut): Document {
  const offsetMs = periods.span.offsetMs;
  let start: Document;
  if (cut.kind === 'fixed') {
    // time - ((time + offset + cut offset) mod width); the constant is reduced mod width so the dividend is >= 0.
    const shift = mod(offsetMs + cut.offsetMs, cut.widthMs);
    start = { $subtract: [time, { $mod: [shift === 0 ? time : { $add: [time, shift] }, cut.widthMs] }] };
  } else {
    // The local date as a UTC date, truncated to its period by $dateTrunc, back to UTC.
    const localDate = offsetMs === 0 ? { $toDate: time } : { $toDate: { $add: [time, offsetMs] } };
    const localStart = { $toLong: { $dateTrunc: { date: localDate, unit: cut.unit } } };
    start = offsetMs === 0 ? localStart : { $subtract: [localStart, offsetMs] };
  }
  // The span's first bucket may have started before the span (the day goes on across a
  // clock change) or at the change itself (an elapsed grid that moved).
  const nominal = periods.first - offsetMs;
  if (firstBucketStart === nominal) return start;
  return { $let: { vars: { s: start }, in: choose({ $lte: ['$$s', nominal] }, long(firstBucketStart), '$$s') } };
}

/**
 * MongoDB aggregation expression for the start of the bucket holding `time`, an
 * expression yielding ms since epoch (a long, e.g. `'$slot.time'` or
 * `{$toLong: '$date'}`), as a date. Valid for times in `[from, to)` (ms since epoch).
 * Offsets are not looked up on the server: the zone's offset changes in the range come
 * from `Intl` (see `query/zone.ts`) and become constants, one branch per span of
 * constant offset, chosen by a balanced `$cond` tree. Within a span the arithmetic is in
 * milliseconds, never on a date (`$add`/`$subtract` of a number to a date is missing on
 * some wire-compatible servers): fixed widths as `t - ((t + c) mod width)`, calendar
 * periods by `$dateTrunc` of the local date (`$toDate` of `t + offset`) minus the
 * offset; `$toDate` turns the result into a date. `$dateTrunc` is used without its
 * `timezone` option, so the server's own time zone rules play no part. Operators of
 * MongoDB 5.0. In UTC this is one branch.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function bucketStartExpression(time: unknown, cut: Cut, zone: string, from: number, to: number): Document {
  const millis = bucketStartMillis(time, cut, zone, from, to);
  return '$dateTrunc' in millis ? millis : { $toDate: millis };
}

/**
 * {@link bucketStartExpression} in ms since epoch (a long) rather than a date, for
 * pipelines that turn starts into dates only once, after grouping. In UTC, calendar
 * periods come as a date (`$dateTrunc`), which groups the same way.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function bucketStartMillis(time: unknown, cut: Cut, zone: string, from: number, to: number): Document {
  const firstStart = bucketStart(from, cut, zone);
  const spans = offsetSpans(zone, from, Math.max(to, from + 1));
  const periods = spanPeriods(spans, cut);
  // The start of the bucket holding each span's first instant.
  const firsts: number[] = [];
  periods.forEach((entry, i) => {
    if (i === 0) firsts.push(firstStart);
    else firsts.push(entry.continues ? lastBucketStart(periods[i - 1]!, firsts[i - 1]!, cut) : entry.span.from);
  });
  const path = typeof time === 'string' ? time : '$$t';
  if (periods.length === 1 && periods[0]!.span.offsetMs === 0 && firsts[0] === periods[0]!.first && cut.kind === 'calendar') {
    // UTC calendar periods: $dateTrunc of the date itself.
    return { $dateTrunc: { date: { $toDate: time }, unit: cut.unit } };
  }
  const tree = (lo: number, hi: number): Document => {
    if (hi - lo === 1) return spanStartExpression(path, periods[lo]!, firsts[lo]!, cut);
    const mid = (lo + hi) >> 1;
    return choose({ $lt: [path, periods[mid]!.span.from] }, tree(lo, mid), tree(mid, hi));
  };
  const body = tree(0, periods.length);
  return typeof time === 'string' ? body : { $let: { vars: { t: time }, in: body } };
}

/** Start of the bucket holding the last instant of a span, given the start of the bucket holding its first. */
function lastBucketStart(periods: SpanPeriods, firstStart: number, _cut: Cut): number {
  return periods.last === periods.first ? firstStart : periods.last - periods.span.offsetMs;
}
