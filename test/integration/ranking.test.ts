/**
 * Ranking against the database: a small data set recorded through the storage layer,
 * the bucket pipeline plus the ranking stages run on the test server, and the answer
 * compared with a plain sort of every group computed here from the raw readings.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { bucketsPipeline, type BucketQuery, type BucketRow } from '../../src/query/buckets-pipeline.ts';
import { granularity } from '../../src/query/granularity.ts';
import { aggregateRankingStages, bucketRankingStages, sortByRank, type RankStatistic, type Ranking } from '../../src/query/ranking.ts';
import { shapeBucketGroups } from '../../src/query/shape.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { closeTo, referenceStats } from '../helpers/reference.ts';
import { testMongoUri } from '../helpers/db.ts';
import { random } from '../helpers/random.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';

/** One raw reading of the test data: tags (destination may be missing) and integer field values. */
interface Raw {
  origin: string;
  destination?: string;
  time: number;
  delay?: number;
  distance?: number;
}

const T0 = Date.UTC(2001, 0, 1);
const FIELDS = ['delay', 'distance'] as const;
/** Ragged range: reads day totals, hour and minute slots. */
const RANGE = { from: Date.UTC(2001, 0, 1, 5, 17), to: Date.UTC(2001, 0, 3, 20, 43) };

/**
 * Origins: BOS and DEN have the same readings (ties in every statistic), as have U+FF21
 * and U+1F600 (whose order differs between UTF-8 and UTF-16); Zed has no delay at all;
 * each origin has series to X, to Y and without a destination.
 */
function dataSet(): Raw[] {
  const next = random(20010101);
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const raws: Raw[] = [];
  for (const origin of ['ATL', 'BOS', 'LAS', 'Zed', '\uFF21']) {
    for (const destination of ['X', 'Y', undefined]) {
      const readings = int(4, 14);
      for (let i = 0; i < readings; i++) {
        const time = T0 + int(0, 3 * 24 * 60 - 1) * 60_000;
        const shape = next();
        const raw: Raw = { origin, time, ...(destination === undefined ? {} : { destination }) };
        if (origin !== 'Zed' && shape < 0.85) raw.delay = int(-60, 400);
        if (shape > 0.15 || raw.delay === undefined) raw.distance = int(100, 3000);
        raws.push(raw);
      }
    }
  }
  const twin = { BOS: 'DEN', '\uFF21': '\u{1F600}' } as Record<string, string>;
  return raws.flatMap((raw) => (twin[raw.origin] ? [raw, { ...raw, origin: twin[raw.origin]! }] : [raw]));
}

const RAWS = dataSet();

/** A group's tag values in `keys` order, null for a missing tag. */
const valuesOf = (raw: Raw, keys: readonly string[]) =>
  keys.map((key) => (raw as unknown as Record<string, string | undefined>)[key] ?? null);

interface RefGroup {
  values: (string | null)[];
  n: bigint;
  sum: bigint;
  sq: bigint;
  numbers: number[];
}

/** Every group with readings of `field` in the range, with exact integer sums. */
function referenceGroups(field: 'delay' | 'distance', keys: readonly string[]): RefGroup[] {
  const groups = new Map<string, RefGroup>();
  for (const raw of RAWS) {
    const v = raw[field];
    if (v === undefined || raw.time < RANGE.from || raw.time >= RANGE.to) continue;
    const values = valuesOf(raw, keys);
    const id = JSON.stringify(values);
    let group = groups.get(id);
    if (!group) {
      group = { values, n: 0n, sum: 0n, sq: 0n, numbers: [] };
      groups.set(id, group);
    }
    group.n += 1n;
    group.sum += BigInt(v);
    group.sq += BigInt(v) * BigInt(v);
    group.numbers.push(v);
  }
  return [...groups.values()];
}

/** Exact comparison of two groups by `statistic` (ascending): cross-multiplied integers, variance for stddev. */
function compareExact(a: RefGroup, b: RefGroup, statistic: RankStatistic): number {
  const sign = (x: bigint) => (x > 0n ? 1 : x < 0n ? -1 : 0);
  switch (statistic) {
    case 'count':
      return sign(a.n - b.n);
    case 'sum':
      return sign(a.sum - b.sum);
    case 'min':
      return Math.min(...a.numbers) - Math.min(...b.numbers);
    case 'max':
      return Math.max(...a.numbers) - Math.max(...b.numbers);
    case 'avg':
      return sign(a.sum * b.n - b.sum * a.n);
    case 'stddev':
      return sign((a.n * a.sq - a.sum * a.sum) * b.n * b.n - (b.n * b.sq - b.sum * b.sum) * a.n * a.n);
  }
}

/** The reference answer: all groups sorted by the statistic, ties by tag values (missing first, UTF-8 byte order), first `limit`. */
function referenceRanking(field: 'delay' | 'distance', keys: readonly string[], ranking: Ranking): RefGroup[] {
  const direction = ranking.direction === 'ASC' ? 1 : -1;
  return referenceGroups(field, keys)
    .sort((a, b) => {
      const byStatistic = compareExact(a, b, ranking.orderBy);
      if (byStatistic !== 0) return direction * byStatistic;
      for (let k = 0; k < keys.length; k++) {
        const x = a.values[k]!;
        const y = b.values[k]!;
        if (x === y) continue;
        if (x === null) return -1;
        if (y === null) return 1;
        return Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8'));
      }
      return 0;
    })
    .slice(0, ranking.limit);
}

/** The reference value of the statistic, from the raw numbers (two-pass standard deviation). */
function referenceValue(group: RefGroup, statistic: RankStatistic): number {
  const stats = referenceStats(group.numbers);
  return { count: stats.count, sum: stats.sum, min: stats.min, max: stats.max, avg: stats.avg, stddev: stats.stddev }[statistic]!;
}

const groupValues = (row: BucketRow, keys: readonly string[]) => {
  const g = (row._id?.g ?? {}) as Record<string, unknown>;
  return keys.map((key) => (typeof g[key] === 'string' ? (g[key] as string) : null));
};

const STATISTICS: readonly RankStatistic[] = ['count', 'sum', 'min', 'max', 'avg', 'stddev'];
const GROUPINGS: readonly (readonly string[])[] = [['origin'], ['origin', 'destination']];

describe('ranking on the database', () => {
  let store: Store;
  const dbName = `test_ranking_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    store = await openStore(testMongoUri(), dbName);
    const inputs = RAWS.map((raw) => ({
      metric: 'flights',
      tags: [
        { key: 'origin', value: raw.origin },
        ...(raw.destination === undefined ? [] : [{ key: 'destination', value: raw.destination }]),
      ],
      time: new Date(raw.time),
      fields: FIELDS.flatMap((name) => (raw[name] === undefined ? [] : [{ name, value: raw[name] }])),
    }));
    await recordBatch(store, validateReadings(inputs, { maxBatchSize: inputs.length, receivedAt: 0 }), { receivedAt: 0 });
  });
  afterAll(async () => {
    await store.db.dropDatabase();
    await store.client.close();
  });

  const query = (keys: readonly string[], name: 'HOUR' | 'DAY' | null): BucketQuery => ({
    scope: { metric: 'flights' },
    fields: [...FIELDS],
    from: RANGE.from,
    to: RANGE.to,
    granularity: name === null ? null : granularity(name),
    grouping: { by: 'tags', keys },
  });

  it('the data has ties, a missing tag, and a group without delays', () => {
    const groups = referenceGroups('delay', ['origin', 'destination']);
    expect(groups.some((g) => g.values[1] === null)).toBe(true);
    expect(groups.some((g) => g.values[0] === 'Zed')).toBe(false);
    expect(referenceGroups('distance', ['origin']).some((g) => g.values[0] === 'Zed')).toBe(true);
    const bos = referenceGroups('delay', ['origin']).find((g) => g.values[0] === 'BOS')!;
    const den = referenceGroups('delay', ['origin']).find((g) => g.values[0] === 'DEN')!;
    expect([den.n, den.sum, den.sq]).toEqual([bos.n, bos.sum, bos.sq]);
  });

  it('aggregates: every statistic, direction, grouping and field, as a plain sort of all groups', async () => {
    let compared = 0;
    for (const keys of GROUPINGS) {
      for (const [fieldIndex, field] of FIELDS.entries()) {
        for (const orderBy of STATISTICS) {
          for (const direction of ['ASC', 'DESC'] as const) {
            for (const limit of [3, 100]) {
              const ranking: Ranking = { orderBy, direction, limit };
              const built = bucketsPipeline(query(keys, null));
              const pipeline = {
                ...built,
                stages: [...built.stages, ...aggregateRankingStages(ranking, { by: 'tags', keys }, fieldIndex)],
              };
              const rows = await aggregateBuckets<BucketRow>(store, pipeline);
              const expected = referenceRanking(field, keys, ranking);
              const label = `${field} ${orderBy} ${direction} limit ${limit} by ${keys.join(',')}`;
              expect(
                rows.map((row) => groupValues(row, keys)),
                label,
              ).toEqual(expected.map((g) => g.values));
              rows.forEach((row, i) => {
                expect(closeTo(row._rank as number, referenceValue(expected[i]!, orderBy)), `${label}: rank of row ${i}`).toBe(true);
                expect(row[`n${fieldIndex}`]).toBe(Number(expected[i]!.n));
              });
              compared += 1;
            }
          }
        }
      }
    }
    expect(compared).toBe(96);
  });

  it('bucket lists: the rows of the first groups, unchanged, in rank order; shaped and re-sorted the same', async () => {
    for (const name of ['HOUR', 'DAY'] as const) {
      const keys = ['origin', 'destination'];
      const all = await aggregateBuckets<BucketRow>(store, bucketsPipeline(query(keys, name)));
      const rowsOf = (values: (string | null)[]) =>
        all
          .filter((row) => JSON.stringify(groupValues(row, keys)) === JSON.stringify(values))
          .sort((a, b) => a._id!.t!.getTime() - b._id!.t!.getTime());
      for (const orderBy of STATISTICS) {
        for (const direction of ['ASC', 'DESC'] as const) {
          const ranking: Ranking = { orderBy, direction, limit: 4 };
          const label = `${name} ${orderBy} ${direction}`;
          const built = bucketsPipeline(query(keys, name));
          const rows = await aggregateBuckets<BucketRow>(store, {
            ...built,
            stages: [...built.stages, ...bucketRankingStages(ranking, { by: 'tags', keys })],
          });
          const expected = referenceRanking('delay', keys, ranking);
          // Groups come out contiguous, in rank order.
          const order: string[] = [];
          for (const row of rows) {
            const id = JSON.stringify(groupValues(row, keys));
            if (order.at(-1) !== id) order.push(id);
          }
          expect(order, label).toEqual(expected.map((g) => JSON.stringify(g.values)));
          // Each group's rows are those of the unranked pipeline, plus the rank.
          for (const group of expected) {
            const mine = rows
              .filter((row) => JSON.stringify(groupValues(row, keys)) === JSON.stringify(group.values))
              .sort((a, b) => a._id!.t!.getTime() - b._id!.t!.getTime());
            const rank = mine[0]!._rank as number;
            expect(closeTo(rank, referenceValue(group, orderBy)), label).toBe(true);
            expect(mine.map(({ _rank, ...row }) => row)).toEqual(rowsOf(group.values));
            expect(mine.every((row) => row._rank === rank)).toBe(true);
          }
          // Shaping sorts by tags; sortByRank restores the database's order.
          const shaped = shapeBucketGroups(rows, { ...RANGE, cut: granularity(name).cut, fill: 'NONE', groupBy: keys }, 0);
          const reordered = sortByRank(shaped, rows, ranking, keys);
          expect(
            reordered.map((g) => keys.map((key) => g.tags.find((tag) => tag.key === key)?.value ?? null)),
            label,
          ).toEqual(expected.map((g) => g.values));
        }
      }
    }
  });
});
