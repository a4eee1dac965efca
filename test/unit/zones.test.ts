/**
 * Time zones: rules read from Intl, local times parsed and printed, bucket arithmetic in
 * zones (23/25-hour days, week starts, counts without listing), and pickGranularity.
 * Expected values are written by hand (2001 US daylight saving time: 1 April 02:00 to
 * 28 October 02:00 local) or come from the independent reference in
 * `test/helpers/zoned-reference.ts`.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, InputError } from '../../src/errors.ts';
import {
  bucketBoundaries,
  bucketStart,
  countBuckets,
  granularity,
  GRANULARITY_NAMES,
  listBuckets,
  nextBucketStart,
  pickGranularity,
  type GranularityName,
} from '../../src/query/granularity.ts';
import { bucketList, shapeBucketGroups } from '../../src/query/shape.ts';
import { formatLocal, instantOfLocal, normalizeTimeZone, offsetAt, offsetSpans, parseLocalTime } from '../../src/query/zone.ts';
import { referenceBuckets, type ZonedGranularity } from '../helpers/zoned-reference.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const H = 3_600_000;
const NY = 'America/New_York';

/** The error `fn` throws, expected to be an InputError. */
function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

describe('time zone names', () => {
  it('accepts IANA names, maps UTC aliases to UTC and defaults to UTC', () => {
    expect(normalizeTimeZone('America/New_York')).toBe('America/New_York');
    expect(normalizeTimeZone('Asia/Kathmandu')).toBe('Asia/Kathmandu');
    expect(normalizeTimeZone('Etc/GMT-5')).toBe('Etc/GMT-5');
    for (const alias of ['UTC', 'utc', 'Etc/UTC', 'GMT']) expect(normalizeTimeZone(alias)).toBe('UTC');
    expect(normalizeTimeZone(undefined)).toBe('UTC');
    expect(normalizeTimeZone(null)).toBe('UTC');
  });

  it('refuses unknown names and fixed offsets with INVALID_TIME_ZONE', () => {
    for (const name of ['Mars/Olympus', '+05:30', '', 'America/New York', '../etc/passwd', 'A'.repeat(200)]) {
      const error = inputError(() => normalizeTimeZone(name));
      expect(error.code).toBe(ErrorCode.INVALID_TIME_ZONE);
      expect(error.extensions.inputPath).toBe('timeZone');
    }
    expect(inputError(() => listBuckets(0, H, granularity('HOUR').cut, 'Mars/Olympus')).code).toBe(ErrorCode.INVALID_TIME_ZONE);
  });
});

describe('offsets and offset spans', () => {
  it('gives New York 2001 its two changes, to the millisecond', () => {
    expect(offsetSpans(NY, at('2001-01-01T00:00:00Z'), at('2002-01-01T00:00:00Z'))).toEqual([
      { from: at('2001-01-01T00:00:00Z'), to: at('2001-04-01T07:00:00Z'), offsetMs: -5 * H },
      { from: at('2001-04-01T07:00:00Z'), to: at('2001-10-28T06:00:00Z'), offsetMs: -4 * H },
      { from: at('2001-10-28T06:00:00Z'), to: at('2002-01-01T00:00:00Z'), offsetMs: -5 * H },
    ]);
  });

  it('gives zones without changes one span, and finds Kathmandu moving from +05:30 to +05:45 at its 1986 new year', () => {
    expect(offsetSpans('Asia/Kolkata', at('2001-01-01T00:00:00Z'), at('2011-01-01T00:00:00Z'))).toEqual([
      { from: at('2001-01-01T00:00:00Z'), to: at('2011-01-01T00:00:00Z'), offsetMs: 5.5 * H },
    ]);
    expect(offsetSpans('Asia/Kathmandu', at('1985-12-01T00:00:00Z'), at('1986-02-01T00:00:00Z'))).toEqual([
      { from: at('1985-12-01T00:00:00Z'), to: at('1985-12-31T18:30:00Z'), offsetMs: 5.5 * H },
      { from: at('1985-12-31T18:30:00Z'), to: at('1986-02-01T00:00:00Z'), offsetMs: 5.75 * H },
    ]);
  });

  it('keeps offsets with seconds (Africa/Monrovia before 1972)', () => {
    expect(offsetAt('Africa/Monrovia', at('1971-06-01T00:00:00Z'))).toBe(-(44 * 60 + 30) * 1000);
    expect(offsetAt('Africa/Monrovia', at('1972-06-01T00:00:00Z'))).toBe(0);
  });
});

describe('local times', () => {
  it('prints instants as local time with offset (RFC 3339)', () => {
    expect(formatLocal(at('2001-04-01T05:00:00Z'), NY)).toBe('2001-04-01T00:00:00-05:00');
    expect(formatLocal(at('2001-04-02T04:00:00Z'), NY)).toBe('2001-04-02T00:00:00-04:00');
    expect(formatLocal(at('2001-03-31T18:15:00Z'), 'Asia/Kathmandu')).toBe('2001-04-01T00:00:00+05:45');
    expect(formatLocal(0, 'UTC')).toBe('1970-01-01T00:00:00+00:00');
    expect(formatLocal(at('2001-04-01T05:00:00.250Z'), NY)).toBe('2001-04-01T00:00:00.250-05:00');
    expect(formatLocal(at('1971-01-01T00:44:30Z'), 'Africa/Monrovia')).toBe('1971-01-01T00:00:00-00:44:30');
  });

  it('reads dates and local times in the zone, RFC 3339 with offset as is, numbers as epoch milliseconds', () => {
    expect(iso(parseLocalTime('2001-04-01', NY))).toBe('2001-04-01T05:00:00.000Z');
    expect(iso(parseLocalTime('2001-04-01T06:30', NY))).toBe('2001-04-01T10:30:00.000Z');
    expect(iso(parseLocalTime('2001-04-01T01:59:59', NY))).toBe('2001-04-01T06:59:59.000Z');
    expect(iso(parseLocalTime('2001-04-01T06:30:00.2509', 'UTC'))).toBe('2001-04-01T06:30:00.250Z');
    expect(iso(parseLocalTime('2001-04-01', 'Asia/Kathmandu'))).toBe('2001-03-31T18:15:00.000Z');
    expect(iso(parseLocalTime('2001-04-01T06:30:00-05:00', 'Asia/Kathmandu'))).toBe('2001-04-01T11:30:00.000Z');
    expect(iso(parseLocalTime('2001-04-01T06:30:00+05:45', NY))).toBe('2001-04-01T00:45:00.000Z');
    expect(iso(parseLocalTime('2001-04-01T06:30:00Z', NY))).toBe('2001-04-01T06:30:00.000Z');
    expect(parseLocalTime(986_104_800_000, NY)).toBe(986_104_800_000);
  });

  it('moves a local time inside a daylight-saving gap forward by the gap, and takes the earlier of a repeated one', () => {
    // 2001-04-01 02:00 EST -> 03:00 EDT: 02:30 does not exist and reads as 03:30 EDT.
    expect(iso(parseLocalTime('2001-04-01T02:30', NY))).toBe('2001-04-01T07:30:00.000Z');
    // 2001-10-28 02:00 EDT -> 01:00 EST: 01:30 happens twice, first at 05:30Z (EDT).
    expect(iso(parseLocalTime('2001-10-28T01:30', NY))).toBe('2001-10-28T05:30:00.000Z');
    expect(iso(parseLocalTime('2001-10-28T02:00', NY))).toBe('2001-10-28T07:00:00.000Z');
    // São Paulo started DST at midnight on 2001-10-14: that day begins at 01:00 -02:00.
    expect(iso(parseLocalTime('2001-10-14', 'America/Sao_Paulo'))).toBe('2001-10-14T03:00:00.000Z');
    // Lord Howe sets clocks back by 30 minutes: 01:45 first happens at +11:00.
    expect(iso(parseLocalTime('2001-03-25T01:45', 'Australia/Lord_Howe'))).toBe('2001-03-24T14:45:00.000Z');
    expect(iso(instantOfLocal(Date.UTC(2001, 3, 1, 2, 0), NY))).toBe('2001-04-01T07:00:00.000Z');
  });

  it('refuses what is not a date, local time or RFC 3339 with INVALID_TIME', () => {
    const bad = [
      'yesterday',
      '2001-4-1',
      '2001-02-29',
      '2001-04-31',
      '2001-13-01',
      '2001-04-01T24:00',
      '2001-04-01T06:60',
      '2001-04-01T06:30:60',
      '2001-04-01 06:30',
      '2001-04-01T06',
      '2001-04-01Z',
      '2001-04-01T06:30+5:00',
      '2001-04-01T06:30:00+24:00',
      '',
    ];
    for (const text of bad) expect(inputError(() => parseLocalTime(text, NY)).code, text).toBe(ErrorCode.INVALID_TIME);
    for (const number of [1.5, Number.NaN, Infinity, 2 ** 60])
      expect(inputError(() => parseLocalTime(number, NY)).code).toBe(ErrorCode.INVALID_TIME);
    expect(inputError(() => parseLocalTime('2001-04-01', 'Nowhere/Land')).code).toBe(ErrorCode.INVALID_TIME_ZONE);
  });
});

/** Buckets as `[local start, start, end, partial]` for compact hand-written expectations. */
const spans = (from: string, to: string, name: GranularityName, zone: string, weekStart?: 'SUNDAY') =>
  listBuckets(parseLocalTime(from, zone), parseLocalTime(to, zone), granularity(name, { weekStart }).cut, zone).map((b) => [
    b.localStart,
    iso(b.start),
    iso(b.end),
    b.partial,
  ]);

describe('buckets in a time zone', () => {
  it('New York days around both 2001 changes last 23 and 25 hours', () => {
    expect(spans('2001-03-31', '2001-04-03', 'DAY', NY)).toEqual([
      ['2001-03-31T00:00:00-05:00', '2001-03-31T05:00:00.000Z', '2001-04-01T05:00:00.000Z', false],
      ['2001-04-01T00:00:00-05:00', '2001-04-01T05:00:00.000Z', '2001-04-02T04:00:00.000Z', false],
      ['2001-04-02T00:00:00-04:00', '2001-04-02T04:00:00.000Z', '2001-04-03T04:00:00.000Z', false],
    ]);
    expect(spans('2001-10-28', '2001-10-29', 'DAY', NY)).toEqual([
      ['2001-10-28T00:00:00-04:00', '2001-10-28T04:00:00.000Z', '2001-10-29T05:00:00.000Z', false],
    ]);
  });

  it('the hour repeated when clocks go back is a bucket of its own; two-hour periods follow the local clock', () => {
    expect(spans('2001-10-28T00:00', '2001-10-28T03:00', 'HOUR', NY)).toEqual([
      ['2001-10-28T00:00:00-04:00', '2001-10-28T04:00:00.000Z', '2001-10-28T05:00:00.000Z', false],
      ['2001-10-28T01:00:00-04:00', '2001-10-28T05:00:00.000Z', '2001-10-28T06:00:00.000Z', false],
      ['2001-10-28T01:00:00-05:00', '2001-10-28T06:00:00.000Z', '2001-10-28T07:00:00.000Z', false],
      ['2001-10-28T02:00:00-05:00', '2001-10-28T07:00:00.000Z', '2001-10-28T08:00:00.000Z', false],
    ]);
    expect(spans('2001-10-28T00:00', '2001-10-28T04:00', 'TWO_HOURS', NY)).toEqual([
      ['2001-10-28T00:00:00-04:00', '2001-10-28T04:00:00.000Z', '2001-10-28T07:00:00.000Z', false],
      ['2001-10-28T02:00:00-05:00', '2001-10-28T07:00:00.000Z', '2001-10-28T09:00:00.000Z', false],
    ]);
    expect(spans('2001-04-01T00:00', '2001-04-01T06:00', 'TWO_HOURS', NY)).toEqual([
      ['2001-04-01T00:00:00-05:00', '2001-04-01T05:00:00.000Z', '2001-04-01T07:00:00.000Z', false],
      ['2001-04-01T03:00:00-04:00', '2001-04-01T07:00:00.000Z', '2001-04-01T08:00:00.000Z', false],
      ['2001-04-01T04:00:00-04:00', '2001-04-01T08:00:00.000Z', '2001-04-01T10:00:00.000Z', false],
    ]);
  });

  it('hours and quarter hours follow the zone offset: Kolkata +05:30, Kathmandu +05:45', () => {
    expect(spans('2001-04-01T00:00', '2001-04-01T02:00', 'HOUR', 'Asia/Kolkata')).toEqual([
      ['2001-04-01T00:00:00+05:30', '2001-03-31T18:30:00.000Z', '2001-03-31T19:30:00.000Z', false],
      ['2001-04-01T01:00:00+05:30', '2001-03-31T19:30:00.000Z', '2001-03-31T20:30:00.000Z', false],
    ]);
    expect(spans('2001-04-01T00:10', '2001-04-01T00:40', 'FIFTEEN_MINUTES', 'Asia/Kathmandu')).toEqual([
      ['2001-04-01T00:00:00+05:45', '2001-03-31T18:15:00.000Z', '2001-03-31T18:30:00.000Z', true],
      ['2001-04-01T00:15:00+05:45', '2001-03-31T18:30:00.000Z', '2001-03-31T18:45:00.000Z', false],
      ['2001-04-01T00:30:00+05:45', '2001-03-31T18:45:00.000Z', '2001-03-31T19:00:00.000Z', true],
    ]);
    expect(spans('2001-04-01', '2001-04-02', 'SIX_HOURS', 'Asia/Kathmandu').map(([local, start]) => [local, start])).toEqual([
      ['2001-04-01T00:00:00+05:45', '2001-03-31T18:15:00.000Z'],
      ['2001-04-01T06:00:00+05:45', '2001-04-01T00:15:00.000Z'],
      ['2001-04-01T12:00:00+05:45', '2001-04-01T06:15:00.000Z'],
      ['2001-04-01T18:00:00+05:45', '2001-04-01T12:15:00.000Z'],
    ]);
  });

  it('Adelaide (+10:30 -> +09:30) has a 25-hour day; Lord Howe a half-hour bucket where its clocks go back by 30 minutes', () => {
    expect(spans('2001-03-25', '2001-03-26', 'DAY', 'Australia/Adelaide')).toEqual([
      ['2001-03-25T00:00:00+10:30', '2001-03-24T13:30:00.000Z', '2001-03-25T14:30:00.000Z', false],
    ]);
    expect(spans('2001-03-25T01:00', '2001-03-25T03:00', 'HOUR', 'Australia/Lord_Howe')).toEqual([
      ['2001-03-25T01:00:00+11:00', '2001-03-24T14:00:00.000Z', '2001-03-24T15:00:00.000Z', false],
      ['2001-03-25T01:30:00+10:30', '2001-03-24T15:00:00.000Z', '2001-03-24T15:30:00.000Z', false],
      ['2001-03-25T02:00:00+10:30', '2001-03-24T15:30:00.000Z', '2001-03-24T16:30:00.000Z', false],
    ]);
  });

  it('a day that starts inside a gap starts when the gap ends (São Paulo, DST from midnight)', () => {
    expect(spans('2001-10-13', '2001-10-16', 'DAY', 'America/Sao_Paulo').map(([local, start, end]) => [local, start, end])).toEqual([
      ['2001-10-13T00:00:00-03:00', '2001-10-13T03:00:00.000Z', '2001-10-14T03:00:00.000Z'],
      ['2001-10-14T01:00:00-02:00', '2001-10-14T03:00:00.000Z', '2001-10-15T02:00:00.000Z'],
      ['2001-10-15T00:00:00-02:00', '2001-10-15T02:00:00.000Z', '2001-10-16T02:00:00.000Z'],
    ]);
  });

  it("where clocks go back across midnight, the re-entered day is a bucket of its own (St. John's fell back from 00:01 to 23:01)", () => {
    expect(
      spans('2001-10-27T12:00', '2001-10-28T12:00', 'DAY', 'America/St_Johns').map(([local, start, end]) => [local, start, end]),
    ).toEqual([
      ['2001-10-27T00:00:00-02:30', '2001-10-27T02:30:00.000Z', '2001-10-28T02:30:00.000Z'],
      ['2001-10-28T00:00:00-02:30', '2001-10-28T02:30:00.000Z', '2001-10-28T02:31:00.000Z'],
      ['2001-10-27T23:01:00-03:30', '2001-10-28T02:31:00.000Z', '2001-10-28T03:30:00.000Z'],
      ['2001-10-28T00:00:00-03:30', '2001-10-28T03:30:00.000Z', '2001-10-29T03:30:00.000Z'],
    ]);
  });

  it('weeks start on local Monday, or on the chosen weekday; months and years are local', () => {
    // Wednesday 2001-04-04: the week began on Monday 2 April (EDT), or on Sunday 1 April (still EST at midnight: 167 hours).
    expect(spans('2001-04-04', '2001-04-05', 'WEEK', NY)).toEqual([
      ['2001-04-02T00:00:00-04:00', '2001-04-02T04:00:00.000Z', '2001-04-09T04:00:00.000Z', true],
    ]);
    expect(spans('2001-04-04', '2001-04-05', 'WEEK', NY, 'SUNDAY')).toEqual([
      ['2001-04-01T00:00:00-05:00', '2001-04-01T05:00:00.000Z', '2001-04-08T04:00:00.000Z', true],
    ]);
    expect(spans('2001-03-15', '2001-05-15', 'MONTH', NY)).toEqual([
      ['2001-03-01T00:00:00-05:00', '2001-03-01T05:00:00.000Z', '2001-04-01T05:00:00.000Z', true],
      ['2001-04-01T00:00:00-05:00', '2001-04-01T05:00:00.000Z', '2001-05-01T04:00:00.000Z', false],
      ['2001-05-01T00:00:00-04:00', '2001-05-01T04:00:00.000Z', '2001-06-01T04:00:00.000Z', true],
    ]);
    expect(spans('2001-06-01', '2002-02-01', 'YEAR', 'Asia/Kathmandu')).toEqual([
      ['2001-01-01T00:00:00+05:45', '2000-12-31T18:15:00.000Z', '2001-12-31T18:15:00.000Z', true],
      ['2002-01-01T00:00:00+05:45', '2001-12-31T18:15:00.000Z', '2002-12-31T18:15:00.000Z', true],
    ]);
  });

  it('UTC buckets are those of the calendar in UTC, with +00:00', () => {
    expect(spans('2001-03-31T22:00', '2001-04-01T01:00', 'TWO_HOURS', 'UTC')).toEqual([
      ['2001-03-31T22:00:00+00:00', '2001-03-31T22:00:00.000Z', '2001-04-01T00:00:00.000Z', false],
      ['2001-04-01T00:00:00+00:00', '2001-04-01T00:00:00.000Z', '2001-04-01T02:00:00.000Z', true],
    ]);
  });

  /** [zone, granularities, from, to] in local time; windows around each zone's 2001 changes. */
  const WINDOWS: [string, ZonedGranularity[], string, string][] = [];
  const fine: ZonedGranularity[] = ['MINUTE', 'TWO_MINUTES', 'FIVE_MINUTES', 'TEN_MINUTES', 'FIFTEEN_MINUTES', 'THIRTY_MINUTES', 'HOUR'];
  const hours: ZonedGranularity[] = ['HOUR', 'TWO_HOURS', 'THREE_HOURS', 'SIX_HOURS', 'TWELVE_HOURS', 'DAY'];
  const days: ZonedGranularity[] = ['DAY', 'WEEK', 'MONTH'];
  const changes: [string, string][] = [
    [NY, '2001-04-01'],
    [NY, '2001-10-28'],
    ['America/Los_Angeles', '2001-04-01'],
    ['Australia/Adelaide', '2001-03-25'],
    ['Australia/Adelaide', '2001-10-28'],
    ['Australia/Lord_Howe', '2001-03-25'],
    ['Australia/Lord_Howe', '2001-10-28'],
    ['Europe/London', '2001-03-25'],
    ['America/Sao_Paulo', '2001-10-14'],
    ['Pacific/Chatham', '2001-03-18'],
    ['Asia/Kolkata', '2001-04-01'],
    ['Asia/Kathmandu', '2001-04-01'],
    ['UTC', '2001-04-01'],
  ];
  /** The date `days` after `day` (YYYY-MM-DD), by calendar arithmetic. */
  const shift = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
  for (const [zone, day] of changes) {
    WINDOWS.push([zone, fine, `${day}T00:07`, `${day}T04:52`]);
    WINDOWS.push([zone, hours, `${shift(day, -2)}T05:31`, `${shift(day, 2)}T19:03`]);
    WINDOWS.push([zone, days, `${day.slice(0, 8)}01T12:00`, `${shift(`${day.slice(0, 8)}01`, 33)}T12:00`]);
  }
  WINDOWS.push([NY, ['QUARTER', 'YEAR'], '2000-11-20T08:00', '2002-02-10T00:00']);
  WINDOWS.push(['Asia/Kathmandu', ['QUARTER', 'YEAR'], '1985-11-20T08:00', '1986-02-10T00:00']);
  WINDOWS.push(['Australia/Adelaide', ['QUARTER'], '2001-02-20T08:00', '2001-05-10T00:00']);

  it.each(WINDOWS)(
    '%s: %j over [%s, %s) equal the reference; counts without listing equal the listing',
    (zone, names, fromText, toText) => {
      const from = parseLocalTime(fromText, zone);
      const to = parseLocalTime(toText, zone);
      for (const name of names) {
        const { cut } = granularity(name);
        const reference = referenceBuckets(from, to, zone, name);
        const listed = listBuckets(from, to, cut, zone);
        expect(
          listed.map((b) => [iso(b.start), iso(b.end), b.partial, b.localStart]),
          name,
        ).toEqual(reference.map((b) => [iso(b.start), iso(b.end), b.partial, b.localStart]));
        expect(countBuckets(from, to, cut, zone), name).toBe(reference.length);
        expect(bucketBoundaries(from, to, cut, zone)).toEqual(reference.slice(1).map((b) => b.start));
        for (const bucket of reference) {
          expect(nextBucketStart(bucket.start, cut, zone), `${name} next of ${iso(bucket.start)}`).toBe(bucket.end);
          for (const t of [bucket.start, bucket.end - 60_000, Math.floor((bucket.start + bucket.end) / 2)]) {
            expect(bucketStart(t, cut, zone), `${name} start of ${iso(t)}`).toBe(bucket.start);
          }
        }
      }
    },
  );

  it('counts huge ranges without listing them', () => {
    const from = at('1970-01-01T00:00:00Z');
    const to = at('9999-01-01T00:00:00Z');
    const started = performance.now();
    expect(countBuckets(from, to, granularity('MINUTE').cut, 'UTC')).toBe((to - from) / 60_000);
    expect(countBuckets(from, to, granularity('YEAR').cut, 'UTC')).toBe(8029);
    // New York: whole-hour offsets, so minutes are minutes; the range starts on 2000-12-31 at 19:00 local time,
    // so it touches the local year 2000 and the local day 2000-12-31 too (36,524 days in 2001-2100).
    const nyFrom = at('2001-01-01T00:00:00Z');
    const nyTo = at('2101-01-01T00:00:00Z');
    expect(countBuckets(nyFrom, nyTo, granularity('MINUTE').cut, NY)).toBe((nyTo - nyFrom) / 60_000);
    expect(countBuckets(nyFrom, nyTo, granularity('YEAR').cut, NY)).toBe(101);
    expect(countBuckets(nyFrom, nyTo, granularity('DAY').cut, NY)).toBe(36_524 + 1);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('pickGranularity', () => {
  const pick = (from: string, to: string, points: number, zone = 'UTC') =>
    pickGranularity(parseLocalTime(from, zone), parseLocalTime(to, zone), points, zone).name;

  it('picks the finest granularity with at most maxDataPoints buckets', () => {
    expect(pick('2001-04-02', '2001-04-03', 1440)).toBe('MINUTE');
    expect(pick('2001-04-02', '2001-04-03', 1439)).toBe('TWO_MINUTES');
    expect(pick('2001-04-02', '2001-04-03', 24)).toBe('HOUR');
    expect(pick('2001-04-02', '2001-04-03', 23)).toBe('TWO_HOURS');
    expect(pick('2001-04-02', '2001-04-03', 1)).toBe('DAY');
    expect(pick('2001-01-01', '2002-01-01', 1000)).toBe('TWELVE_HOURS');
    expect(pick('2001-01-01', '2002-01-01', 400)).toBe('DAY');
    expect(pick('2001-01-01', '2002-01-01', 60)).toBe('WEEK');
    expect(pick('2001-01-01', '2002-01-01', 12)).toBe('MONTH');
    expect(pick('2001-01-01', '2002-01-01', 4)).toBe('QUARTER');
    expect(pick('2001-01-01', '2002-01-01', 1)).toBe('YEAR');
  });

  it('counts in the zone: the 23-hour New York day of 2001-04-01 fits 23 hourly points', () => {
    expect(pick('2001-04-01', '2001-04-02', 23, NY)).toBe('HOUR');
    expect(pick('2001-04-02', '2001-04-03', 23, NY)).toBe('TWO_HOURS');
    // A local day is 24 buckets in Kolkata, but 25 UTC-aligned ones: the zone matters.
    expect(pick('2001-04-02', '2001-04-03', 24, 'Asia/Kolkata')).toBe('HOUR');
    const from = parseLocalTime('2001-04-02', 'Asia/Kolkata');
    expect(pickGranularity(from, from + 24 * H, 24, 'UTC').name).toBe('TWO_HOURS');
  });

  it('refuses when not even YEAR fits, and a maxDataPoints that is not a positive integer', () => {
    const tooLong = inputError(() => pick('1970-01-01', '2001-01-01', 30));
    expect(tooLong.code).toBe(ErrorCode.TOO_MANY_BUCKETS);
    expect(tooLong.message).toContain('31');
    for (const points of [0, -1, 1.5, Number.NaN])
      expect(inputError(() => pick('2001-01-01', '2001-01-02', points)).code).toBe(ErrorCode.INVALID_ARGUMENT);
  });

  it('considers every granularity, finest first', () => {
    expect(GRANULARITY_NAMES[0]).toBe('MINUTE');
    expect(GRANULARITY_NAMES.at(-1)).toBe('YEAR');
  });
});

describe('bucket lists in a time zone (query/shape.ts)', () => {
  const from = parseLocalTime('2001-03-31T12:00', NY);
  const to = parseLocalTime('2001-04-02T12:00', NY);
  const range = { from, to, cut: granularity('DAY').cut, timeZone: NY };
  const stats = (n: number) => ({ n, sum: 10 * n, min: 1, max: n, sq: 100 * n });

  it('fill NULL lists every local day of the range with its end, whether the range cuts it, and its local start', () => {
    const byStart = new Map([[at('2001-04-01T05:00:00Z'), stats(3)]]);
    expect(
      bucketList(byStart, { ...range, fill: 'NULL' }).map((b) => [
        b.localStart,
        iso(b.start.getTime()),
        iso(b.end.getTime()),
        b.partial,
        b.count,
        b.sum,
      ]),
    ).toEqual([
      ['2001-03-31T00:00:00-05:00', '2001-03-31T05:00:00.000Z', '2001-04-01T05:00:00.000Z', true, 0, null],
      ['2001-04-01T00:00:00-05:00', '2001-04-01T05:00:00.000Z', '2001-04-02T04:00:00.000Z', false, 3, 30],
      ['2001-04-02T00:00:00-04:00', '2001-04-02T04:00:00.000Z', '2001-04-03T04:00:00.000Z', true, 0, null],
    ]);
  });

  it('fill NONE lists only buckets with readings; statistics under a start the listing lacks are kept as a bucket, not dropped', () => {
    const byStart = new Map([
      [at('2001-04-02T04:00:00Z'), stats(2)],
      [at('2001-04-01T12:00:00Z'), stats(1)],
    ]);
    expect(bucketList(byStart, { ...range, fill: 'NONE' }).map((b) => [iso(b.start.getTime()), b.count])).toEqual([
      ['2001-04-01T12:00:00.000Z', 1],
      ['2001-04-02T04:00:00.000Z', 2],
    ]);
  });

  it('shapes grouped pipeline rows into local buckets per group', () => {
    const rows = [
      { _id: { t: new Date('2001-04-01T05:00:00Z'), g: { origin: 'LAS' } }, n0: 2, sum0: 5, min0: 1, max0: 4, sq0: 17 },
      { _id: { t: new Date('2001-04-02T04:00:00Z'), g: { origin: 'JFK' } }, n0: 1, sum0: 7, min0: 7, max0: 7, sq0: 49 },
    ];
    const groups = shapeBucketGroups(rows, { ...range, fill: 'NONE', groupBy: ['origin'] });
    expect(groups.map((g) => [g.tags[0]!.value, g.buckets.map((b) => [b.localStart, b.count, b.max])])).toEqual([
      ['JFK', [['2001-04-02T00:00:00-04:00', 1, 7]]],
      ['LAS', [['2001-04-01T00:00:00-05:00', 2, 4]]],
    ]);
  });
});
