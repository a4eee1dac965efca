import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodedError } from '../../src/errors.ts';
import { fillBuckets } from '../../src/query/fill.ts';
import type { Bucket } from '../../src/query/shape.ts';
import { transformBuckets, transformValues, type Statistic, type Transform } from '../../src/query/transforms.ts';

const HOUR = 3_600_000;

/** A bucket `[start, end)` whose every statistic is `x` (count: `n`, or 0 when x is null). */
function bucket(start: number, end: number, x: number | null, n = 1): Bucket {
  return {
    start: new Date(start),
    end: new Date(end),
    partial: false,
    localStart: new Date(start).toISOString(),
    count: x === null ? 0 : n,
    sum: x,
    min: x,
    max: x,
    avg: x,
    variance: x,
    stddev: x,
    sampleStddev: x,
    first: null,
    last: null,
    sketch: null,
    increase: x,
    rate: x,
  };
}

/** Consecutive hour buckets from 2001-01-01 with these values of every statistic. */
const hours = (values: (number | null)[]) => {
  const t0 = Date.UTC(2001, 0, 1);
  return values.map((x, i) => bucket(t0 + i * HOUR, t0 + (i + 1) * HOUR, x));
};
const RANGE = { from: Date.UTC(2001, 0, 1), to: Date.UTC(2002, 0, 1) };
const run = (buckets: Bucket[], transform: Transform, statistic: Statistic = 'avg', range = RANGE) =>
  transformValues(buckets, { statistic, transform, range });

describe('transformBuckets: hand-written examples', () => {
  it('none: the statistic itself', () => {
    expect(run(hours([1, null, 3]), { kind: 'none' })).toEqual([1, null, 3]);
    expect(run(hours([1, null, 3]), { kind: 'none' }, 'count')).toEqual([1, 0, 1]);
  });

  it('rate: per second of the part of each bucket inside the range; a month by its true length', () => {
    expect(run(hours([3600, null, 7200]), { kind: 'rate' })).toEqual([1, null, 2]);
    // February 2001 (28 days) and March (31 days), each with a sum of 2,419,200 and 2,678,400.
    const feb = bucket(Date.UTC(2001, 1, 1), Date.UTC(2001, 2, 1), 2_419_200);
    const mar = bucket(Date.UTC(2001, 2, 1), Date.UTC(2001, 3, 1), 2_678_400);
    expect(run([feb, mar], { kind: 'rate' }, 'sum')).toEqual([1, 1]);
    // Range 00:30 to 02:15: the first hour counts 1,800 s, the last 900 s.
    const t0 = Date.UTC(2001, 0, 1);
    const range = { from: t0 + 1_800_000, to: t0 + 2 * HOUR + 900_000 };
    expect(run(hours([1800, 3600, 900]), { kind: 'rate' }, 'sum', range)).toEqual([1, 1, 1]);
    // Of count: readings per second; an empty bucket's count is a real 0.
    expect(run([bucket(t0, t0 + 60_000, 5, 120), bucket(t0 + 60_000, t0 + 120_000, null)], { kind: 'rate' }, 'count')).toEqual([2, 0]);
  });

  it('difference: null at the first bucket, next to an empty one and across a gap', () => {
    expect(run(hours([5, 8, 6, null, 4, 10]), { kind: 'difference' })).toEqual([null, 3, -2, null, null, 6]);
    // A NONE list: 02:00 is missing, so 03:00 has no adjacent predecessor.
    const [a, b, , d, e] = hours([1, 2, 99, 4, 7]);
    expect(run([a!, b!, d!, e!], { kind: 'difference' })).toEqual([null, 1, null, 3]);
    // count: empty buckets are zeros.
    expect(run(hours([5, null, 6]), { kind: 'difference' }, 'count')).toEqual([null, -1, 1]);
  });

  it('cumulativeSum: running total from the range start, empty buckets add nothing', () => {
    expect(run(hours([null, 2, 3, null, -1]), { kind: 'cumulativeSum' }, 'sum')).toEqual([0, 2, 5, 5, 4]);
  });

  it('movingAverage: mean of the last `window` non-null values, partial at the start, empty buckets stay empty', () => {
    expect(run(hours([1, 2, null, 3, 4, 5]), { kind: 'movingAverage', window: 3 })).toEqual([1, 1.5, null, 2, 3, 4]);
    expect(run(hours([1, 2, 3]), { kind: 'movingAverage', window: 1 })).toEqual([1, 2, 3]);
    // A large value leaving the window leaves no rounding error behind.
    expect(run(hours([1e17, 1, 1, 1, 0.1]), { kind: 'movingAverage', window: 2 })).toEqual([1e17, (1e17 + 1) / 2, 1, 1, 0.55]);
  });

  it('reads the values as filled: a filled value is a value', () => {
    const t0 = Date.UTC(2001, 0, 1);
    const spans = [0, 1, 2, 3].map((i) => ({
      start: new Date(t0 + i * HOUR),
      end: new Date(t0 + (i + 1) * HOUR),
      partial: false,
      localStart: new Date(t0 + i * HOUR).toISOString(),
    }));
    const real = [bucket(t0, t0 + HOUR, 10), bucket(t0 + 3 * HOUR, t0 + 4 * HOUR, 40)];
    const cumulative = (mode: 'NULL' | 'ZERO' | 'PREVIOUS' | 'LINEAR') =>
      run(fillBuckets(spans, real, mode), { kind: 'cumulativeSum' }, 'sum');
    expect(cumulative('NULL')).toEqual([10, 10, 10, 50]);
    expect(cumulative('ZERO')).toEqual([10, 10, 10, 50]);
    expect(cumulative('PREVIOUS')).toEqual([10, 20, 30, 70]);
    expect(cumulative('LINEAR')).toEqual([10, 30, 60, 100]);
    expect(run(fillBuckets(spans, real, 'ZERO'), { kind: 'difference' }, 'sum')).toEqual([null, -10, 0, 40]);
  });

  it('transformBuckets: the filled buckets, each with its value', () => {
    const filled = hours([7, null, 9]).map((b) => ({ ...b, filled: b.count === 0 }));
    const out = transformBuckets(filled, { statistic: 'max', transform: { kind: 'difference' }, range: RANGE });
    expect(out).toEqual(filled.map((b, i) => ({ ...b, value: [null, null, null][i] })));
    expect(transformBuckets(filled, { statistic: 'max', transform: { kind: 'cumulativeSum' }, range: RANGE }).map((b) => b.value)).toEqual([
      7, 7, 16,
    ]);
  });

  it('refuses a moving-average window outside 1..1000 or not whole, with INVALID_ARGUMENT', () => {
    for (const window of [0, 1001, 2.5, Number.NaN]) {
      let error: unknown;
      try {
        run(hours([1]), { kind: 'movingAverage', window });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(CodedError);
      expect((error as CodedError).code).toBe('INVALID_ARGUMENT');
    }
    expect(run(hours([1]), { kind: 'movingAverage', window: 1000 })).toEqual([1]);
  });
});

/** Reference transforms: plain loops, the definitions written out. */
function reference(
  buckets: Bucket[],
  statistic: 'count' | 'sum' | 'avg' | 'sampleStddev',
  transform: Transform,
  range: { from: number; to: number },
) {
  const x = buckets.map((b) => b[statistic]);
  return buckets.map((b, i) => {
    const v = x[i]!;
    switch (transform.kind) {
      case 'none':
        return v;
      case 'rate': {
        const from = Math.max(b.start.getTime(), range.from);
        const to = Math.min(b.end.getTime(), range.to);
        return v === null ? null : v / ((to - from) / 1000);
      }
      case 'difference':
        if (i === 0 || v === null || x[i - 1] === null || buckets[i - 1]!.end.getTime() !== b.start.getTime()) return null;
        return v - x[i - 1]!;
      case 'cumulativeSum': {
        let total = 0;
        for (let j = 0; j <= i; j++) total += x[j] ?? 0;
        return total;
      }
      case 'movingAverage': {
        if (v === null) return null;
        const last: number[] = [];
        for (let j = i; j >= 0 && last.length < transform.window; j--) if (x[j] !== null) last.push(x[j]!);
        return last.reduce((s, y) => s + y, 0) / last.length;
      }
    }
    return null;
  });
}

const transformArbitrary = fc.oneof(
  fc.constant<Transform>({ kind: 'none' }),
  fc.constant<Transform>({ kind: 'rate' }),
  fc.constant<Transform>({ kind: 'difference' }),
  fc.constant<Transform>({ kind: 'cumulativeSum' }),
  fc.integer({ min: 1, max: 12 }).map<Transform>((window) => ({ kind: 'movingAverage', window })),
);

/** Random hour lists with gaps (unlisted buckets) and empty buckets, and a range that may cut the first and last. */
const listArbitrary = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constant(null), fc.integer({ min: -1e6, max: 1e6 }), fc.double({ min: -1e6, max: 1e6, noNaN: true })),
      fc.boolean(),
    ),
    {
      maxLength: 60,
    },
  )
  .chain((cells) =>
    fc.record({
      cells: fc.constant(cells),
      cutStart: fc.integer({ min: 0, max: 59 }),
      cutEnd: fc.integer({ min: 0, max: 59 }),
    }),
  );

describe('transformBuckets: against a reference, random lists', () => {
  it('every transform and statistic', () => {
    fc.assert(
      fc.property(
        listArbitrary,
        transformArbitrary,
        fc.constantFrom('count', 'sum', 'avg', 'sampleStddev' as const),
        ({ cells, cutStart, cutEnd }, transform, statistic) => {
          const t0 = Date.UTC(2001, 0, 1);
          const buckets = cells.flatMap(([x, listed], i) => (listed ? [bucket(t0 + i * HOUR, t0 + (i + 1) * HOUR, x, 3)] : []));
          // A range that cuts into the first and last hours (a single hour is not cut, lest the range be empty).
          const cut = cells.length > 1 ? 60_000 : 0;
          const range = { from: t0 + cutStart * cut, to: t0 + cells.length * HOUR - cutEnd * cut };
          const actual = transformValues(buckets, { statistic, transform, range });
          const expected = reference(buckets, statistic, transform, range);
          expect(actual).toHaveLength(expected.length);
          actual.forEach((a, i) => {
            const e = expected[i]!;
            if (e === null || a === null) expect(a).toBe(e);
            // Sums of up to 60 values of magnitude 1e6: absolute tolerance scaled to that.
            else expect(Math.abs(a - e)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(e)) + 1e-6);
          });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('fill NONE: transforming the NONE list equals transforming the NULL list and dropping empty buckets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: -100, max: 100 })), { minLength: 1, maxLength: 40 }),
        transformArbitrary,
        (cells, transform) => {
          const t0 = Date.UTC(2001, 0, 1);
          const spans = cells.map((_, i) => ({
            start: new Date(t0 + i * HOUR),
            end: new Date(t0 + (i + 1) * HOUR),
            partial: false,
            localStart: new Date(t0 + i * HOUR).toISOString(),
          }));
          const real = cells.flatMap((x, i) => (x === null ? [] : [bucket(t0 + i * HOUR, t0 + (i + 1) * HOUR, x)]));
          const range = { from: t0, to: t0 + cells.length * HOUR };
          const options = { statistic: 'sum' as const, transform, range };
          const direct = transformBuckets(fillBuckets(spans, real, 'NONE'), options);
          const viaNull = transformBuckets(fillBuckets(spans, real, 'NULL'), options).filter((b) => b.count > 0);
          expect(direct).toEqual(viaNull);
        },
      ),
      { numRuns: 500 },
    );
  });
});
