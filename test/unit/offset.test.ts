import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodedError } from '../../src/errors.ts';
import { compareWithPrevious, shiftBack, shiftedRange, validateOffset, type Offset } from '../../src/query/offset.ts';
import type { TransformedBucket } from '../../src/query/transforms.ts';

const ms = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof CodedError ? error.code : 'not coded';
  }
  return undefined;
}

/** Month spans from calendar fields: `count` months from (year, month0). */
const months = (year: number, month0: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    start: new Date(Date.UTC(year, month0 + i, 1)),
    end: new Date(Date.UTC(year, month0 + i + 1, 1)),
    partial: false,
    localStart: new Date(Date.UTC(year, month0 + i, 1)).toISOString(),
  }));
/** Day spans from calendar fields. */
const days = (year: number, month0: number, day: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    start: new Date(Date.UTC(year, month0, day + i)),
    end: new Date(Date.UTC(year, month0, day + i + 1)),
    partial: false,
    localStart: new Date(Date.UTC(year, month0, day + i)).toISOString(),
  }));
/** A transformed bucket of `span` whose value is `value` (its statistics are all `value`, count 1; empty for null). */
const bucket = (span: { start: Date; end: Date }, value: number | null): TransformedBucket => ({
  start: span.start,
  end: span.end,
  partial: false,
  localStart: span.start.toISOString(),
  count: value === null ? 0 : 1,
  sum: value,
  min: value,
  max: value,
  avg: value,
  variance: value,
  stddev: value,
  sampleStddev: null,
  first: null,
  last: null,
  sketch: null,
  increase: null,
  rate: null,
  filled: value === null,
  value,
});
const withValues = (spans: { start: Date; end: Date }[], values: (number | null)[]) => spans.map((span, i) => bucket(span, values[i]!));

describe('shiftBack and shiftedRange', () => {
  it('minutes and hours are exact durations, days and weeks calendar days', () => {
    expect(iso(shiftBack(ms('2001-03-01T00:10:00Z'), { amount: 15, unit: 'MINUTE' }))).toBe('2001-02-28T23:55:00.000Z');
    expect(iso(shiftBack(ms('2001-03-01T05:00:00Z'), { amount: 6, unit: 'HOUR' }))).toBe('2001-02-28T23:00:00.000Z');
    expect(iso(shiftBack(ms('2001-03-01T05:00:00Z'), { amount: 1, unit: 'DAY' }))).toBe('2001-02-28T05:00:00.000Z');
    expect(iso(shiftBack(ms('2001-03-05T00:00:00Z'), { amount: 1, unit: 'WEEK' }))).toBe('2001-02-26T00:00:00.000Z');
  });

  it('months, quarters and years are calendar units, clamped to the end of a shorter month', () => {
    expect(iso(shiftBack(ms('2001-03-01T00:00:00Z'), { amount: 1, unit: 'MONTH' }))).toBe('2001-02-01T00:00:00.000Z');
    expect(iso(shiftBack(ms('2001-03-31T12:00:00Z'), { amount: 1, unit: 'MONTH' }))).toBe('2001-02-28T12:00:00.000Z');
    expect(iso(shiftBack(ms('2004-03-31T00:00:00Z'), { amount: 1, unit: 'MONTH' }))).toBe('2004-02-29T00:00:00.000Z');
    expect(iso(shiftBack(ms('2001-05-31T00:00:00Z'), { amount: 1, unit: 'QUARTER' }))).toBe('2001-02-28T00:00:00.000Z');
    expect(iso(shiftBack(ms('2004-02-29T00:00:00Z'), { amount: 1, unit: 'YEAR' }))).toBe('2003-02-28T00:00:00.000Z');
    expect(iso(shiftBack(ms('2001-01-15T00:00:00Z'), { amount: 13, unit: 'MONTH' }))).toBe('1999-12-15T00:00:00.000Z');
  });

  it('in a time zone, a day back keeps the local time across a daylight-saving change', () => {
    // Paris moved to summer time on 2024-03-31: noon that day is 10:00Z, noon the day before 11:00Z.
    expect(iso(shiftBack(ms('2024-03-31T10:00:00Z'), { amount: 1, unit: 'DAY' }, 'Europe/Paris'))).toBe('2024-03-30T11:00:00.000Z');
    expect(iso(shiftBack(ms('2024-03-31T10:00:00Z'), { amount: 1, unit: 'DAY' }))).toBe('2024-03-30T10:00:00.000Z');
    expect(iso(shiftBack(ms('2024-03-31T10:00:00Z'), { amount: 24, unit: 'HOUR' }, 'Europe/Paris'))).toBe('2024-03-30T10:00:00.000Z');
    expect(() => shiftBack(0, { amount: 1, unit: 'DAY' }, 'Nowhere/Atlantis')).toThrow(/time zone/);
  });

  it('fixed units agree with plain arithmetic and calendar months with calendar fields (UTC)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) }), fc.integer({ min: 1, max: 1000 }), (t, amount) => {
        t -= t % 60_000;
        expect(shiftBack(t, { amount, unit: 'DAY' })).toBe(t - amount * 86_400_000);
        expect(shiftBack(t, { amount, unit: 'WEEK' })).toBe(t - amount * 604_800_000);
        const d = new Date(t);
        const month = d.getUTCMonth() - amount;
        const lastDay = new Date(Date.UTC(d.getUTCFullYear(), month + 1, 0)).getUTCDate();
        const expected = Date.UTC(d.getUTCFullYear(), month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes());
        expect(shiftBack(t, { amount, unit: 'MONTH' })).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('shifts both ends of a range, and refuses one that reaches before 1970', () => {
    expect(shiftedRange({ from: ms('2001-03-01T00:00:00Z'), to: ms('2001-03-31T00:00:00Z') }, { amount: 1, unit: 'MONTH' })).toEqual({
      from: ms('2001-02-01T00:00:00Z'),
      to: ms('2001-02-28T00:00:00Z'),
    });
    expect(
      codeOf(() => shiftedRange({ from: ms('1970-06-01T00:00:00Z'), to: ms('1970-07-01T00:00:00Z') }, { amount: 1, unit: 'YEAR' })),
    ).toBe('INVALID_ARGUMENT');
  });

  it('validateOffset refuses amounts outside 1..1000, fractions and unknown units', () => {
    for (const offset of [
      { amount: 0, unit: 'DAY' },
      { amount: 1001, unit: 'DAY' },
      { amount: 1.5, unit: 'DAY' },
      { amount: 1, unit: 'FORTNIGHT' },
    ]) {
      expect(codeOf(() => validateOffset(offset as Offset))).toBe('INVALID_ARGUMENT');
    }
    expect(validateOffset({ amount: 1000, unit: 'YEAR' })).toEqual({ amount: 1000, unit: 'YEAR' });
  });
});

describe('compareWithPrevious', () => {
  it('MONTH shifted by one month: each month against the month before', () => {
    const current = months(2001, 0, 3); // Jan, Feb, Mar 2001
    const previous = months(2000, 11, 3); // Dec 2000, Jan, Feb 2001
    const out = compareWithPrevious(
      { spans: current, buckets: withValues(current, [12, 15, null]) },
      { spans: previous, buckets: withValues(previous, [10, 12, 15]) },
    );
    expect(
      out.map((b) => [
        iso(b.start.getTime()),
        b.value,
        b.previousStart && iso(b.previousStart.getTime()),
        b.previous,
        b.change,
        b.relativeChange,
      ]),
    ).toEqual([
      ['2001-01-01T00:00:00.000Z', 12, '2000-12-01T00:00:00.000Z', 10, 2, 0.2],
      ['2001-02-01T00:00:00.000Z', 15, '2001-01-01T00:00:00.000Z', 12, 3, 0.25],
      ['2001-03-01T00:00:00.000Z', null, '2001-02-01T00:00:00.000Z', 15, null, null],
    ]);
  });

  it('DAY list of March against February: the last three days have no earlier bucket', () => {
    const current = days(2001, 2, 1, 31);
    const previous = days(2001, 1, 1, 28);
    const out = compareWithPrevious(
      {
        spans: current,
        buckets: withValues(
          current,
          current.map((_, i) => i),
        ),
      },
      {
        spans: previous,
        buckets: withValues(
          previous,
          previous.map((_, i) => 2 * i),
        ),
      },
    );
    expect(out[27]).toMatchObject({ previous: 54, change: -27, previousStart: new Date('2001-02-28T00:00:00Z') });
    expect(out.slice(28).map((b) => [b.previous, b.previousStart, b.change, b.relativeChange])).toEqual([
      [null, null, null, null],
      [null, null, null, null],
      [null, null, null, null],
    ]);
  });

  it('NONE lists: aligned by position in the range, unlisted buckets have no value', () => {
    const current = days(2001, 0, 8, 4);
    const previous = days(2001, 0, 1, 4);
    const out = compareWithPrevious(
      { spans: current, buckets: [bucket(current[1]!, 5), bucket(current[3]!, 8)] },
      {
        spans: previous,
        buckets: [
          { start: previous[1]!.start, value: 4 },
          { start: previous[2]!.start, value: 1 },
        ],
      },
    );
    expect(out.map((b) => [b.start.getUTCDate(), b.previousStart?.getUTCDate(), b.previous, b.change])).toEqual([
      [9, 2, 4, 1],
      [11, 4, null, null],
    ]);
  });

  it('relative change: by the magnitude of the previous value, null from 0', () => {
    const spans = days(2001, 0, 1, 3);
    const earlier = days(2000, 11, 29, 3);
    const out = compareWithPrevious(
      { spans, buckets: withValues(spans, [-5, 3, 0]) },
      { spans: earlier, buckets: withValues(earlier, [-10, 0, 4]) },
    );
    expect(out.map((b) => [b.change, b.relativeChange])).toEqual([
      [5, 0.5],
      [3, null],
      [-4, -1],
    ]);
  });

  it('keeps the buckets and their other properties', () => {
    const spans = days(2001, 0, 1, 1);
    const [out] = compareWithPrevious({ spans, buckets: [bucket(spans[0]!, 1)] }, { spans, buckets: [] });
    expect(out).toEqual({ ...bucket(spans[0]!, 1), previous: null, previousStart: spans[0]!.start, change: null, relativeChange: null });
  });

  it('refuses buckets that are not among their period spans', () => {
    const spans = days(2001, 0, 1, 2);
    const stray = bucket(days(2001, 0, 5, 1)[0]!, 1);
    expect(() => compareWithPrevious({ spans, buckets: [stray] }, { spans, buckets: [] })).toThrow(/current period/);
    expect(() => compareWithPrevious({ spans, buckets: [] }, { spans, buckets: [stray] })).toThrow(/earlier period/);
  });

  it('against a reference alignment by index over full lists', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: -50, max: 50 })), { minLength: 1, maxLength: 40 }),
        fc.array(fc.option(fc.integer({ min: -50, max: 50 })), { maxLength: 40 }),
        (now, before) => {
          const spans = days(2001, 5, 1, now.length);
          const earlierSpans = days(2000, 5, 1, before.length);
          const out = compareWithPrevious(
            { spans, buckets: withValues(spans, now) },
            { spans: earlierSpans, buckets: withValues(earlierSpans, before) },
          );
          out.forEach((b, i) => {
            const p = i < before.length ? before[i]! : null;
            const v = now[i]!;
            expect(b.previous).toBe(p);
            expect(b.previousStart).toEqual(i < before.length ? earlierSpans[i]!.start : null);
            expect(b.change).toBe(v === null || p === null ? null : v - p);
            expect(b.relativeChange).toBe(v === null || p === null || p === 0 ? null : (v - p) / Math.abs(p));
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
