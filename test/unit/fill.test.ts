import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fillBuckets, type FillMode } from '../../src/query/fill.ts';
import type { Bucket } from '../../src/query/shape.ts';

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);
const STATS = ['sum', 'min', 'max', 'avg', 'variance', 'stddev', 'sampleStddev'] as const;

/** Hour spans starting at `first` (ISO), `count` of them. */
function hourSpans(first: string, count: number) {
  const t0 = Date.parse(first);
  return Array.from({ length: count }, (_, i) => ({
    start: new Date(t0 + i * HOUR),
    end: new Date(t0 + (i + 1) * HOUR),
    partial: false,
    localStart: new Date(t0 + i * HOUR).toISOString(),
  }));
}

/** Month spans from (year, month0), `count` of them, from calendar fields. */
function monthSpans(year: number, month0: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    start: new Date(Date.UTC(year, month0 + i, 1)),
    end: new Date(Date.UTC(year, month0 + i + 1, 1)),
    partial: false,
    localStart: new Date(Date.UTC(year, month0 + i, 1)).toISOString(),
  }));
}

/** A bucket with readings `values`, statistics computed here by plain loops. */
function real(span: { start: Date; end: Date }, values: number[]): Bucket {
  const n = values.length;
  let sum = 0;
  for (const v of values) sum += v;
  const avg = sum / n;
  let squares = 0;
  for (const v of values) squares += (v - avg) ** 2;
  return {
    start: span.start,
    end: span.end,
    partial: false,
    localStart: span.start.toISOString(),
    count: n,
    sum,
    min: Math.min(...values),
    max: Math.max(...values),
    avg,
    variance: squares / n,
    stddev: Math.sqrt(squares / n),
    sampleStddev: n > 1 ? Math.sqrt(squares / (n - 1)) : null,
    first: null,
    last: null,
    sketch: null,
    increase: null,
    rate: null,
  };
}

const pick = (buckets: { count: number; avg: number | null; filled: boolean }[]) => buckets.map((b) => [b.count, b.avg, b.filled]);

describe('fillBuckets: hand-written examples', () => {
  // Six hours; readings at 19:00 (avg 10) and 22:00 (avg 40).
  const spans = hourSpans('2001-01-12T18:00:00Z', 6);
  const buckets = [real(spans[1]!, [10]), real(spans[4]!, [30, 50])];

  it('NONE lists only buckets with readings', () => {
    const out = fillBuckets(spans, buckets, 'NONE');
    expect(out.map((b) => b.start.toISOString())).toEqual(['2001-01-12T19:00:00.000Z', '2001-01-12T22:00:00.000Z']);
    expect(out.every((b) => !b.filled)).toBe(true);
  });

  it('NULL lists every bucket, empty ones with count 0 and null statistics, marked filled', () => {
    const out = fillBuckets(spans, buckets, 'NULL');
    expect(pick(out)).toEqual([
      [0, null, true],
      [1, 10, false],
      [0, null, true],
      [0, null, true],
      [2, 40, false],
      [0, null, true],
    ]);
    expect(out[0]).toEqual({
      start: at('2001-01-12T18:00:00Z'),
      end: at('2001-01-12T19:00:00Z'),
      partial: false,
      localStart: '2001-01-12T18:00:00.000Z',
      count: 0,
      sum: null,
      min: null,
      max: null,
      avg: null,
      variance: null,
      stddev: null,
      sampleStddev: null,
      first: null,
      last: null,
      sketch: null,
      increase: null,
      rate: null,
      filled: true,
    });
  });

  it('ZERO gives every statistic but count the value 0', () => {
    const out = fillBuckets(spans, buckets, 'ZERO');
    expect(out[2]).toEqual({
      start: at('2001-01-12T20:00:00Z'),
      end: at('2001-01-12T21:00:00Z'),
      partial: false,
      localStart: '2001-01-12T20:00:00.000Z',
      count: 0,
      sum: 0,
      min: 0,
      max: 0,
      avg: 0,
      variance: 0,
      stddev: 0,
      sampleStddev: 0,
      first: null,
      last: null,
      sketch: null,
      increase: 0,
      rate: 0,
      filled: true,
    });
    expect(pick(out)).toEqual([
      [0, 0, true],
      [1, 10, false],
      [0, 0, true],
      [0, 0, true],
      [2, 40, false],
      [0, 0, true],
    ]);
  });

  it('PREVIOUS carries first, last and the sketch forward too; ZERO and LINEAR leave them null', () => {
    const reading = { t: Date.parse('2001-01-12T19:20:00Z'), v: 10 };
    const sketch = new Map([['p1', 1]]);
    const withReadings = [{ ...real(spans[1]!, [10]), first: reading, last: reading, sketch }, real(spans[4]!, [30, 50])];
    const previous = fillBuckets(spans, withReadings, 'PREVIOUS');
    expect([previous[0]!.last, previous[2]!.first, previous[3]!.last, previous[3]!.sketch]).toEqual([null, reading, reading, sketch]);
    for (const mode of ['ZERO', 'LINEAR', 'NULL'] as const) {
      const filled = fillBuckets(spans, withReadings, mode)[2]!;
      expect([filled.first, filled.last, filled.sketch]).toEqual([null, null, null]);
    }
  });

  it('PREVIOUS carries the last bucket with readings forward (null before the first), count stays 0', () => {
    const out = fillBuckets(spans, buckets, 'PREVIOUS');
    expect(pick(out)).toEqual([
      [0, null, true],
      [1, 10, false],
      [0, 10, true],
      [0, 10, true],
      [2, 40, false],
      [0, 40, true],
    ]);
    // sampleStddev of a one-reading bucket is null and is carried as null.
    expect(out[3]).toMatchObject({ count: 0, sum: 10, min: 10, max: 10, variance: 0, stddev: 0, sampleStddev: null });
    expect(out[5]).toMatchObject({ count: 0, sum: 80, min: 30, max: 50, variance: 100, stddev: 10 });
  });

  it('LINEAR interpolates each statistic in time between the neighbours, null at the ends', () => {
    const out = fillBuckets(spans, buckets, 'LINEAR');
    expect(pick(out)).toEqual([
      [0, null, true],
      [1, 10, false],
      [0, 20, true],
      [0, 30, true],
      [2, 40, false],
      [0, null, true],
    ]);
    // 20:00 is a third of the way from 19:00 to 22:00.
    const expected = { sum: 10 + 70 / 3, min: 10 + 20 / 3, max: 10 + 40 / 3, variance: 100 / 3, stddev: 10 / 3 };
    for (const [stat, value] of Object.entries(expected)) expect(out[2]![stat as keyof typeof expected]).toBeCloseTo(value, 12);
    // Interpolated stddev is not the square root of the interpolated variance.
    expect(out[2]!.stddev).not.toBeCloseTo(Math.sqrt(out[2]!.variance!), 3);
    // A neighbour's null (sampleStddev of one reading) gives null.
    expect(out[2]!.sampleStddev).toBeNull();
  });

  it('LINEAR weighs calendar months by their true start times', () => {
    // January, February, March 2001; readings in January (avg 0) and March (avg 59).
    const spans = monthSpans(2001, 0, 3);
    const out = fillBuckets(spans, [real(spans[0]!, [0]), real(spans[2]!, [59])], 'LINEAR');
    // Feb 1 is 31 days after Jan 1, Mar 1 is 59 days after it.
    expect(out[1]!.avg).toBeCloseTo(31, 12);
    expect(out[1]).toMatchObject({ start: at('2001-02-01T00:00:00Z'), end: at('2001-03-01T00:00:00Z'), count: 0, filled: true });
  });

  it('a group with no readings gets its full list', () => {
    for (const mode of ['NULL', 'ZERO', 'PREVIOUS', 'LINEAR'] as const) {
      const out = fillBuckets(spans, [], mode);
      expect(out).toHaveLength(6);
      expect(out.every((b) => b.filled && b.count === 0 && b.avg === (mode === 'ZERO' ? 0 : null))).toBe(true);
    }
    expect(fillBuckets(spans, [], 'NONE')).toEqual([]);
  });

  it('takes an already NULL-filled list as input (count 0 buckets are empty)', () => {
    const nullList = fillBuckets(spans, buckets, 'NULL');
    expect(fillBuckets(spans, nullList, 'LINEAR')).toEqual(fillBuckets(spans, buckets, 'LINEAR'));
  });

  it('refuses buckets that are not in the range, duplicates and unordered spans', () => {
    expect(() => fillBuckets(spans.slice(2), buckets, 'NULL')).toThrow(/not one of the range's buckets/);
    expect(() => fillBuckets(spans, [buckets[0]!, buckets[0]!], 'NULL')).toThrow(/two buckets/);
    expect(() => fillBuckets([...spans].reverse(), buckets, 'NULL')).toThrow(/increasing/);
  });
});

/** Reference fill, by plain searches over the spans. */
function referenceFill(spans: { start: Date; end: Date }[], buckets: Bucket[], mode: FillMode) {
  const find = (i: number) => buckets.find((b) => b.start.getTime() === spans[i]!.start.getTime() && b.count > 0);
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < spans.length; i++) {
    const own = find(i);
    if (own) {
      out.push({ ...own, filled: false });
      continue;
    }
    if (mode === 'NONE') continue;
    const row: Record<string, unknown> = { start: spans[i]!.start, end: spans[i]!.end, count: 0, filled: true };
    let before: Bucket | undefined;
    for (let j = i - 1; j >= 0 && !before; j--) before = find(j);
    let after: Bucket | undefined;
    for (let j = i + 1; j < spans.length && !after; j++) after = find(j);
    for (const stat of STATS) {
      if (mode === 'NULL') row[stat] = null;
      else if (mode === 'ZERO') row[stat] = 0;
      else if (mode === 'PREVIOUS') row[stat] = before ? before[stat] : null;
      else if (!before || !after || before[stat] === null || after[stat] === null) row[stat] = null;
      else {
        const t = spans[i]!.start.getTime();
        const ta = before.start.getTime();
        const tb = after.start.getTime();
        row[stat] = (before[stat]! * (tb - t) + after[stat]! * (t - ta)) / (tb - ta);
      }
    }
    out.push(row);
  }
  return out;
}

const close = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)));

describe('fillBuckets: against a reference, random lists', () => {
  it('every mode, fixed and calendar spans', () => {
    const value = fc.integer({ min: -1000, max: 1000 });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        fc.array(fc.tuple(fc.nat(), fc.array(value, { minLength: 1, maxLength: 5 })), { maxLength: 40 }),
        fc.constantFrom<FillMode>('NONE', 'NULL', 'ZERO', 'PREVIOUS', 'LINEAR'),
        (count, calendar, picks, mode) => {
          const spans = calendar ? monthSpans(1999, 10, count) : hourSpans('2001-01-01T00:00:00Z', count);
          const used = new Set<number>();
          const buckets: Bucket[] = [];
          for (const [position, values] of picks) {
            const i = position % count;
            if (used.has(i)) continue;
            used.add(i);
            buckets.push(real(spans[i]!, values));
          }
          const out = fillBuckets(spans, buckets, mode);
          const expected = referenceFill(spans, buckets, mode);
          expect(out).toHaveLength(expected.length);
          out.forEach((bucket, i) => {
            const want = expected[i]!;
            expect(bucket.start).toEqual(want.start);
            expect(bucket.end).toEqual(want.end);
            expect([bucket.count, bucket.filled]).toEqual([want.count, want.filled]);
            for (const stat of STATS) if (!close(bucket[stat], want[stat])) expect([stat, bucket[stat]]).toEqual([stat, want[stat]]);
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});
