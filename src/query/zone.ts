import { ErrorCode, InputError } from '../errors.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../model/time.ts';

/**
 * Time-zone rules, read from the IANA time zone database as the JavaScript runtime ships
 * it (`Intl.DateTimeFormat`, ICU's copy of tzdata). No offset is written down here: every
 * offset and transition comes from `Intl`, so a runtime with newer tzdata gives newer
 * rules. All instants are milliseconds since the Unix epoch (UTC); an offset is the
 * local wall-clock time minus UTC, in milliseconds (New York in winter: -18,000,000).
 * "Local milliseconds" are the local wall-clock date and time read as if they were UTC
 * (`instant + offset`), the form used for calendar arithmetic on local dates.
 */

/** The zone every query uses unless it names another. */
export const UTC = 'UTC';

/**
 * Earliest and latest offsets any zone has had since 1970 (IANA: UTC-12:00 to UTC+14:00),
 * widened to a day either way: a margin for searches that must reach the instant a local
 * period started.
 */
const OFFSET_MARGIN_MS = DAY_MS + 2 * HOUR_MS;

/**
 * Step at which a year is sampled for offset changes; two changes closer together than
 * this that cancel out (A -> B -> A) would be missed. The closest pairs in tzdata since
 * 1970 are 6 days 23 hours apart (Brazil's Recife, Noronha and Boa Vista kept daylight
 * saving time for that long in October 2000; Gaza's predicted rules have one in 2054),
 * checked for every zone ICU knows, 1970 to 2100, against daily sampling.
 */
const SAMPLE_MS = 3 * DAY_MS;

const offsetFormats = new Map<string, (ms: number) => string>();

/** The `Intl` formatter of `zone` that prints the offset as `GMT+05:45` (or `GMT` for zero). */
function offsetFormat(zone: string): (ms: number) => string {
  let format = offsetFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).format;
    offsetFormats.set(zone, format);
  }
  return format;
}

/**
 * Validates a time zone name and returns it; null or undefined give {@link UTC}, and so
 * do UTC's aliases (`Etc/UTC`, `GMT`, `utc`). Accepted are the names of the IANA time
 * zone database the runtime knows (`Europe/Paris`, `Asia/Kolkata`, `Etc/GMT-5`), as
 * `Intl` matches them (ASCII case-insensitively); fixed offsets such as `+05:30` are not
 * names and are refused.
 * @throws InputError INVALID_TIME_ZONE for an unknown name, with `inputPath` `timeZone`.
 */
export function normalizeTimeZone(name: string | null | undefined): string {
  if (name === null || name === undefined) return UTC;
  if (/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) {
    let canonical: string | undefined;
    try {
      canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      // Not a zone Intl knows: refused below.
    }
    // Aliases of UTC (`Etc/UTC`, `GMT`, `utc`) become `UTC`, which needs no rules at all.
    if (canonical !== undefined) return canonical === UTC ? UTC : name;
  }
  throw new InputError(
    ErrorCode.INVALID_TIME_ZONE,
    `Unknown time zone ${JSON.stringify(name)}: use a name of the IANA time zone database, e.g. "America/New_York" or "UTC"`,
    'timeZone',
  );
}

/**
 * The offset of `zone` at instant `ms`: local wall-clock time minus UTC, in ms
 * (Asia/Kathmandu: 20,700,000 for +05:45). Offsets with seconds (some zones before 1972,
 * e.g. Africa/Monrovia at -00:44:30) are exact.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function offsetAt(zone: string, ms: number): number {
  if (zone === UTC) return 0;
  let format: (ms: number) => string;
  try {
    format = offsetFormat(zone);
  } catch {
    return offsetAt(normalizeTimeZone(zone), ms);
  }
  const text = format(ms);
  const match = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text);
  if (match === null) throw new Error(`Unexpected offset format from Intl: ${text}`);
  if (match[1] === undefined) return 0;
  const size = Number(match[2]) * HOUR_MS + Number(match[3]) * MINUTE_MS + Number(match[4] ?? 0) * 1000;
  return match[1] === '-' ? -size : size;
}

/** A stretch of time `[from, to)` (ms since epoch) during which a zone keeps one offset. */
export interface OffsetSpan {
  from: number;
  to: number;
  /** Local time minus UTC, in ms. */
  offsetMs: number;
}

/** The transitions of one zone in one UTC calendar year: the offset at its start and each change. */
interface YearRules {
  startOffset: number;
  changes: { at: number; offsetMs: number }[];
}

const yearCache = new Map<string, YearRules>();
const YEAR_CACHE_LIMIT = 20_000;

/** Finds the first instant in `(lo, hi]` whose offset differs from `offsetAt(lo)`, by bisection to the millisecond. */
function firstChange(zone: string, lo: number, hi: number, before: number): number {
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (offsetAt(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * From this year on a zone's changes are those of 400 years earlier, 146,097 days
 * later: tzdata (and ICU's copy) lists explicit transitions up to 2087 at the latest
 * (Morocco's predicted Ramadan changes; most zones stop by 2037) and continues with
 * yearly rules tied to weekdays ("first Sunday in April"), and the Gregorian calendar
 * repeats its weekdays every 400 years. So no query, however long, makes more than
 * about 530 years per zone be looked up. (Checked against `Intl` for every zone ICU
 * knows, 1970 to 9999.)
 */
const PERIODIC_FROM_YEAR = 2100 + 400;
const GREGORIAN_CYCLE_MS = 146_097 * DAY_MS;

/** The offset changes of `zone` during the UTC year `year`, cached. */
function yearRules(zone: string, year: number): YearRules {
  const key = `${zone}\u0000${year}`;
  const cached = yearCache.get(key);
  if (cached !== undefined) return cached;
  if (year >= PERIODIC_FROM_YEAR) {
    const earlier = yearRules(zone, year - 400);
    const rules = {
      startOffset: earlier.startOffset,
      changes: earlier.changes.map((change) => ({ at: change.at + GREGORIAN_CYCLE_MS, offsetMs: change.offsetMs })),
    };
    remember(key, rules);
    return rules;
  }
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  const startOffset = offsetAt(zone, start);
  const changes: YearRules['changes'] = [];
  let at = start;
  let current = startOffset;
  while (at < end) {
    const next = Math.min(at + SAMPLE_MS, end);
    const offset = offsetAt(zone, next === end ? end - 1 : next);
    if (offset === current) {
      at = next;
      continue;
    }
    const change = firstChange(zone, at, next === end ? end - 1 : next, current);
    current = offsetAt(zone, change);
    changes.push({ at: change, offsetMs: current });
    at = change;
  }
  const rules = { startOffset, changes };
  remember(key, rules);
  return rules;
}

/** Caches the rules of one zone and year, forgetting the oldest entry beyond {@link YEAR_CACHE_LIMIT}. */
function remember(key: string, rules: YearRules): void {
  if (yearCache.size >= YEAR_CACHE_LIMIT) yearCache.delete(yearCache.keys().next().value!);
  yearCache.set(key, rules);
}

/**
 * Splits `[from, to)` (ms since epoch, `from < to`) into the stretches during which
 * `zone` keeps one offset, in time order; adjacent spans have different offsets. Offsets
 * are looked up every three days and each change is found to the millisecond, then
 * remembered per zone and year (a few ms per zone and year the first time, on the order
 * of microseconds after), so a query over years costs a few lookups.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function offsetSpans(zone: string, from: number, to: number): OffsetSpan[] {
  if (from >= to) return [];
  if (zone === UTC) return [{ from, to, offsetMs: 0 }];
  const spans: OffsetSpan[] = [{ from, to, offsetMs: offsetAt(zone, from) }];
  const firstYear = new Date(from).getUTCFullYear();
  const lastYear = new Date(to - 1).getUTCFullYear();
  for (let year = firstYear; year <= lastYear; year++) {
    const rules = yearRules(zone, year);
    // A change exactly at 1 January 00:00 UTC shows as the year's start offset.
    const changes = year === firstYear ? rules.changes : [{ at: Date.UTC(year, 0, 1), offsetMs: rules.startOffset }, ...rules.changes];
    for (const change of changes) {
      if (change.at <= from || change.at >= to) continue;
      const last = spans[spans.length - 1]!;
      if (change.offsetMs === last.offsetMs) continue;
      last.to = change.at;
      spans.push({ from: change.at, to, offsetMs: change.offsetMs });
    }
  }
  return spans;
}

/** Two-digit (or wider) zero-padded number. */
const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/**
 * Formats an offset for RFC 3339: `+05:45`, `-05:00`, `+00:00`. An offset with seconds
 * (before 1972 in a few zones) is written `-00:44:30`, as `Temporal` does; RFC 3339
 * itself has no form for it.
 */
export function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const size = Math.abs(offsetMs);
  const hours = Math.floor(size / HOUR_MS);
  const minutes = Math.floor((size % HOUR_MS) / MINUTE_MS);
  const seconds = Math.floor((size % MINUTE_MS) / 1000);
  return `${sign}${pad(hours)}:${pad(minutes)}${seconds === 0 ? '' : `:${pad(seconds)}`}`;
}

/**
 * Instant `ms` as local wall-clock time with the given offset, as an RFC 3339 string:
 * `2001-04-01T00:00:00-05:00`; milliseconds are added only when not zero
 * (`…T00:00:00.250-05:00`). See {@link formatOffset} for offsets with seconds.
 */
export function formatWithOffset(ms: number, offsetMs: number): string {
  const local = new Date(ms + offsetMs);
  const millis = local.getUTCMilliseconds();
  return (
    `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
    `T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
    `${millis === 0 ? '' : `.${pad(millis, 3)}`}${formatOffset(offsetMs)}`
  );
}

/**
 * The local wall-clock date and time of instant `ms` in `zone` with its offset, as an
 * RFC 3339 string (see {@link formatWithOffset}): `2001-04-01T00:00:00-05:00`.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function formatLocal(ms: number, zone: string): string {
  return formatWithOffset(ms, offsetAt(zone, ms));
}

/**
 * The instant at which the wall clock of `zone` shows `localMs` (local milliseconds, see
 * the module comment), resolved like `Temporal`'s `"compatible"` disambiguation (and
 * RFC 5545): a local time that happens twice (clocks set back) gives the earlier instant;
 * one that never happens (clocks set forward over it) is moved forward by the length of
 * the gap, i.e. read with the offset in force before the change (New York, 2001-04-01
 * 02:30 gives 03:30 EDT, 07:30Z).
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function instantOfLocal(localMs: number, zone: string): number {
  if (zone === UTC) return localMs;
  const spans = offsetSpans(zone, localMs - OFFSET_MARGIN_MS, localMs + OFFSET_MARGIN_MS);
  for (const span of spans) {
    const candidate = localMs - span.offsetMs;
    if (candidate >= span.from && candidate < span.to) return candidate;
  }
  // In a gap: the last span whose local times end before `localMs` is the one in force before it.
  let before = spans[0]!;
  for (const span of spans) if (span.from + span.offsetMs <= localMs) before = span;
  return localMs - before.offsetMs;
}

/** The instant of a UTC calendar date and time, for any four-digit year (`Date.UTC` maps years 0 to 99 to the 1900s). */
function utcFields(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

const daysInMonth = (year: number, month: number) => new Date(utcFields(year, month + 1, 0, 0, 0, 0, 0)).getUTCDate();

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/**
 * Reads a query time in `zone`:
 * - a number: milliseconds since the Unix epoch, as is (Grafana's `from`/`to`);
 * - `2001-04-01`: the start of that local day (midnight; see below when midnight does not happen);
 * - `2001-04-01T06:30`, `2001-04-01T06:30:00` or `…:00.250`, without offset: that
 *   local wall-clock time in `zone`;
 * - with an offset or `Z` (`2001-04-01T06:30:00-05:00`, `…Z`): RFC 3339, that instant,
 *   whatever the zone.
 * Local times that happen twice or never (daylight saving changes) are resolved by
 * {@link instantOfLocal}: the earlier instant, or moved forward by the gap. Fractions
 * beyond milliseconds are dropped.
 * @returns ms since epoch, UTC.
 * @throws InputError INVALID_TIME for text that is none of these forms or names a date
 * or time that does not exist on the calendar (2001-02-29, 24:00, a leap second 60),
 * or a number that is not a finite integer; INVALID_TIME_ZONE for an unknown zone.
 */
export function parseLocalTime(text: string | number, zone: string): number {
  if (typeof text === 'number') {
    if (!Number.isSafeInteger(text)) throw invalidTime(String(text), 'an integer number of milliseconds since 1970-01-01T00:00:00Z');
    return text;
  }
  const match = LOCAL_TIME.exec(text);
  if (match === null)
    throw invalidTime(text, 'a date (2001-04-01), a local time (2001-04-01T06:30) or RFC 3339 (2001-04-01T06:30:00-05:00)');
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const hour = Number(match[4] ?? 0);
  const minute = Number(match[5] ?? 0);
  const second = Number(match[6] ?? 0);
  const ms = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw invalidTime(text, 'a date and time that exist on the calendar');
  }
  const fields = utcFields(year, month, day, hour, minute, second, ms);
  const offset = match[8];
  if (offset === undefined) return instantOfLocal(fields, normalizeTimeZone(zone));
  if (offset === 'Z' || offset === 'z') return fields;
  const offsetHours = Number(offset.slice(1, 3));
  const offsetMinutes = Number(offset.slice(4, 6));
  if (offsetHours > 23 || offsetMinutes > 59) throw invalidTime(text, 'an offset within ±23:59');
  const size = offsetHours * HOUR_MS + offsetMinutes * MINUTE_MS;
  return fields - (offset.startsWith('-') ? -size : size);
}

function invalidTime(text: string, expected: string): InputError {
  return new InputError(ErrorCode.INVALID_TIME, `Cannot read ${JSON.stringify(text)} as a time: expected ${expected}`);
}
