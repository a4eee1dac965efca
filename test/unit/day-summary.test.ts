/**
 * The pure parts of day summaries: what a summary adds up (`summarizeDays`), which
 * queries and days summaries may answer (`summaryPlan`), and how rows of several reads
 * merge (`mergeRows`), and what merging summaries gives (`mergeSummaries`, against
 * `summarizeDays` of the union of their documents). Expected values are written out or added up by plain loops here.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sketchKey } from '../../src/model/sketch.ts';
import type { BucketQuery } from '../../src/query/buckets-pipeline.ts';
import { granularity } from '../../src/query/granularity.ts';
import { rankRows } from '../../src/query/ranking.ts';
import { mergeRows, summaryPlan, summarySketchRows } from '../../src/query/summaries.ts';
import {
  mergeSummaries,
  sketchesAnswer,
  SUMMARY_SKETCH_BINS_PER_DOCUMENT,
  SUMMARY_MAX_VALUES,
  summariesOfDay,
  summarizeDays,
  type DaySummary,
  type FieldSketches,
  type SummarizedDocument,
} from '../../src/documents/summaries.ts';
import { RAW_SKETCH_BITS } from '../../src/documents/series-day.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2001, 0, 1);

const stats = (values: number[]) => ({
  n: values.length,
  sum: values.reduce((a, b) => a + b, 0),
  sq: values.reduce((a, b) => a + b * b, 0),
  min: Math.min(...values),
  max: Math.max(...values),
});

/** The day sketches of `values` per field, counted by a plain loop: bin key (`sketchKey`) to count. */
const binsOf = (values: Record<string, number[]>): FieldSketches => {
  const sketches: FieldSketches = {};
  for (const [field, list] of Object.entries(values)) {
    if (list.length === 0) continue;
    const bins: Record<string, number> = {};
    for (const value of list) bins[sketchKey(value)] = (bins[sketchKey(value)] ?? 0) + 1;
    sketches[field] = bins;
  }
  return sketches;
};

/**
 * A series-day document of one reading per value of `delay` (one a minute from
 * midnight), in the raw form when `raw` (its readings' bins, the day level listed in
 * `kl` when `dayBit`), else in the slot form with its day sketch under `q.fields`.
 */
const sketchedDocument = (tags: Record<string, string>, delay: number[], raw: boolean, dayBit = true): SummarizedDocument => {
  const fields: SummarizedDocument['fields'] = delay.length === 0 ? {} : { delay: stats(delay) };
  const base = { metric: 'm', date: new Date(D0), tags, fields };
  if (!raw) return { ...base, q: { fields: binsOf({ delay }) } };
  return {
    ...base,
    r: delay.map((v, i) => ({ t: new Date(D0 + i * 60_000), f: { delay: v }, k: { delay: sketchKey(v) } })),
    kl: (dayBit ? RAW_SKETCH_BITS.day : 0) + RAW_SKETCH_BITS.hour,
  };
};

describe('summarizeDays', () => {
  it('adds up each tag value, the series lacking a key, and the totals, per metric and day', () => {
    const docs: SummarizedDocument[] = [
      { metric: 'm', date: new Date(D0), tags: { origin: 'A', dest: 'X' }, fields: { delay: stats([1, 2]), distance: stats([10]) } },
      { metric: 'm', date: new Date(D0), tags: { origin: 'A', dest: 'Y' }, fields: { delay: stats([5]) } },
      {
        metric: 'm',
        date: new Date(D0),
        tags: { dest: 'X' },
        fields: { delay: stats([-3]), distance: { n: 0, sum: 0, sq: 0, min: Infinity, max: -Infinity } },
      },
      { metric: 'm', date: new Date(D0 + DAY), tags: { origin: 'B' }, fields: { delay: stats([7]) } },
      { metric: 'other', date: new Date(D0), tags: { origin: 'A' }, fields: { delay: stats([100]) } },
    ];
    const summaries = summarizeDays(docs, 9);
    expect(summaries.map((summary) => summary._id).sort()).toEqual([`m:${D0}:9`, `m:${D0 + DAY}:9`, `other:${D0}:9`]);
    const first = summaries.find((summary) => summary._id === `m:${D0}:9`)!;
    expect(first).toMatchObject({ metric: 'm', f: 9, kind: 'whole', keys: ['dest', 'origin'], omitted: [] });
    expect(first.total).toEqual({ delay: stats([1, 2, 5, -3]), distance: stats([10]) });
    const value = (k: string, v: string | undefined) => first.values.find((entry) => entry.k === k && entry.v === v)?.s;
    expect(value('origin', 'A')).toEqual({ delay: stats([1, 2, 5]), distance: stats([10]) });
    expect(value('origin', undefined)).toEqual({ delay: stats([-3]) });
    expect(value('dest', 'X')).toEqual({ delay: stats([1, 2, -3]), distance: stats([10]) });
    expect(value('dest', 'Y')).toEqual({ delay: stats([5]) });
    expect(first.values).toHaveLength(4);
  });

  it(`leaves out a key with more than ${SUMMARY_MAX_VALUES} values in a day`, () => {
    const docs = Array.from({ length: SUMMARY_MAX_VALUES + 1 }, (_, i) => ({
      metric: 'cpu',
      date: new Date(D0),
      tags: { host: `h${i}`, region: i % 2 === 0 ? 'eu' : 'us' },
      fields: { used: stats([i]) },
    }));
    const [summary] = summarizeDays(docs, 3);
    expect(summary!.keys).toEqual(['region']);
    expect(summary!.omitted).toEqual(['host']);
    expect(summary!.values.map((entry) => entry.v).sort()).toEqual(['eu', 'us']);
  });

  it('summarizes a day of 150,000 series sharing one tag value', () => {
    // A fold may hold more series-days than a function call takes arguments.
    const docs = Array.from({ length: 150_000 }, (_, i) => sketchedDocument({ host: `h${i}`, region: 'eu' }, [i % 7], true));
    const [summary] = summarizeDays(docs, 1);
    expect(summary!.omitted).toEqual(['host']);
    expect(summary!.values).toEqual([{ k: 'region', v: 'eu', s: { delay: summary!.total.delay } }]);
    expect(summary!.total.delay!.n).toBe(150_000);
    expect(summary!.sketches!.values).toEqual([{ k: 'region', v: 'eu', q: binsOf({ delay: docs.map((_, i) => i % 7) }) }]);
  });

  it('adds up the day sketches of both forms per tag value and in total, as a plain loop bins the readings', () => {
    const docs = [
      sketchedDocument({ origin: 'A', dest: 'X' }, [1, 2, 2, -3], false),
      sketchedDocument({ origin: 'A', dest: 'Y' }, [2, 40], true),
      sketchedDocument({ dest: 'X' }, [0, 7], true),
      // A raw document whose metric sketched no day level then: it adds no bin.
      sketchedDocument({ origin: 'B' }, [5], true, false),
    ];
    const [summary] = summarizeDays(docs, 1);
    const sketches = summary!.sketches!;
    expect(sketches.omitted).toEqual([]);
    expect(sketches.total).toEqual(binsOf({ delay: [1, 2, 2, -3, 2, 40, 0, 7] }));
    const value = (k: string, v: string | undefined) => sketches.values.find((entry) => entry.k === k && entry.v === v)?.q;
    expect(value('origin', 'A')).toEqual(binsOf({ delay: [1, 2, 2, -3, 2, 40] }));
    expect(value('origin', undefined)).toEqual(binsOf({ delay: [0, 7] }));
    expect(value('origin', 'B')).toBeUndefined();
    expect(value('dest', 'X')).toEqual(binsOf({ delay: [1, 2, 2, -3, 0, 7] }));
    expect(value('dest', 'Y')).toEqual(binsOf({ delay: [2, 40] }));
    expect(sketches.values).toHaveLength(4);
  });

  it(`keeps the sketches of the keys with the fewest values while they fit ${SUMMARY_SKETCH_BINS_PER_DOCUMENT} bins a document`, () => {
    // 400 hosts, one document each of 70 readings in 70 bins: a budget of 25,600 bins;
    // the regions take 140 of them, the hosts would take 28,000.
    const docs = Array.from({ length: 400 }, (_, i) =>
      sketchedDocument(
        { host: `h${i}`, region: i % 2 === 0 ? 'eu' : 'us' },
        Array.from({ length: 70 }, (_, j) => 1.5 ** j),
        false,
      ),
    );
    const [summary] = summarizeDays(docs, 2);
    expect(summary!.keys).toEqual(['host', 'region']);
    expect(summary!.sketches).toMatchObject({ omitted: ['host'], documents: 400 });
    expect(summary!.sketches!.values.map((entry) => entry.v).sort()).toEqual(['eu', 'us']);
    expect(Object.values(summary!.sketches!.total.delay!).reduce((a, b) => a + b, 0)).toBe(400 * 70);
    // Of 60 readings in 60 bins each, the hosts take 24,000 bins, and fit after the regions' 124.
    const smaller = docs.map((doc, i) =>
      sketchedDocument(
        doc.tags,
        Array.from({ length: 60 }, (_, j) => 1.5 ** (j + (i % 3))),
        false,
      ),
    );
    const [fits] = summarizeDays(smaller, 3);
    expect(fits!.sketches!.omitted).toEqual([]);
    expect(fits!.sketches!.values).toHaveLength(402);
    expect(sketchesAnswer([summary!], 'region')).toBe(true);
    expect(sketchesAnswer([summary!], null)).toBe(true);
    expect(sketchesAnswer([summary!], 'host')).toBe(false);
    const unsketched: DaySummary = { ...summary!, sketches: undefined };
    expect(sketchesAnswer([summary!, unsketched], 'region')).toBe(false);
  });
});

describe('summaryPlan', () => {
  const base: BucketQuery = {
    scope: { metric: 'flights' },
    fields: ['delay'],
    from: D0,
    to: D0 + 3 * DAY,
    granularity: null,
    grouping: { by: 'tags', keys: ['origin'] },
  };

  it('answers whole UTC days of queries grouped or filtered by one key', () => {
    const all = [{ from: D0, to: D0 + 3 * DAY }];
    expect(summaryPlan(base)).toEqual({ key: 'origin', ranges: all });
    expect(summaryPlan({ ...base, grouping: { by: 'none' } })).toEqual({ key: null, ranges: all });
    expect(summaryPlan({ ...base, grouping: { by: 'none' }, scope: { metric: 'flights', where: [{ key: 'dest', in: ['X'] }] } })).toEqual({
      key: 'dest',
      ranges: all,
    });
    // A ragged range: only its inner whole days.
    expect(summaryPlan({ ...base, from: D0 + 3_600_000, to: D0 + 2 * DAY + 60_000 })?.ranges).toEqual([
      { from: D0 + DAY, to: D0 + 2 * DAY },
    ]);
    // Buckets of a day: one stretch, not one per bucket.
    expect(summaryPlan({ ...base, granularity: granularity('DAY') })?.ranges).toEqual(all);
    expect(summaryPlan({ ...base, granularity: granularity('MONTH') })?.ranges).toEqual(all);
    // The widest range a query may ask: worked out from its segments, not its days.
    const wide = summaryPlan({ ...base, from: Date.UTC(1970, 0, 1), to: Date.UTC(9999, 0, 1) });
    expect(wide?.ranges).toEqual([{ from: Date.UTC(1970, 0, 1), to: Date.UTC(9999, 0, 1) }]);
  });

  it('answers nothing of other queries', () => {
    expect(summaryPlan({ ...base, grouping: { by: 'tags', keys: ['origin', 'dest'] } })).toBeNull();
    expect(summaryPlan({ ...base, scope: { metric: 'flights', where: [{ key: 'dest', in: ['X'] }] } })).toBeNull();
    expect(summaryPlan({ ...base, scope: { series: ['s'] }, grouping: { by: 'series' } })).toBeNull();
    expect(summaryPlan({ ...base, firstLast: true })).toBeNull();
    expect(summaryPlan({ ...base, granularity: granularity('HOUR') })).toBeNull();
    expect(summaryPlan({ ...base, granularity: granularity('DAY'), timeZone: 'America/Chicago' })).toBeNull();
    expect(summaryPlan({ ...base, from: D0 + 3_600_000, to: D0 + DAY + 60_000 })).toBeNull();
  });
});

describe('summarySketchRows', () => {
  const query: BucketQuery = {
    scope: { metric: 'm' },
    fields: ['delay'],
    from: D0,
    to: D0 + 2 * DAY,
    granularity: granularity('DAY'),
    grouping: { by: 'tags', keys: ['origin'] },
  };
  const summaries = [
    summarizeDays([sketchedDocument({ origin: 'A' }, [1, 1, 3], false), sketchedDocument({}, [2], true)], 1)[0]!,
    { ...summarizeDays([sketchedDocument({ origin: 'A' }, [5], true)], 2)[0]!, date: new Date(D0 + DAY) },
  ];

  it('gives one row per bucket, group, field and bin of the summaries read, as the sketch pipeline keys its rows', () => {
    const rows = summarySketchRows(query, 'origin', summaries);
    const t0 = new Date(D0);
    const t1 = new Date(D0 + DAY);
    expect(rows).toEqual(
      expect.arrayContaining([
        { _id: { t: t0, g: { origin: 'A' }, f: 0, k: sketchKey(1) }, c: 2 },
        { _id: { t: t0, g: { origin: 'A' }, f: 0, k: sketchKey(3) }, c: 1 },
        { _id: { t: t0, g: {}, f: 0, k: sketchKey(2) }, c: 1 },
        { _id: { t: t1, g: { origin: 'A' }, f: 0, k: sketchKey(5) }, c: 1 },
      ]),
    );
    expect(rows).toHaveLength(4);
  });

  it('reads the totals of an ungrouped query and the filtered values of a filtered one, without a bucket for an aggregate', () => {
    const total = summarySketchRows({ ...query, granularity: null, grouping: { by: 'none' } }, null, summaries);
    const counts = new Map<string, number>();
    for (const row of total) counts.set(row._id.k, (counts.get(row._id.k) ?? 0) + row.c);
    expect(Object.fromEntries(counts)).toEqual(binsOf({ delay: [1, 1, 3, 2, 5] }).delay);
    expect(total.every((row) => row._id.t === undefined && row._id.g === undefined)).toBe(true);
    const filtered = summarySketchRows(
      { ...query, grouping: { by: 'none' }, scope: { metric: 'm', where: [{ key: 'origin', in: ['B', 'A'] }] } },
      'origin',
      summaries,
    );
    expect(filtered.reduce((sum, row) => sum + row.c, 0)).toBe(4);
  });
});

describe('mergeRows', () => {
  it('adds counts, sums and squares and combines minima and maxima of rows of the same bucket and group', () => {
    const t = new Date(D0);
    const rows = mergeRows(
      [
        { _id: { t, g: { origin: 'A' } }, n0: 2, sum0: 3, sq0: 5, min0: 1, max0: 2 },
        { _id: { t, g: { origin: 'B' } }, n0: 1, sum0: 4, sq0: 16, min0: 4, max0: 4 },
        { _id: { t: new Date(D0), g: { origin: 'A' } }, n0: 1, sum0: -3, sq0: 9, min0: -3, max0: -3 },
        { _id: { t, g: { origin: 'A' } }, n0: 0, sum0: 0, sq0: 0, min0: null, max0: null },
      ],
      1,
    );
    expect(rows).toEqual([
      { _id: { t, g: { origin: 'A' } }, n0: 3, sum0: 0, sq0: 14, min0: -3, max0: 2 },
      { _id: { t, g: { origin: 'B' } }, n0: 1, sum0: 4, sq0: 16, min0: 4, max0: 4 },
    ]);
  });
});

describe('summariesOfDay', () => {
  const date = new Date(D0);
  const summary = (f: number, kind: 'whole' | 'fold' | 'void', keys = ['origin']) => ({ _id: `${f}${kind}`, date, f, kind, keys });

  it('takes the newest whole summary the view sees and the fold summaries after it', () => {
    const day = [summary(1, 'whole'), summary(2, 'fold'), summary(5, 'whole'), summary(6, 'fold'), summary(7, 'fold'), summary(9, 'fold')];
    expect(summariesOfDay(day, 8, 'origin').map((s) => s._id)).toEqual(['5whole', '6fold', '7fold']);
    expect(summariesOfDay(day, 4, null).map((s) => s._id)).toEqual(['1whole', '2fold']);
    expect(summariesOfDay(day, 0, null)).toEqual([]);
  });

  it('takes none after a void as new as the whole one, without a whole one, or when one left the key out', () => {
    expect(summariesOfDay([summary(3, 'whole'), summary(3, 'void'), summary(4, 'fold')], 9, null)).toEqual([]);
    expect(summariesOfDay([summary(3, 'whole'), summary(4, 'void'), summary(6, 'whole')], 9, null).map((s) => s._id)).toEqual(['6whole']);
    expect(summariesOfDay([summary(3, 'fold'), summary(4, 'fold')], 9, null)).toEqual([]);
    expect(summariesOfDay([summary(3, 'whole'), summary(4, 'fold', ['dest'])], 9, 'origin')).toEqual([]);
    expect(summariesOfDay([summary(3, 'whole'), summary(4, 'fold', ['dest'])], 9, null)).toHaveLength(2);
  });
});

describe('rankRows', () => {
  const row = (g: Record<string, string>, n: number, sum: number, t?: number) => ({
    _id: t === undefined ? { g } : { t: new Date(t), g },
    n0: n,
    sum0: sum,
    sq0: 0,
    min0: n > 0 ? 0 : null,
    max0: n > 0 ? 0 : null,
  });
  const grouping = { by: 'tags', keys: ['origin'] } as const;

  it('keeps the first groups by the statistic, ties by tag value with a missing value first, groups without readings left out', () => {
    const rows = [
      row({ origin: 'B' }, 2, 10),
      row({ origin: 'A' }, 1, 5),
      row({}, 4, 20),
      row({ origin: 'C' }, 1, 9),
      row({ origin: 'D' }, 0, 0),
    ];
    const ranked = rankRows(rows, { orderBy: 'avg', direction: 'DESC', limit: 3 }, grouping);
    expect(ranked.map((r) => [r._id?.g, r._rank])).toEqual([
      [{ origin: 'C' }, 9],
      [{}, 5],
      [{ origin: 'A' }, 5],
    ]);
  });

  it('keeps every bucket of the kept groups, ranked by their totals over the range', () => {
    const rows = [row({ origin: 'A' }, 1, 1, D0), row({ origin: 'B' }, 3, 3, D0), row({ origin: 'A' }, 3, 3, D0 + DAY)];
    const ranked = rankRows(rows, { orderBy: 'count', direction: 'DESC', limit: 1 }, grouping);
    expect(ranked.map((r) => [r._id?.g, r._id?.t?.getTime(), r._rank])).toEqual([
      [{ origin: 'A' }, D0, 4],
      [{ origin: 'A' }, D0 + DAY, 4],
    ]);
  });
});

describe('mergeSummaries', () => {
  /** A summary with its values and keys in one order, to compare summaries built in different orders. */
  const byValue = (a: { k: string; v?: string }, b: { k: string; v?: string }) =>
    `${a.k}=${a.v ?? ''}`.localeCompare(`${b.k}=${b.v ?? ''}`);
  const normalized = (summary: DaySummary) => ({
    ...summary,
    values: [...summary.values].sort(byValue),
    ...(summary.sketches === undefined ? {} : { sketches: { ...summary.sketches, values: [...summary.sketches.values].sort(byValue) } }),
  });

  it('equals the summary of the union of the documents the summaries add up, for random documents split among summaries', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            origin: fc.option(fc.constantFrom('A', 'B', 'C'), { nil: undefined }),
            dest: fc.option(fc.constantFrom('X', 'Y'), { nil: undefined }),
            delay: fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 3 }),
            distance: fc.array(fc.integer({ min: 0, max: 900 }), { maxLength: 2 }),
            part: fc.integer({ min: 0, max: 3 }),
            raw: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        (rows) => {
          const docs = rows.map((row) => {
            const tags = {
              ...(row.origin === undefined ? {} : { origin: row.origin }),
              ...(row.dest === undefined ? {} : { dest: row.dest }),
            };
            // The delay sketched (in either form), the distance not.
            const sketched = sketchedDocument(tags, row.delay, row.raw);
            return {
              part: row.part,
              doc: {
                ...sketched,
                fields: { ...sketched.fields, ...(row.distance.length > 0 ? { distance: stats(row.distance) } : {}) },
              } satisfies SummarizedDocument,
            };
          });
          // Part 0 is the whole summary, the others the folds' after it.
          const parts = [0, 1, 2, 3]
            .map((part) => docs.filter((entry) => entry.part === part).map((entry) => entry.doc))
            .filter((part, i) => i === 0 || part.length > 0);
          const chosen = parts.flatMap((part, i) =>
            part.length === 0
              ? [
                  {
                    _id: `m:${D0}:${i + 1}`,
                    metric: 'm',
                    date: new Date(D0),
                    f: i + 1,
                    kind: 'whole' as const,
                    keys: [],
                    omitted: [],
                    total: {},
                    values: [],
                    sketches: { total: {}, values: [], omitted: [], documents: 0 },
                  },
                ]
              : summarizeDays(part, i + 1, () => (i === 0 ? 'whole' : 'fold')),
          );
          const expected = summarizeDays(
            docs.map((entry) => entry.doc),
            7,
          );
          expect(normalized(mergeSummaries(chosen, 7))).toEqual(normalized(expected[0]!));
        },
      ),
      { numRuns: 300 },
    );
  });

  it(`omits a key another summary omitted, or with more than ${SUMMARY_MAX_VALUES} values once merged`, () => {
    const many = (from: number, count: number): SummarizedDocument[] =>
      Array.from({ length: count }, (_, i) => ({
        metric: 'm',
        date: new Date(D0),
        tags: { host: `h${from + i}`, region: 'eu' },
        fields: { v: stats([i]) },
      }));
    const base = summarizeDays(many(0, 600), 1)[0]!;
    const fold = summarizeDays(many(600, 600), 2, () => 'fold')[0]!;
    expect([base.keys, fold.keys]).toEqual([
      ['host', 'region'],
      ['host', 'region'],
    ]);
    const merged = mergeSummaries([base, fold], 3);
    expect(merged).toMatchObject({ _id: `m:${D0}:3`, f: 3, kind: 'whole', keys: ['region'], omitted: ['host'] });
    expect(merged.total.v!.n).toBe(1200);
    expect(merged.values).toEqual([
      { k: 'region', v: 'eu', s: { v: stats([...Array.from({ length: 600 }, (_, i) => i), ...Array.from({ length: 600 }, (_, i) => i)]) } },
    ]);

    const omitting = summarizeDays(many(0, SUMMARY_MAX_VALUES + 1), 4, () => 'fold')[0]!;
    expect(omitting.omitted).toEqual(['host']);
    expect(mergeSummaries([summarizeDays(many(5_000, 2), 1)[0]!, omitting], 5)).toMatchObject({ keys: ['region'], omitted: ['host'] });
  });

  it('merges no sketches when a summary has none, and leaves out a key whose sketches a summary left out', () => {
    const base = summarizeDays([sketchedDocument({ origin: 'A' }, [1], false)], 1)[0]!;
    const fold = summarizeDays([sketchedDocument({ origin: 'B' }, [2], true)], 2, () => 'fold')[0]!;
    const { sketches: _left, ...unsketched } = fold;
    expect(mergeSummaries([base, unsketched], 3).sketches).toBeUndefined();
    const leftOut = { ...fold, sketches: { ...fold.sketches!, values: [], omitted: ['origin'] } };
    const merged = mergeSummaries([base, leftOut], 3);
    expect(merged.keys).toEqual(['origin']);
    expect(merged.sketches).toEqual({ total: binsOf({ delay: [1, 2] }), values: [], omitted: ['origin'], documents: 2 });
  });

  it('refuses summaries of different days or none', () => {
    const one = summarizeDays([{ metric: 'm', date: new Date(D0), tags: {}, fields: { v: stats([1]) } }], 1)[0]!;
    const other = summarizeDays([{ metric: 'm', date: new Date(D0 + DAY), tags: {}, fields: { v: stats([1]) } }], 2)[0]!;
    expect(() => mergeSummaries([one, other], 3)).toThrow(/one metric and day/);
    expect(() => mergeSummaries([], 3)).toThrow(/one metric and day/);
  });
});
