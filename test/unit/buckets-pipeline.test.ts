import type { Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { pipelineStages } from '../../src/documents/selection.ts';
import * as builders from '../../src/query/buckets-pipeline.ts';
import type { BucketQuery } from '../../src/query/buckets-pipeline.ts';

/** A builder's pipeline as the database runs it on stored documents: selection stages, then the rest. */
const bucketsPipeline = (query: BucketQuery) => pipelineStages(builders.bucketsPipeline(query));
const sketchPipeline = (query: BucketQuery) => pipelineStages(builders.sketchPipeline(query));
const counterPipeline = (query: BucketQuery) => pipelineStages(builders.counterPipeline(query));
import {
  bucketBoundaries,
  bucketStart,
  countBuckets,
  granularity,
  GRANULARITY_NAMES,
  type GranularityName,
} from '../../src/query/granularity.ts';
import { planDays } from '../../src/query/read-plan.ts';
import { planBucketSegments, planSegments } from '../../src/query/segments.ts';
import { parseLocalTime } from '../../src/query/zone.ts';

const at = (iso: string) => Date.parse(iso);
const stageNames = (stages: Document[]) => stages.map((stage) => Object.keys(stage)[0]);
const text = (stages: Document[]) => JSON.stringify(stages);

/**
 * The second `$match`'s test that a document of layout version 2 or later has readings in
 * `[from, to)` (January 2001 unless given), written out.
 */
const inSpan = (from = '2001-01-01T00:00:00Z', to = '2001-02-01T00:00:00Z') => ({
  $nor: [
    { v: { $gte: 2 }, last: { $lt: new Date(from) } },
    { v: { $gte: 2 }, first: { $gte: new Date(to) } },
  ],
});

const query = (over: Partial<BucketQuery>): BucketQuery => ({
  scope: { metric: 'flights' },
  fields: ['delay'],
  from: at('2001-01-01T00:00:00Z'),
  to: at('2001-02-01T00:00:00Z'),
  granularity: granularity('DAY'),
  grouping: { by: 'none' },
  ...over,
});

describe('bucketsPipeline', () => {
  it('a DAY query over whole days sums day totals: $match, $project of what it reads, $group, nothing unwound', () => {
    const stages = bucketsPipeline(query({}));
    expect(stages).toEqual([
      { $match: { metric: 'flights', date: { $gte: new Date('2001-01-01T00:00:00Z'), $lt: new Date('2001-02-01T00:00:00Z') } } },
      { $match: { 'fields.delay.n': { $gt: 0 }, ...inSpan() } },
      // Only what the $group reads: the day and the field's day totals (no hours, no other fields, no sketches).
      { $project: { _id: 0, date: 1, 'fields.delay': 1 } },
      {
        $group: {
          _id: { t: '$date' },
          n0: { $sum: '$fields.delay.n' },
          sum0: { $sum: '$fields.delay.sum' },
          min0: { $min: '$fields.delay.min' },
          max0: { $max: '$fields.delay.max' },
          sq0: { $sum: '$fields.delay.sq' },
        },
      },
    ]);
  });

  it('MONTH, WEEK, QUARTER and YEAR over whole days read day totals only', () => {
    for (const name of ['MONTH', 'WEEK', 'QUARTER', 'YEAR'] as const) {
      const stages = bucketsPipeline(query({ granularity: granularity(name) }));
      expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$group']);
      expect(text(stages)).not.toContain('hours');
    }
  });

  it('an HOUR query reads hour slots and never minutes', () => {
    const stages = bucketsPipeline(query({ granularity: granularity('HOUR') }));
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$project', '$unwind', '$group']);
    expect(text(stages)).toContain('$hours');
    expect(text(stages)).not.toContain('minutes');
  });

  it('a MINUTE query reads minute slots of the hours in range', () => {
    const stages = bucketsPipeline(query({ granularity: granularity('MINUTE'), to: at('2001-01-01T03:00:00Z') }));
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$project', '$unwind', '$group']);
    expect(text(stages)).toContain('$$this.v.minutes');
    // A slot's start, or a raw reading's minute; floored to the bucket's minute.
    const minuteOfReading = { $let: { vars: { ms: { $toLong: '$slot.t' } }, in: { $subtract: ['$$ms', { $mod: ['$$ms', 60_000] }] } } };
    expect(stages[5]?.$group._id.t).toEqual({
      $toDate: {
        $let: { vars: { t: { $ifNull: ['$slot.time', minuteOfReading] } }, in: { $subtract: ['$$t', { $mod: ['$$t', 60_000] }] } },
      },
    });
    // A raw document's readings of the range (one plan: the day's bounds as dates) that hold the field.
    expect(stages[3]?.$project.slot.$let.in.$cond[1]).toEqual({
      $filter: {
        input: '$r',
        as: 'r',
        cond: {
          $and: [
            { $and: [{ $gte: ['$$r.t', new Date('2001-01-01T00:00:00Z')] }, { $lt: ['$$r.t', new Date('2001-01-01T03:00:00Z')] }] },
            { $isNumber: '$$r.f.delay' },
          ],
        },
      },
    });
  });

  it('a DAY query over a ragged range reads the edges from hour and minute slots: one plan per kind of day, chosen by date', () => {
    const from = at('2001-01-05T12:07:00Z');
    const to = at('2001-01-08T03:30:00Z');
    const stages = bucketsPipeline(query({ from, to }));
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$project', '$unwind', '$group']);
    expect(stages[0]?.$match.date).toEqual({ $gte: new Date('2001-01-05T00:00:00Z'), $lt: new Date('2001-01-08T03:30:00Z') });
    const D = 86_400_000;
    const H = 3_600_000;
    expect(planDays(planSegments(from, to, 'day'))).toEqual([
      {
        from: at('2001-01-05T00:00:00Z'),
        to: at('2001-01-06T00:00:00Z'),
        sections: null,
        pieces: [
          { level: 'minute', from: 12 * H + 7 * 60_000, to: 13 * H },
          { level: 'hour', from: 13 * H, to: D },
        ],
      },
      { from: at('2001-01-06T00:00:00Z'), to: at('2001-01-08T00:00:00Z'), sections: null, pieces: [{ level: 'day', from: 0, to: D }] },
      {
        from: at('2001-01-08T00:00:00Z'),
        to: at('2001-01-09T00:00:00Z'),
        sections: null,
        pieces: [
          { level: 'hour', from: 0, to: 3 * H },
          { level: 'minute', from: 3 * H, to: 3.5 * H },
        ],
      },
    ]);
    // The document's date picks its day's plan: the middle days take the day totals as they are.
    const tree = stages[3]?.$project.slot.$let.in;
    expect(tree.$cond[0]).toEqual({ $lt: ['$date', new Date('2001-01-06T00:00:00Z')] });
    // The slot form's branch of the `$cond` on the raw form (`r`).
    expect(tree.$cond[2].$cond[1].$cond[2]).toEqual([{ time: '$$day', x: { v0: '$fields.delay' } }]);
    // A raw document gives its readings of the range as they are; a plan of several days
    // makes its bounds from the document's day.
    const raw = JSON.stringify(tree.$cond[2].$cond[1].$cond[1]);
    expect(raw).toContain('"$filter":{"input":"$r"');
    expect(raw).not.toContain('"$map"');
    expect(JSON.stringify(tree.$cond[1])).toContain('minutes');
  });

  it('never matches documents outside the range, for any granularity and range', () => {
    const ranges = [
      ['2001-01-05T12:07:00Z', '2001-01-08T03:30:00Z'],
      ['2001-01-01T00:00:00Z', '2001-03-01T00:00:00Z'],
      ['2001-01-01T10:10:00Z', '2001-01-01T10:11:00Z'],
    ] as const;
    for (const [from, to] of ranges) {
      for (const name of ['MINUTE', 'FIFTEEN_MINUTES', 'HOUR', 'SIX_HOURS', 'DAY', 'MONTH'] as const) {
        const [first] = bucketsPipeline(query({ granularity: granularity(name), from: at(from), to: at(to) }));
        const day = Math.floor(at(from) / 86_400_000) * 86_400_000;
        if (at(to) <= day + 86_400_000) {
          // One day: the day itself, and only the documents whose last reading reaches the range.
          expect(first?.$match).toEqual({ metric: 'flights', date: new Date(day), last: { $gte: new Date(at(from)) } });
        } else {
          expect(first?.$match.date).toEqual({ $gte: new Date(day), $lt: new Date(at(to)) });
          expect(first?.$match.last).toBeUndefined();
        }
      }
    }
  });

  it('reads one day of a whole metric or of one tag value bounded by last, of several tag values by the day and their $in, of series as before', () => {
    const within = { from: at('2001-01-01T10:10:00Z'), to: at('2001-01-01T10:11:00Z') };
    const day = new Date(at('2001-01-01T00:00:00Z'));
    const where = (...filters: { key: string; in: string[] }[]) =>
      bucketsPipeline(query({ granularity: granularity('MINUTE'), ...within, scope: { metric: 'flights', where: filters } }));
    const tagged = where({ key: 'origin', in: ['ORD'] });
    expect(tagged[0]?.$match).toEqual({ metric: 'flights', tagPairs: 'origin=ORD', date: day, last: { $gte: new Date(within.from) } });
    expect(tagged[1]?.$match).toEqual({ 'fields.delay.n': { $gt: 0 }, ...inSpan('2001-01-01T10:10:00Z', '2001-01-01T10:11:00Z') });
    // The most selective list in the index range, the other checked on what it selects.
    const two = where({ key: 'destination', in: ['LAS', 'PHX'] }, { key: 'origin', in: ['ORD'] });
    expect(two[0]?.$match).toEqual({ metric: 'flights', tagPairs: 'origin=ORD', date: day, last: { $gte: new Date(within.from) } });
    expect(two[1]?.$match.$and).toEqual([{ tagPairs: { $in: ['destination=LAS', 'destination=PHX'] } }]);
    // Several values of the most selective tag: the day, then their `$in` (`{metric, date, tagPairs}`), no bound on `last`.
    const values = where({ key: 'origin', in: ['ORD', 'SFO'] });
    expect(values[0]?.$match).toEqual({ metric: 'flights', date: day, tagPairs: { $in: ['origin=ORD', 'origin=SFO'] } });
    expect(values[1]?.$match).toEqual({ 'fields.delay.n': { $gt: 0 }, ...inSpan('2001-01-01T10:10:00Z', '2001-01-01T10:11:00Z') });
    // Two days of one tag value: the day range, no bound on `last`.
    const days = bucketsPipeline(
      query({
        granularity: granularity('MINUTE'),
        from: within.from,
        to: at('2001-01-02T00:01:00Z'),
        scope: { metric: 'flights', where: [{ key: 'origin', in: ['ORD'] }] },
      }),
    );
    expect(days[0]?.$match).toEqual({
      metric: 'flights',
      tagPairs: 'origin=ORD',
      date: { $gte: day, $lt: new Date(at('2001-01-02T00:01:00Z')) },
    });
    const series = bucketsPipeline(query({ granularity: granularity('MINUTE'), ...within, scope: { series: ['s1'] } }));
    expect(series[0]?.$match.last).toBeUndefined();
  });

  it('puts the most selective tag filter into the index range and checks the others afterwards', () => {
    const stages = bucketsPipeline(
      query({
        scope: {
          metric: 'flights',
          where: [
            { key: 'destination', in: ['LAS', 'PHX'] },
            { key: 'origin', in: ['ORD'] },
          ],
        },
      }),
    );
    expect(stages[0]).toEqual({
      $match: {
        metric: 'flights',
        tagPairs: 'origin=ORD',
        date: { $gte: new Date('2001-01-01T00:00:00Z'), $lt: new Date('2001-02-01T00:00:00Z') },
      },
    });
    expect(stages[1]).toEqual({
      $match: { $and: [{ tagPairs: { $in: ['destination=LAS', 'destination=PHX'] } }], 'fields.delay.n': { $gt: 0 }, ...inSpan() },
    });
  });

  it('moves the day range into the second $match when the index range holds an $in (one operator field after the equalities)', () => {
    const days = { $gte: new Date('2001-01-01T00:00:00Z'), $lt: new Date('2001-02-01T00:00:00Z') };
    const byTag = bucketsPipeline(query({ scope: { metric: 'flights', where: [{ key: 'origin', in: ['ORD', 'SFO'] }] } }));
    expect(byTag[0]).toEqual({ $match: { metric: 'flights', tagPairs: { $in: ['origin=ORD', 'origin=SFO'] } } });
    expect(byTag[1]).toEqual({ $match: { date: days, 'fields.delay.n': { $gt: 0 }, ...inSpan() } });
    const bySeries = bucketsPipeline(query({ scope: { series: ['a', 'b'] } }));
    expect(bySeries[0]).toEqual({ $match: { series: { $in: ['a', 'b'] } } });
    expect(bySeries[1]).toEqual({ $match: { date: days, 'fields.delay.n': { $gt: 0 }, ...inSpan() } });
    const oneSeries = bucketsPipeline(query({ scope: { series: ['a'] } }));
    expect(oneSeries[0]).toEqual({ $match: { series: 'a', date: days } });
  });

  it('groups by tag values, by series, or not at all', () => {
    const byTags = bucketsPipeline(query({ grouping: { by: 'tags', keys: ['origin', 'destination'] } }));
    expect(byTags.at(-1)?.$group._id.g).toEqual({ origin: '$tags.origin', destination: '$tags.destination' });

    const bySeries = bucketsPipeline(
      query({ scope: { series: ['a', 'b'] }, grouping: { by: 'series' }, granularity: granularity('HOUR') }),
    );
    expect(bySeries[0]?.$match.series).toEqual({ $in: ['a', 'b'] });
    expect(bySeries[2]?.$project.series).toBe(1);
    expect(bySeries[3]?.$project.g).toBe('$series');
    expect(bySeries.at(-1)?.$group._id.g).toBe('$g');
  });

  it('an aggregate (no granularity) groups everything into one row per group', () => {
    const stages = bucketsPipeline(query({ granularity: null, from: at('2001-01-01T06:00:00Z') }));
    // Each statistic from a slot's, else from a raw reading's value (nothing when it has none).
    const value = '$slot.f.delay';
    expect(stages.at(-1)).toEqual({
      $group: {
        _id: null,
        n0: { $sum: { $ifNull: ['$slot.x.v0.n', { $cond: [{ $isNumber: value }, 1, 0] }] } },
        sum0: { $sum: { $ifNull: ['$slot.x.v0.sum', value] } },
        min0: { $min: { $ifNull: ['$slot.x.v0.min', value] } },
        max0: { $max: { $ifNull: ['$slot.x.v0.max', value] } },
        sq0: { $sum: { $ifNull: ['$slot.x.v0.sq', { $multiply: [value, value] }] } },
      },
    });
  });

  it('reads several fields in one pass: documents and slots holding any of them, statistics per field', () => {
    const day = bucketsPipeline(query({ fields: ['delay', 'distance'] }));
    expect(day[1]?.$match).toEqual({ $or: [{ 'fields.delay.n': { $gt: 0 } }, { 'fields.distance.n': { $gt: 0 } }], ...inSpan() });
    expect(Object.keys(day[3]?.$group).sort()).toEqual(
      ['_id', 'max0', 'max1', 'min0', 'min1', 'n0', 'n1', 'sq0', 'sq1', 'sum0', 'sum1'].sort(),
    );
    expect(day[3]?.$group.sum1).toEqual({ $sum: '$fields.distance.sum' });
    const hour = bucketsPipeline(query({ fields: ['delay', 'distance'], granularity: granularity('HOUR') }));
    // The slot form's branch (`$cond` on `r`, the raw form).
    const slots = hour[3]?.$project.slot.$let.in.$cond[2].$map;
    expect(slots.in.x).toEqual({ v0: '$$h.v.fields.delay', v1: '$$h.v.fields.distance' });
    expect(slots.input.$filter.cond).toEqual({
      $or: [{ $gt: ['$$h.v.fields.delay.n', 0] }, { $gt: ['$$h.v.fields.distance.n', 0] }],
    });
  });

  it('UTC keys: slot times in ms floored by arithmetic, day totals keyed by their date or $dateTrunc (the cheaper forms measured)', () => {
    // A slot's start in ms, or a raw reading's minute (see \`RawAs\`).
    const start = {
      $ifNull: ['$slot.time', { $let: { vars: { ms: { $toLong: '$slot.t' } }, in: { $subtract: ['$$ms', { $mod: ['$$ms', 60_000] }] } } }],
    };
    const fiveMinutes = bucketsPipeline(query({ granularity: granularity('FIVE_MINUTES') })).at(-1)?.$group._id.t;
    expect(fiveMinutes).toEqual({ $toDate: { $let: { vars: { t: start }, in: { $subtract: ['$$t', { $mod: ['$$t', 300_000] }] } } } });
    const week = bucketsPipeline(query({ granularity: granularity('WEEK') })).at(-1)?.$group._id.t;
    expect(week).toEqual({ $dateTrunc: { date: '$date', unit: 'week', startOfWeek: 'monday' } });
    const sundayWeek = bucketsPipeline(query({ granularity: granularity('WEEK', { weekStart: 'SUNDAY' }) })).at(-1)?.$group._id.t;
    expect(sundayWeek).toEqual({ $dateTrunc: { date: '$date', unit: 'week', startOfWeek: 'sunday' } });
    const month = bucketsPipeline(query({ granularity: granularity('MONTH') })).at(-1)?.$group._id.t;
    expect(month).toEqual({ $dateTrunc: { date: '$date', unit: 'month' } });
    const raggedMonth = bucketsPipeline(query({ granularity: granularity('MONTH'), from: at('2001-01-05T12:07:00Z') })).at(-1)?.$group._id
      .t;
    expect(raggedMonth).toEqual({ $dateTrunc: { date: { $toDate: start }, unit: 'month' } });
  });

  it('never adds or subtracts a number to or from a date: every operand is a number in ms', () => {
    /** Operands that are dates: the date field, date constants, expressions that make dates. */
    const isDate = (operand: unknown): boolean =>
      operand === '$date' ||
      operand instanceof Date ||
      (typeof operand === 'object' && operand !== null && ['$toDate', '$dateTrunc', '$dateFromParts'].some((op) => op in operand));
    const offenders: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === 'object' && !(node instanceof Date)) {
        for (const [key, value] of Object.entries(node)) {
          if ((key === '$add' || key === '$subtract') && Array.isArray(value) && value.some(isDate))
            offenders.push(JSON.stringify(node).slice(0, 200));
          walk(value);
        }
      }
    };
    const ranges = [
      ['2001-03-25T04:10:00Z', '2001-04-08T07:00:00Z'],
      ['2001-01-01T00:00:00Z', '2002-01-01T00:00:00Z'],
      ['2001-10-27T12:00:00Z', '2001-10-29T00:00:00Z'],
    ] as const;
    for (const zone of ['UTC', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns']) {
      for (const name of GRANULARITY_NAMES) {
        for (const [from, to] of ranges) {
          if (countBuckets(at(from), at(to), granularity(name).cut, zone) > 5000) continue;
          walk(bucketsPipeline(query({ granularity: granularity(name), from: at(from), to: at(to), timeZone: zone })));
        }
      }
      walk(bucketsPipeline(query({ granularity: null, timeZone: zone, from: at('2001-01-05T12:07:00Z') })));
    }
    expect(offenders).toEqual([]);
  });
});

describe('read projection: each document is cut down to the paths the pipeline reads, right after $match', () => {
  /** The paths the read projection keeps (the stage after the two $match stages). */
  const projected = (stages: Document[]) => {
    expect(stageNames(stages).slice(0, 3)).toEqual(['$match', '$match', '$project']);
    const { _id, ...paths } = stages[2]!.$project as Record<string, number>;
    expect(_id).toBe(0);
    expect(Object.values(paths).every((value) => value === 1)).toBe(true);
    return Object.keys(paths).sort();
  };
  it('an HOUR query keeps the entries of its hours only: no day totals, no minutes, no other fields', () => {
    const paths = projected(
      bucketsPipeline(query({ granularity: granularity('HOUR'), from: at('2001-01-01T07:00:00Z'), to: at('2001-01-01T10:00:00Z') })),
    );
    // `r`: a document in the raw form is read from its readings (every level finer than the day).
    expect(paths).toEqual(['date', 'hours.7.fields.delay', 'hours.8.fields.delay', 'hours.9.fields.delay', 'r']);
  });

  it('a MINUTE query keeps the minutes of its range (a few by name, else the whole hour) and the entries of their hours', () => {
    const edge = projected(
      bucketsPipeline(query({ granularity: granularity('MINUTE'), from: at('2001-01-01T10:58:00Z'), to: at('2001-01-01T11:01:00Z') })),
    );
    // The hours' counts are tested before their minutes are walked.
    // Packed minutes (`mc`) of each hour, whole.
    const packed = (hour: number) => [`hours.${hour}.mc`];
    expect(edge).toEqual([
      'date',
      'hours.10.fields.delay',
      ...packed(10),
      'hours.10.minutes.58.delay',
      'hours.10.minutes.59.delay',
      'hours.11.fields.delay',
      ...packed(11),
      'hours.11.minutes.0.delay',
      'r',
    ]);
    const hours = projected(
      bucketsPipeline(query({ granularity: granularity('MINUTE'), from: at('2001-01-01T10:40:00Z'), to: at('2001-01-01T12:00:00Z') })),
    );
    expect(hours).toEqual([
      'date',
      'hours.10.fields.delay',
      ...packed(10),
      'hours.10.minutes',
      'hours.11.fields.delay',
      ...packed(11),
      'hours.11.minutes',
      'r',
    ]);
  });

  it('first and last readings keep whole field entries and the layout version; groups keep their tags or the series id', () => {
    const withFirstLast = projected(bucketsPipeline(query({ firstLast: true, fields: ['delay', 'distance'] })));
    expect(withFirstLast).toEqual(['date', 'fields.delay', 'fields.distance', 'v']);
    const byTags = projected(bucketsPipeline(query({ grouping: { by: 'tags', keys: ['origin', 'destination'] } })));
    expect(byTags).toEqual(['date', 'fields.delay', 'tags.destination', 'tags.origin']);
    const bySeries = projected(bucketsPipeline(query({ scope: { series: ['a'] }, grouping: { by: 'series' } })));
    expect(bySeries).toContain('series');
  });

  it('a day cut in two by local midnight keeps the day totals (the larger part is derived from them) and the hours of both parts', () => {
    const from = parseLocalTime('2001-03-26', 'America/New_York');
    const to = parseLocalTime('2001-03-28', 'America/New_York');
    const paths = projected(bucketsPipeline(query({ from, to, timeZone: 'America/New_York' })));
    expect(paths).toEqual(expect.arrayContaining(['fields.delay', 'hours.0.fields.delay', 'hours.23.fields.delay']));
    expect(paths.filter((path) => path.includes('minutes'))).toEqual([]);
  });

  it('the sketch pipeline keeps the sketches of the slots it reads, under q, and nothing of the statistics', () => {
    const day = projected(sketchPipeline(query({ grouping: { by: 'tags', keys: ['origin'] } })));
    // A raw document has no sketches: its readings' bins are read at every level, the day's too.
    expect(day).toEqual(['date', 'kl', 'q.fields.delay', 'r', 'tags.origin']);
    const hour = projected(
      sketchPipeline(query({ granularity: granularity('HOUR'), from: at('2001-01-01T22:00:00Z'), to: at('2001-01-02T00:00:00Z') })),
    );
    expect(hour).toEqual(['date', 'kl', 'q.hours.22.fields.delay', 'q.hours.23.fields.delay', 'r']);
  });

  it('the counter pipeline keeps the series and the whole entry of the field in the slots it reads', () => {
    const day = projected(counterPipeline(query({ grouping: { by: 'tags', keys: ['origin'] } })));
    expect(day).toEqual(['date', 'fields.delay', 'r', 'series', 'tags.origin']);
    const hour = projected(
      counterPipeline(query({ granularity: granularity('HOUR'), from: at('2001-01-01T22:00:00Z'), to: at('2001-01-02T00:00:00Z') })),
    );
    expect(hour).toEqual(['date', 'hours.22.fields.delay', 'hours.23.fields.delay', 'r', 'series']);
  });

  it('a Kolkata HOUR sketch pipeline reads the quarter hours of every hour (and their minutes, for hours without quarters); its statistics read minutes', () => {
    const zone = 'Asia/Kolkata';
    const q = query({
      granularity: granularity('HOUR'),
      from: parseLocalTime('2001-01-01T06:00', zone),
      to: parseLocalTime('2001-01-01T08:00', zone),
      timeZone: zone,
    });
    // 00:30 to 02:30 UTC: the quarters 2 and 3 of hour 0, all of hour 1, 0 and 1 of hour 2.
    expect(projected(sketchPipeline(q))).toEqual([
      'date',
      'kl',
      'q.hours.0.minutes',
      'q.hours.0.quarters.2.delay',
      'q.hours.0.quarters.3.delay',
      'q.hours.1.minutes',
      'q.hours.1.quarters.0.delay',
      'q.hours.1.quarters.1.delay',
      'q.hours.1.quarters.2.delay',
      'q.hours.1.quarters.3.delay',
      'q.hours.2.minutes',
      'q.hours.2.quarters.0.delay',
      'q.hours.2.quarters.1.delay',
      'r',
    ]);
    // An hour's quarters when it has any, else its minutes in the same quarters.
    expect(text(sketchPipeline(q))).toContain(JSON.stringify({ $eq: [{ $type: '$$this.v.quarters' }, 'object'] }));
    expect(projected(bucketsPipeline(q)).filter((path) => path.includes('quarters'))).toEqual([]);
    expect(projected(bucketsPipeline(q))).toContain('hours.1.minutes');
  });

  it('every document path a later stage reads is projected, and no projected path lies inside another (MongoDB: "Path collision")', () => {
    /** Root paths (`$fields.delay.n`, not variables) in a stage tree. */
    const rootPaths = (node: unknown, out: Set<string>): Set<string> => {
      if (typeof node === 'string' && node.startsWith('$') && !node.startsWith('$$')) out.add(node.slice(1));
      else if (Array.isArray(node)) for (const item of node) rootPaths(item, out);
      else if (node !== null && typeof node === 'object' && !(node instanceof Date))
        for (const value of Object.values(node)) rootPaths(value, out);
      return out;
    };
    const ranges = [
      ['2001-03-25T04:10:00Z', '2001-04-08T07:00:00Z'],
      ['2001-01-01T00:00:00Z', '2001-03-01T00:00:00Z'],
      ['2001-10-27T12:07:00Z', '2001-10-29T00:00:00Z'],
      ['2001-01-05T10:10:00Z', '2001-01-05T10:11:00Z'],
    ] as const;
    const MADE = new Set(['slot', 'g', 's', 'id', 'n', 'sum', 'min', 'max', 'sq', '_id']);
    const problems: string[] = [];
    let checked = 0;
    for (const zone of ['UTC', 'America/New_York', 'Asia/Kathmandu']) {
      for (const name of ['MINUTE', 'FIFTEEN_MINUTES', 'HOUR', 'SIX_HOURS', 'DAY', 'WEEK', 'MONTH', 'YEAR', null] as const) {
        for (const [from, to] of ranges) {
          const g = name === null ? null : granularity(name);
          if (g !== null && countBuckets(at(from), at(to), g.cut, zone) > 2000) continue;
          const q = query({
            granularity: g,
            from: at(from),
            to: at(to),
            timeZone: zone,
            firstLast: checked % 2 === 0,
            fields: ['delay', 'distance'],
          });
          for (const stages of [bucketsPipeline(q), sketchPipeline(q), counterPipeline(q)]) {
            const paths = new Set(projected(stages));
            // Every path leading to a projected one (`hours`, `hours.7`, …): reading it reads projected paths only.
            const leading = new Set([...paths].flatMap((path) => path.split('.').map((_, i, steps) => steps.slice(0, i).join('.'))));
            const inside = (path: string) => path.split('.').some((_, i, steps) => i > 0 && paths.has(steps.slice(0, i).join('.')));
            for (const path of paths) if (inside(path)) problems.push(`${name} ${zone} ${from}: ${path} inside another path`);
            for (const read of rootPaths(stages.slice(3), new Set())) {
              // Made by the stages after the projection, not read from the document.
              if (MADE.has(read.split('.')[0]!) || /^(n|sum|min|max|sq|first|last)\d+$/.test(read)) continue;
              if (!paths.has(read) && !inside(read) && !leading.has(read)) problems.push(`${name} ${zone} ${from}: ${read} not projected`);
            }
            checked++;
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });
});

describe('bucketsPipeline in a time zone', () => {
  const H = 3_600_000;
  const D = 24 * H;
  const zoned = (name: GranularityName, zone: string, from: string, to: string) => {
    const range = { from: parseLocalTime(from, zone), to: parseLocalTime(to, zone) };
    return { range, stages: bucketsPipeline(query({ ...range, granularity: granularity(name), timeZone: zone })) };
  };
  /** The day plans of a zoned query, as the pipeline builds them. */
  const plans = (name: GranularityName, zone: string, from: string, to: string) => {
    const { range } = zoned(name, zone, from, to);
    const cut = granularity(name).cut;
    const starts = [bucketStart(range.from, cut, zone), ...bucketBoundaries(range.from, range.to, cut, zone)];
    return planDays(planBucketSegments(range.from, range.to, granularity(name), zone), { starts, keys: 'known' });
  };
  const hours = (from: number, to: number) => ({ level: 'hour', from: from * H, to: to * H });

  it('a New York MONTH: day totals keyed by their month, hour slots split at local midnight on the boundary days', () => {
    const march = at('2001-03-01T05:00:00Z');
    const april = at('2001-04-01T05:00:00Z');
    expect(plans('MONTH', 'America/New_York', '2001-03-01', '2001-05-01')).toEqual([
      {
        from: at('2001-03-01T00:00:00Z'),
        to: at('2001-03-02T00:00:00Z'),
        pieces: [hours(5, 24)],
        sections: [{ key: { at: march }, pieces: [hours(5, 24)] }],
      },
      {
        from: at('2001-03-02T00:00:00Z'),
        to: at('2001-04-01T00:00:00Z'),
        pieces: [{ level: 'day', from: 0, to: D }],
        sections: [{ key: { at: march }, pieces: [{ level: 'day', from: 0, to: D }] }],
      },
      {
        from: at('2001-04-01T00:00:00Z'),
        to: at('2001-04-02T00:00:00Z'),
        pieces: [hours(0, 24)],
        sections: [
          { key: { at: march }, pieces: [hours(0, 5)] },
          { key: { at: april }, pieces: [hours(5, 24)] },
        ],
      },
      {
        from: at('2001-04-02T00:00:00Z'),
        to: at('2001-05-01T00:00:00Z'),
        pieces: [{ level: 'day', from: 0, to: D }],
        sections: [{ key: { at: april }, pieces: [{ level: 'day', from: 0, to: D }] }],
      },
      {
        from: at('2001-05-01T00:00:00Z'),
        to: at('2001-05-02T00:00:00Z'),
        pieces: [hours(0, 4)],
        sections: [{ key: { at: april }, pieces: [hours(0, 4)] }],
      },
    ]);
  });

  it('a New York DAY: one plan per stretch of constant offset, keys at a fixed distance from each UTC midnight', () => {
    expect(plans('DAY', 'America/New_York', '2001-03-25', '2001-04-08')).toEqual([
      {
        from: at('2001-03-25T00:00:00Z'),
        to: at('2001-03-26T00:00:00Z'),
        pieces: [hours(5, 24)],
        sections: [{ key: { at: at('2001-03-25T05:00:00Z') }, pieces: [hours(5, 24)] }],
      },
      {
        from: at('2001-03-26T00:00:00Z'),
        to: at('2001-04-02T00:00:00Z'),
        pieces: [hours(0, 24)],
        sections: [
          { key: { after: -19 * H }, pieces: [hours(0, 5)] },
          { key: { after: 5 * H }, pieces: [hours(5, 24)] },
        ],
      },
      // 2 April: 1 April (EST midnight) started 19 hours before, 2 April starts at 04:00 (EDT).
      {
        from: at('2001-04-02T00:00:00Z'),
        to: at('2001-04-03T00:00:00Z'),
        pieces: [hours(0, 24)],
        sections: [
          { key: { at: at('2001-04-01T05:00:00Z') }, pieces: [hours(0, 4)] },
          { key: { at: at('2001-04-02T04:00:00Z') }, pieces: [hours(4, 24)] },
        ],
      },
      {
        from: at('2001-04-03T00:00:00Z'),
        to: at('2001-04-08T00:00:00Z'),
        pieces: [hours(0, 24)],
        sections: [
          { key: { after: -20 * H }, pieces: [hours(0, 4)] },
          { key: { after: 4 * H }, pieces: [hours(4, 24)] },
        ],
      },
      {
        from: at('2001-04-08T00:00:00Z'),
        to: at('2001-04-09T00:00:00Z'),
        pieces: [hours(0, 4)],
        sections: [{ key: { at: at('2001-04-07T04:00:00Z') }, pieces: [hours(0, 4)] }],
      },
    ]);
  });

  it('a Kathmandu DAY: inner days split at 18:15 UTC, the hour 18:00-19:00 read from minute slots', () => {
    const inner = plans('DAY', 'Asia/Kathmandu', '2001-04-01', '2001-04-05')[1]!;
    expect(inner).toEqual({
      from: at('2001-04-01T00:00:00Z'),
      to: at('2001-04-04T00:00:00Z'),
      pieces: [hours(0, 18), { level: 'minute', from: 18 * H, to: 19 * H }, hours(19, 24)],
      sections: [
        { key: { after: -(5 * H + 45 * 60_000) }, pieces: [hours(0, 18), { level: 'minute', from: 18 * H, to: 18.25 * H }] },
        { key: { after: 18.25 * H }, pieces: [{ level: 'minute', from: 18.25 * H, to: 19 * H }, hours(19, 24)] },
      ],
    });
  });

  it('a whole day cut in two reads the smaller part and takes the larger from the day totals', () => {
    const { stages } = zoned('DAY', 'America/New_York', '2001-03-26', '2001-03-28');
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$project', '$unwind', '$group', '$set']);
    const text = JSON.stringify(stages[3]);
    // The smaller part (hours 0-4 UTC) by path; the larger (5-23) as day minus smaller, its slots read only for min or max.
    expect(text).toContain('"$hours.4.fields.delay.n"');
    expect(text).toContain('{"$subtract":["$fields.delay.n","$$s.v0.n"]}');
    expect(text).toContain('"$hours.23.fields.delay.min"');
    expect(text).not.toContain('"$hours.23.fields.delay.n"');
    expect(stages[5]?.$group._id).toEqual({ t: '$slot.k' });
    expect(stages[6]).toEqual({ $set: { '_id.t': { $toDate: '$_id.t' } } });
  });

  it('a zoned query over whole days of whole local periods groups day totals directly (London in winter)', () => {
    const { stages } = zoned('MONTH', 'Europe/London', '2001-01-01', '2001-03-01');
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$group', '$set']);
    expect(JSON.stringify(stages.slice(2))).not.toContain('hours');
  });

  it('finer granularities key each slot by its span of constant offset: Kolkata hours from minute slots', () => {
    const { stages } = zoned('HOUR', 'Asia/Kolkata', '2001-04-01', '2001-04-02');
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$project', '$unwind', '$group']);
    // +05:30: t - ((t + 1,800,000) mod 3,600,000), t a slot's start or a raw reading's minute.
    const minuteOfReading = { $let: { vars: { ms: { $toLong: '$slot.t' } }, in: { $subtract: ['$$ms', { $mod: ['$$ms', 60_000] }] } } };
    expect(stages[5]?.$group._id.t).toEqual({
      $toDate: {
        $let: {
          vars: { t: { $ifNull: ['$slot.time', minuteOfReading] } },
          in: { $subtract: ['$$t', { $mod: [{ $add: ['$$t', 1_800_000] }, 3_600_000] }] },
        },
      },
    });
    expect(JSON.stringify(stages[3])).toContain('minutes');
  });

  it('beyond 128 plans (a boundary day per month for 20 years) every day reads as if it held a local midnight, its parts keyed per document', () => {
    const { stages } = zoned('MONTH', 'America/New_York', '1990-01-01', '2010-01-01');
    const project = JSON.stringify(stages[3]);
    // One plan per stretch of constant offset (two a year) and the range's edges, not two per month.
    const plans = project.split('{"$lt":["$date"').length - 1 + 1;
    expect(plans).toBeLessThanOrEqual(2 * 20 + 4);
    expect(project).toContain('$dateTrunc');
    expect(project.length).toBeLessThan(300_000);
    expect(stages.at(-1)).toEqual({ $set: { '_id.t': { $toDate: '$_id.t' } } });
  });

  it('refuses an unknown zone with INVALID_TIME_ZONE', () => {
    expect(() => bucketsPipeline(query({ timeZone: 'Mars/Olympus' }))).toThrow(expect.objectContaining({ code: 'INVALID_TIME_ZONE' }));
  });
});
