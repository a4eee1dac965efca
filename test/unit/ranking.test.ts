import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CodedError } from '../../src/errors.ts';
import type { BucketRow } from '../../src/query/buckets-pipeline.ts';
import {
  aggregateRankingStages,
  bucketRankingStages,
  compareCodePoints,
  sortByRank,
  validateRanking,
  type Ranking,
} from '../../src/query/ranking.ts';

const byOrigin = { by: 'tags', keys: ['origin'] } as const;

describe('ranking stages', () => {
  it('aggregates: drop groups without readings of the field, rank, sort with tag tie-break, limit', () => {
    expect(
      aggregateRankingStages({ orderBy: 'avg', direction: 'DESC', limit: 10 }, { by: 'tags', keys: ['origin', 'destination'] }, 1),
    ).toEqual([
      { $match: { n1: { $gt: 0 } } },
      { $addFields: { _rank: { $divide: ['$sum1', '$n1'] } } },
      { $sort: { _rank: -1, '_id.g.origin': 1, '_id.g.destination': 1 } },
      { $limit: 10 },
    ]);
  });

  it('the statistic of each orderBy, as summarize computes it', () => {
    const rank = (orderBy: Ranking['orderBy']) =>
      aggregateRankingStages({ orderBy, direction: 'ASC', limit: 1 }, byOrigin)[1]!.$addFields._rank;
    expect(rank('count')).toBe('$n0');
    expect(rank('sum')).toBe('$sum0');
    expect(rank('min')).toBe('$min0');
    expect(rank('max')).toBe('$max0');
    expect(rank('stddev')).toEqual({
      $sqrt: {
        $divide: [
          { $max: [0, { $subtract: [{ $multiply: ['$n0', '$sq0'] }, { $multiply: ['$sum0', '$sum0'] }] }] },
          { $multiply: ['$n0', '$n0'] },
        ],
      },
    });
  });

  it('ties by series id when grouped by series', () => {
    expect(aggregateRankingStages({ orderBy: 'count', direction: 'ASC', limit: 5 }, { by: 'series' })[2]).toEqual({
      $sort: { _rank: 1, '_id.g': 1 },
    });
  });

  it('bucket lists: regroup by group with totals, rank, sort, limit, unwind back to the rows', () => {
    expect(bucketRankingStages({ orderBy: 'max', direction: 'ASC', limit: 3 }, byOrigin)).toEqual([
      {
        $group: {
          _id: '$_id.g',
          rows: { $push: '$$ROOT' },
          n: { $sum: '$n0' },
          sum: { $sum: '$sum0' },
          min: { $min: '$min0' },
          max: { $max: '$max0' },
          sq: { $sum: '$sq0' },
        },
      },
      { $match: { n: { $gt: 0 } } },
      { $addFields: { _rank: '$max' } },
      { $sort: { _rank: 1, '_id.origin': 1 } },
      { $limit: 3 },
      { $unwind: '$rows' },
      { $replaceRoot: { newRoot: { $mergeObjects: ['$rows', { _rank: '$_rank' }] } } },
    ]);
  });

  it('validateRanking refuses unknown statistics and directions and limits outside 1..10,000', () => {
    const codeOf = (ranking: unknown) => {
      try {
        validateRanking(ranking as Ranking);
      } catch (error) {
        return [(error as CodedError).code, (error as CodedError).extensions.inputPath];
      }
      return undefined;
    };
    expect(codeOf({ orderBy: 'median', direction: 'ASC', limit: 1 })).toEqual(['INVALID_ARGUMENT', 'orderBy']);
    expect(codeOf({ orderBy: 'avg', direction: 'UP', limit: 1 })).toEqual(['INVALID_ARGUMENT', 'orderBy']);
    for (const limit of [0, 10_001, 1.5])
      expect(codeOf({ orderBy: 'avg', direction: 'ASC', limit })).toEqual(['INVALID_ARGUMENT', 'limit']);
    expect(codeOf({ orderBy: 'stddev', direction: 'DESC', limit: 10_000 })).toBeUndefined();
  });
});

describe('compareCodePoints', () => {
  it('orders as UTF-8 bytes do (MongoDB without collation)', () => {
    expect(compareCodePoints('\u{1F600}', '\uFF21')).toBeGreaterThan(0);
    expect('\u{1F600}' < '\uFF21').toBe(true); // JavaScript's own order differs
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('sortByRank', () => {
  const row = (g: Record<string, string>, rank: number): BucketRow => ({ _id: { g }, _rank: rank });
  const group = (origin: string, destination?: string) => ({
    tags: [{ key: 'origin', value: origin }, ...(destination === undefined ? [] : [{ key: 'destination', value: destination }])],
  });
  const keys = ['origin', 'destination'];

  it('orders by the database rank, then tag values ascending with a missing tag first', () => {
    const rows = [
      row({ origin: 'B', destination: 'X' }, 2),
      row({ origin: 'A', destination: 'Y' }, 5),
      row({ origin: 'B' }, 2),
      row({ origin: 'A', destination: 'X' }, 2),
    ];
    const items = [group('A', 'X'), group('A', 'Y'), group('B'), group('B', 'X')];
    const names = (list: typeof items) => list.map((item) => item.tags.map((tag) => tag.value).join('-'));
    expect(names(sortByRank(items, rows, { orderBy: 'avg', direction: 'DESC', limit: 4 }, keys))).toEqual(['A-Y', 'A-X', 'B', 'B-X']);
    expect(names(sortByRank(items, rows, { orderBy: 'avg', direction: 'ASC', limit: 4 }, keys))).toEqual(['A-X', 'B', 'B-X', 'A-Y']);
    // A group without a ranked row goes last.
    expect(names(sortByRank([group('C'), ...items], rows, { orderBy: 'avg', direction: 'ASC', limit: 4 }, keys)).at(-1)).toBe('C');
  });
});
