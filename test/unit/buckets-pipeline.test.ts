import type { Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { bucketsPipeline, type BucketQuery } from '../../src/query/buckets-pipeline.ts';
import { granularity } from '../../src/query/granularity.ts';

const at = (iso: string) => Date.parse(iso);
const stageNames = (stages: Document[]) => stages.map((stage) => Object.keys(stage)[0]);
const text = (stages: Document[]) => JSON.stringify(stages);

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
  it('a DAY query over whole days sums day totals: $match then $group, nothing unwound', () => {
    const stages = bucketsPipeline(query({}));
    expect(stages).toEqual([
      { $match: { metric: 'flights', date: { $gte: new Date('2001-01-01T00:00:00Z'), $lt: new Date('2001-02-01T00:00:00Z') } } },
      { $match: { 'fields.delay.n': { $gt: 0 } } },
      {
        $group: {
          _id: { t: { $subtract: ['$date', { $mod: [{ $toLong: '$date' }, 86_400_000] }] } },
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
      expect(stageNames(stages)).toEqual(['$match', '$match', '$group']);
      expect(text(stages)).not.toContain('hours');
    }
  });

  it('an HOUR query reads hour slots and never minutes', () => {
    const stages = bucketsPipeline(query({ granularity: granularity('HOUR') }));
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$unwind', '$group']);
    expect(text(stages)).toContain('$hours');
    expect(text(stages)).not.toContain('minutes');
  });

  it('a MINUTE query reads minute slots of the hours in range', () => {
    const stages = bucketsPipeline(query({ granularity: granularity('MINUTE'), to: at('2001-01-01T03:00:00Z') }));
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$unwind', '$group']);
    expect(text(stages)).toContain('$$this.v.minutes');
    expect(stages[4]?.$group._id.t).toEqual({ $subtract: ['$slot.time', { $mod: [{ $toLong: '$slot.time' }, 60_000] }] });
  });

  it('a DAY query over a ragged range reads the edges from hour and minute slots, each part guarded by its days', () => {
    const stages = bucketsPipeline(query({ from: at('2001-01-05T12:07:00Z'), to: at('2001-01-08T03:30:00Z') }));
    expect(stageNames(stages)).toEqual(['$match', '$match', '$project', '$unwind', '$group']);
    expect(stages[0]?.$match.date).toEqual({ $gte: new Date('2001-01-05T00:00:00Z'), $lt: new Date('2001-01-08T03:30:00Z') });
    const parts = stages[2]?.$project.slot.$concatArrays as Document[];
    expect(parts).toHaveLength(5);
    const guards = parts.map((part) => part.$cond[0].$and.map((bound: Document) => Object.values(bound)[0][1].toISOString()));
    expect(guards).toEqual([
      ['2001-01-05T00:00:00.000Z', '2001-01-05T13:00:00.000Z'],
      ['2001-01-05T00:00:00.000Z', '2001-01-06T00:00:00.000Z'],
      ['2001-01-06T00:00:00.000Z', '2001-01-08T00:00:00.000Z'],
      ['2001-01-08T00:00:00.000Z', '2001-01-08T03:00:00.000Z'],
      ['2001-01-08T00:00:00.000Z', '2001-01-08T03:30:00.000Z'],
    ]);
    // The day part takes the day totals as they are; only the edges look into hours and minutes.
    expect(parts[2]?.$cond[1]).toEqual([{ time: '$date', x: { v0: '$fields.delay' } }]);
    expect(JSON.stringify(parts[1])).not.toContain('minutes');
    expect(JSON.stringify(parts[0])).toContain('minutes');
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
        expect(first?.$match.date).toEqual({
          $gte: new Date(Math.floor(at(from) / 86_400_000) * 86_400_000),
          $lt: new Date(at(to)),
        });
      }
    }
  });

  it('puts the most selective tag filter into the index range and checks the others afterwards', () => {
    const stages = bucketsPipeline(
      query({ scope: { metric: 'flights', where: [{ key: 'destination', in: ['LAS', 'PHX'] }, { key: 'origin', in: ['ORD'] }] } }),
    );
    expect(stages[0]).toEqual({
      $match: { metric: 'flights', tagPairs: 'origin=ORD', date: { $gte: new Date('2001-01-01T00:00:00Z'), $lt: new Date('2001-02-01T00:00:00Z') } },
    });
    expect(stages[1]).toEqual({
      $match: { $and: [{ tagPairs: { $in: ['destination=LAS', 'destination=PHX'] } }], 'fields.delay.n': { $gt: 0 } },
    });
  });

  it('groups by tag values, by series, or not at all', () => {
    const byTags = bucketsPipeline(query({ grouping: { by: 'tags', keys: ['origin', 'destination'] } }));
    expect(byTags.at(-1)?.$group._id.g).toEqual({ origin: '$tags.origin', destination: '$tags.destination' });

    const bySeries = bucketsPipeline(query({ scope: { series: ['a', 'b'] }, grouping: { by: 'series' }, granularity: granularity('HOUR') }));
    expect(bySeries[0]?.$match.series).toEqual({ $in: ['a', 'b'] });
    expect(bySeries[2]?.$project.g).toBe('$series');
    expect(bySeries.at(-1)?.$group._id.g).toBe('$g');
  });

  it('an aggregate (no granularity) groups everything into one row per group', () => {
    const stages = bucketsPipeline(query({ granularity: null, from: at('2001-01-01T06:00:00Z') }));
    expect(stages.at(-1)).toEqual({
      $group: {
        _id: null,
        n0: { $sum: '$slot.x.v0.n' },
        sum0: { $sum: '$slot.x.v0.sum' },
        min0: { $min: '$slot.x.v0.min' },
        max0: { $max: '$slot.x.v0.max' },
        sq0: { $sum: '$slot.x.v0.sq' },
      },
    });
  });

  it('reads several fields in one pass: documents and slots holding any of them, statistics per field', () => {
    const day = bucketsPipeline(query({ fields: ['delay', 'distance'] }));
    expect(day[1]?.$match).toEqual({ $or: [{ 'fields.delay.n': { $gt: 0 } }, { 'fields.distance.n': { $gt: 0 } }] });
    expect(Object.keys(day[2]?.$group).sort()).toEqual(
      ['_id', 'max0', 'max1', 'min0', 'min1', 'n0', 'n1', 'sq0', 'sq1', 'sum0', 'sum1'].sort(),
    );
    expect(day[2]?.$group.sum1).toEqual({ $sum: '$fields.distance.sum' });
    const hour = bucketsPipeline(query({ fields: ['delay', 'distance'], granularity: granularity('HOUR') }));
    const slots = hour[2]?.$project.slot.$cond[1].$map;
    expect(slots.in.x).toEqual({ v0: '$$h.v.fields.delay', v1: '$$h.v.fields.distance' });
    expect(slots.input.$filter.cond.$and[1]).toEqual({
      $or: [{ $gt: ['$$h.v.fields.delay.n', 0] }, { $gt: ['$$h.v.fields.distance.n', 0] }],
    });
  });

  it('fixed-width buckets use epoch arithmetic, calendar buckets $dateFromParts', () => {
    const fiveMinutes = bucketsPipeline(query({ granularity: granularity('FIVE_MINUTES') })).at(-1)?.$group._id.t;
    expect(fiveMinutes).toEqual({ $subtract: ['$slot.time', { $mod: [{ $toLong: '$slot.time' }, 300_000] }] });
    const week = bucketsPipeline(query({ granularity: granularity('WEEK') })).at(-1)?.$group._id.t;
    expect(week).toEqual({ $subtract: ['$date', { $mod: [{ $add: [{ $toLong: '$date' }, 259_200_000] }, 604_800_000] }] });
    const month = bucketsPipeline(query({ granularity: granularity('MONTH') })).at(-1)?.$group._id.t;
    expect(month).toEqual({ $dateFromParts: { year: { $year: '$date' }, month: { $month: '$date' } } });
  });
});
