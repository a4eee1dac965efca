/**
 * Independent reference for buckets in a time zone: plain loops over the local calendar
 * fields `Intl.DateTimeFormat` gives for each minute, sharing no code with the server
 * (no offset arithmetic, no spans, no period tables). Slow on purpose: it looks at every
 * minute it needs.
 */

/** Granularity names the reference knows (those of the server, spelled out again here). */
export type ZonedGranularity =
  | 'MINUTE'
  | 'TWO_MINUTES'
  | 'FIVE_MINUTES'
  | 'TEN_MINUTES'
  | 'FIFTEEN_MINUTES'
  | 'THIRTY_MINUTES'
  | 'HOUR'
  | 'TWO_HOURS'
  | 'THREE_HOURS'
  | 'SIX_HOURS'
  | 'TWELVE_HOURS'
  | 'DAY'
  | 'WEEK'
  | 'MONTH'
  | 'QUARTER'
  | 'YEAR';

/** Local calendar fields of an instant and its offset text (`+05:45`, `-04:00`, `+00:00`). */
export interface LocalFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday … 6 = Saturday, of the local date. */
  weekday: number;
  offset: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();
const WEEKDAY_NUMBER: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** The local calendar fields of instant `ms` in `zone`, from `Intl.DateTimeFormat#formatToParts`. */
export function localFields(ms: number, zone: string): LocalFields {
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
      timeZoneName: 'longOffset',
    });
    formats.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(ms)) parts[part.type] = part.value;
  const gmt = parts.timeZoneName!; // "GMT+05:45" or "GMT"
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAY_NUMBER[parts.weekday!]!,
    offset: gmt === 'GMT' ? '+00:00' : gmt.slice(3),
  };
}

const two = (n: number) => String(n).padStart(2, '0');
const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The date `days` days after a local calendar date, as `YYYY-MM-DD` (calendar arithmetic only). */
function shiftDate(year: number, month: number, day: number, days: number): string {
  const date = new Date(Date.UTC(year, month - 1, day + days));
  return `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`;
}

const MINUTE_WIDTHS: Partial<Record<ZonedGranularity, number>> = {
  MINUTE: 1,
  TWO_MINUTES: 2,
  FIVE_MINUTES: 5,
  TEN_MINUTES: 10,
  FIFTEEN_MINUTES: 15,
  THIRTY_MINUTES: 30,
  HOUR: 60,
};
const HOUR_WIDTHS: Partial<Record<ZonedGranularity, number>> = { TWO_HOURS: 2, THREE_HOURS: 3, SIX_HOURS: 6, TWELVE_HOURS: 12 };
const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];

/**
 * The bucket key of instant `ms`: the period it falls in, as text. Sub-hour and hour
 * buckets are periods of real time aligned to the local clock (`elapsed 986108400000`),
 * so the repeated hour when clocks go back is another bucket; longer ones are local
 * calendar periods (`2001-04-01T06` for six hours, `2001-04-01`, `2001-04`, `2001-Q2`).
 * A bucket is a run of minutes with one key (see {@link referenceBuckets}).
 */
export function referenceKey(ms: number, zone: string, granularity: ZonedGranularity, weekStart = 'MONDAY'): string {
  const f = localFields(ms, zone);
  const date = `${f.year}-${two(f.month)}-${two(f.day)}`;
  const minutes = MINUTE_WIDTHS[granularity];
  if (minutes !== undefined) {
    // Minutes counted from local midnight, floored to the width, read with the offset in
    // force: the instant that period of real time began. Hours repeated when clocks go
    // back give other instants; a change by whole hours in mid-hour (Chatham, 03:45 ->
    // 02:45) keeps the same real hour.
    const ofDay = f.hour * 60 + f.minute;
    const start = ofDay - (ofDay % minutes);
    const sign = f.offset.startsWith('-') ? -1 : 1;
    const offsetMs =
      sign * (Number(f.offset.slice(1, 3)) * HOUR + Number(f.offset.slice(4, 6)) * MINUTE + Number(f.offset.slice(7, 9) || 0) * 1000);
    return `elapsed ${Date.UTC(f.year, f.month - 1, f.day, 0, start) - offsetMs}`;
  }
  const hours = HOUR_WIDTHS[granularity];
  if (hours !== undefined) return `${date}T${two(f.hour - (f.hour % hours))}`;
  switch (granularity) {
    case 'DAY':
      return date;
    case 'WEEK': {
      const back = (f.weekday - WEEKDAYS.indexOf(weekStart) + 7) % 7;
      return shiftDate(f.year, f.month, f.day, -back);
    }
    case 'MONTH':
      return `${f.year}-${two(f.month)}`;
    case 'QUARTER':
      return `${f.year}-Q${Math.floor((f.month - 1) / 3) + 1}`;
    default:
      return String(f.year);
  }
}

/** `ms` as local time with offset, RFC 3339 (`2001-04-01T00:00:00-05:00`), from the local fields. */
export function referenceLocalText(ms: number, zone: string): string {
  const f = localFields(ms, zone);
  return `${f.year}-${two(f.month)}-${two(f.day)}T${two(f.hour)}:${two(f.minute)}:${two(f.second)}${f.offset}`;
}

/** A reference bucket: its key, real start and end (ms since epoch), and local start text. */
export interface ReferenceBucket {
  key: string;
  start: number;
  end: number;
  partial: boolean;
  localStart: string;
}

/**
 * Step of the walk: a key that changes and changes back within a step would be missed.
 * Clocks set back by 60 minutes at 03:45 (Pacific/Chatham) leave a period for exactly
 * 15 minutes; the zones tested here have nothing shorter.
 */
const STEP = 15 * MINUTE;

/**
 * The first instant (whole minute) at or before `ms` from which on the key stays
 * `key` up to `ms`: steps back {@link STEP} at a time while the key holds, then finds
 * the minute.
 */
function runStart(ms: number, key: string, keyOf: (t: number) => string): number {
  let t = ms;
  while (keyOf(t - STEP) === key) t -= STEP;
  while (keyOf(t - MINUTE) === key) t -= MINUTE;
  return t;
}

/** The first whole minute after `ms` whose key differs from `key` (stepping as {@link runStart}). */
function runEnd(ms: number, key: string, keyOf: (t: number) => string): number {
  let t = ms;
  while (keyOf(t + STEP) === key) t += STEP;
  while (keyOf(t) === key) t += MINUTE;
  return t;
}

/**
 * Every bucket overlapping `[from, to)` (whole minutes): runs of minutes with the same
 * {@link referenceKey}, found by looking at the minutes of the range ({@link STEP} at a
 * time where the key does not change, then minute by minute), each with the first
 * instant and end of its run (also outside the range).
 */
export function referenceBuckets(
  from: number,
  to: number,
  zone: string,
  granularity: ZonedGranularity,
  weekStart = 'MONDAY',
): ReferenceBucket[] {
  const keyOf = (t: number) => referenceKey(t, zone, granularity, weekStart);
  const buckets: ReferenceBucket[] = [];
  let t = from;
  while (t < to) {
    const key = keyOf(t);
    const start = buckets.length === 0 ? runStart(t, key, keyOf) : t;
    const end = runEnd(t, key, keyOf);
    buckets.push({ key, start, end, partial: start < from || end > to, localStart: referenceLocalText(start, zone) });
    t = end;
  }
  return buckets;
}
