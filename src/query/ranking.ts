/**
 * Ranking of grouped results ("the 10 worst origins by average delay"): stages to
 * append after the `$group` of a bucket pipeline (`bucketsPipeline`) so the database
 * sorts the groups by a statistic and returns only the first `limit` of them, instead
 * of shipping every group to the engine. They read only the rows of that `$group`, never
 * a stored document, so the bucket pipeline's read projection is all the documents need.
 */
import type { Document } from 'mongodb';
import { ErrorCode, InputError } from '../errors.ts';
import type { Tag } from '../model/series.ts';
import { emptyStats, mergeStats, summarize, type Stats } from '../model/stats.ts';
import { rowStats, type BucketRow, type Grouping } from './buckets-pipeline.ts';

/** A statistic groups can be ranked by: of the ranked field over the whole range. */
export type RankStatistic = 'count' | 'sum' | 'min' | 'max' | 'avg' | 'stddev';

/** Every {@link RankStatistic}. */
export const RANK_STATISTICS: readonly RankStatistic[] = ['count', 'sum', 'min', 'max', 'avg', 'stddev'];

/** Sort order: `ASC` smallest first, `DESC` largest first. */
export type SortDirection = 'ASC' | 'DESC';

/** Smallest and largest `limit` of a ranking (the same bounds as the API's other limits). */
export const RANK_LIMIT = { min: 1, max: 10_000 } as const;

/**
 * A ranking of groups: by `orderBy` of one field over the whole range, in `direction`,
 * keeping the first `limit` groups. `stddev` is the population standard deviation, as
 * in `summarize` (`model/stats.ts`).
 */
export interface Ranking {
  orderBy: RankStatistic;
  direction: SortDirection;
  limit: number;
}

/** The field each ranked row carries: the group's value of the ranking statistic, as the database computed and sorted it. */
export const RANK_FIELD = '_rank';

/**
 * Checks a ranking's arguments.
 * @throws InputError INVALID_ARGUMENT for an unknown statistic or direction (inputPath
 * `orderBy`) or a `limit` that is not an integer in {@link RANK_LIMIT} (inputPath `limit`).
 */
export function validateRanking(ranking: Ranking): Ranking {
  if (!RANK_STATISTICS.includes(ranking.orderBy)) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, `Cannot order by ${String(ranking.orderBy)}`, 'orderBy');
  }
  if (ranking.direction !== 'ASC' && ranking.direction !== 'DESC') {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, `Unknown sort direction ${String(ranking.direction)}`, 'orderBy');
  }
  if (!Number.isInteger(ranking.limit) || ranking.limit < RANK_LIMIT.min || ranking.limit > RANK_LIMIT.max) {
    throw new InputError(
      ErrorCode.INVALID_ARGUMENT,
      `limit must be an integer from ${RANK_LIMIT.min} to ${RANK_LIMIT.max}; got ${String(ranking.limit)}`,
      'limit',
    );
  }
  return ranking;
}

/** Field paths of one field's merged statistics (count, sum, min, max, sum of squares) in a document. */
interface StatsPaths {
  n: string;
  sum: string;
  min: string;
  max: string;
  sq: string;
}

/**
 * Aggregation expression of `statistic` from merged statistics at `paths` (with `$`),
 * for a group with at least one reading. Computed with the operations of `summarize`
 * (`model/stats.ts`) in the same order: avg `sum / n`; stddev
 * `sqrt(max(0, n*sq - sum^2) / n^2)`.
 */
export function rankExpression(statistic: RankStatistic, paths: StatsPaths): Document | string {
  switch (statistic) {
    case 'count':
      return paths.n;
    case 'sum':
      return paths.sum;
    case 'min':
      return paths.min;
    case 'max':
      return paths.max;
    case 'avg':
      return { $divide: [paths.sum, paths.n] };
    case 'stddev': {
      const spread = { $max: [0, { $subtract: [{ $multiply: [paths.n, paths.sq] }, { $multiply: [paths.sum, paths.sum] }] }] };
      return { $sqrt: { $divide: [spread, { $multiply: [paths.n, paths.n] }] } };
    }
  }
}

/** The `$sort` of ranked groups whose group value is at `groupPath`: the rank, then the group's tag values ascending. */
function rankSort(ranking: Ranking, grouping: Grouping, groupPath: string): Document {
  const sort: Document = { [RANK_FIELD]: ranking.direction === 'ASC' ? 1 : -1 };
  if (grouping.by === 'tags') for (const key of grouping.keys) sort[`${groupPath}.${key}`] = 1;
  else if (grouping.by === 'series') sort[groupPath] = 1;
  return { $sort: sort };
}

/**
 * Stages to append to an aggregate pipeline (`bucketsPipeline` with granularity null;
 * rows `{_id: {g}, n0, sum0, min0, max0, sq0, …}`, one per group) that keep the first
 * `ranking.limit` groups by the statistic of the field at `fieldIndex`:
 *
 *   `$match {n<i> > 0}` -> `$addFields {_rank}` -> `$sort {_rank, tag values}` -> `$limit`
 *
 * Groups without readings of that field are excluded (a batch of several fields may
 * hold rows where only another field has readings; they have no value to rank by,
 * and `shapeAggregates` leaves them out anyway). Ties are broken by the group's tag
 * values in `groupBy` order, each ascending whatever the direction (a series lacking
 * a key first, as MongoDB sorts a missing field before any string), or by series id;
 * so the answer is the same on every run. Each row keeps {@link RANK_FIELD}, and the
 * rows come out in rank order; shaping re-sorts by tags, so restore the order with
 * {@link sortByRank}.
 */
export function aggregateRankingStages(ranking: Ranking, grouping: Grouping, fieldIndex = 0): Document[] {
  const i = fieldIndex;
  const paths = { n: `$n${i}`, sum: `$sum${i}`, min: `$min${i}`, max: `$max${i}`, sq: `$sq${i}` };
  return [
    { $match: { [`n${i}`]: { $gt: 0 } } },
    { $addFields: { [RANK_FIELD]: rankExpression(ranking.orderBy, paths) } },
    rankSort(ranking, grouping, '_id.g'),
    { $limit: ranking.limit },
  ];
}

/**
 * Stages to append to a bucket pipeline (`bucketsPipeline` with a granularity; rows
 * `{_id: {t, g}, n0, …}`, one per bucket with readings and group) that keep the bucket
 * rows of the first `ranking.limit` groups by the statistic of the field at
 * `fieldIndex` over the whole range:
 *
 *   `$group` by group (totals of the field, the rows pushed) -> `$match {n > 0}` ->
 *   `$addFields {_rank}` -> `$sort {_rank, tag values}` -> `$limit` -> `$unwind` ->
 *   `$replaceRoot` (each row as it was, plus {@link RANK_FIELD})
 *
 * The group totals are those of the aggregate over the same range (the buckets
 * partition it). Exclusion of groups without readings and tie-breaking are as in
 * {@link aggregateRankingStages}. Rows come out grouped in rank order. `$group` holds
 * every row of the range in memory (MongoDB spills to disk past 100 MB from 6.0 on);
 * `$replaceRoot` and `$mergeObjects` need MongoDB 3.6.
 */
export function bucketRankingStages(ranking: Ranking, grouping: Grouping, fieldIndex = 0): Document[] {
  const i = fieldIndex;
  return [
    {
      $group: {
        _id: '$_id.g',
        rows: { $push: '$$ROOT' },
        n: { $sum: `$n${i}` },
        sum: { $sum: `$sum${i}` },
        min: { $min: `$min${i}` },
        max: { $max: `$max${i}` },
        sq: { $sum: `$sq${i}` },
      },
    },
    { $match: { n: { $gt: 0 } } },
    { $addFields: { [RANK_FIELD]: rankExpression(ranking.orderBy, { n: '$n', sum: '$sum', min: '$min', max: '$max', sq: '$sq' }) } },
    rankSort(ranking, grouping, '_id'),
    { $limit: ranking.limit },
    { $unwind: '$rows' },
    { $replaceRoot: { newRoot: { $mergeObjects: ['$rows', { [RANK_FIELD]: `$${RANK_FIELD}` }] } } },
  ];
}

/**
 * Compares two strings as MongoDB sorts them without a collation: by UTF-8 bytes,
 * which is the order of Unicode code points (JavaScript's `<` compares UTF-16 code
 * units, which differs for characters above U+FFFF against U+E000 to U+FFFF).
 */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * The order of two ranked groups as the ranking stages sort them: by rank (`sign` 1
 * ascending, -1 descending), then by tag values (or series id) ascending, a missing
 * value first, strings in code point order.
 */
function byRank(
  sign: number,
  a: { rank: number; values: readonly (string | null)[] },
  b: { rank: number; values: readonly (string | null)[] },
): number {
  if (a.rank !== b.rank) return sign * (a.rank < b.rank ? -1 : 1);
  for (let k = 0; k < a.values.length; k++) {
    const x = a.values[k]!;
    const y = b.values[k]!;
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    return compareCodePoints(x, y);
  }
  return 0;
}

/**
 * Puts shaped groups (bucket groups or aggregates, each with its `tags` in `groupBy`
 * order, as `query/shape.ts` builds them) into the order of a ranking, from the rows
 * the ranked pipeline returned: by the {@link RANK_FIELD} the database computed, then by
 * tag values as {@link aggregateRankingStages} does, so the order is exactly the
 * database's. Groups without a ranked row (there should be none) go last.
 * @param groupKeys the `groupBy` tag keys.
 */
export function sortByRank<T extends { tags: readonly Tag[] }>(
  items: readonly T[],
  rows: readonly BucketRow[],
  ranking: Ranking,
  groupKeys: readonly string[],
): T[] {
  const rankOf = new Map<string, number>();
  for (const row of rows) {
    const group = (row._id?.g ?? {}) as Record<string, unknown>;
    const values = groupKeys.map((key) => (typeof group[key] === 'string' ? (group[key] as string) : null));
    rankOf.set(JSON.stringify(values), row[RANK_FIELD] as number);
  }
  const keyed = items.map((item) => {
    const values = groupKeys.map((key) => item.tags.find((tag) => tag.key === key)?.value ?? null);
    return { item, values, rank: rankOf.get(JSON.stringify(values)) };
  });
  const sign = ranking.direction === 'ASC' ? 1 : -1;
  keyed.sort((a, b) => {
    if (a.rank === undefined || b.rank === undefined) return (a.rank === undefined ? 1 : 0) - (b.rank === undefined ? 1 : 0);
    return byRank(sign, { rank: a.rank, values: a.values }, { rank: b.rank, values: b.values });
  });
  return keyed.map(({ item }) => item);
}

/**
 * The ranking stages applied in memory to rows added up there (day summaries and the
 * documents' rows merged, `query/summaries.ts`, one row per bucket and group): the rows
 * {@link aggregateRankingStages} (an aggregate's rows) or {@link bucketRankingStages}
 * (bucket rows) keep, each with {@link RANK_FIELD}, in rank order. A group's rank is the
 * statistic of the field at `fieldIndex` over all its rows, from `summarize`
 * (`model/stats.ts`), as {@link rankExpression} computes it on the database (a value
 * that overflows ranks as +Infinity); groups without a reading of that field are left
 * out; ties are broken by tag values ascending (a missing value first, code point order)
 * or series id.
 */
export function rankRows(rows: readonly BucketRow[], ranking: Ranking, grouping: Grouping, fieldIndex = 0): BucketRow[] {
  const groups = new Map<string, { g: unknown; rows: BucketRow[]; stats: Stats }>();
  for (const row of rows) {
    const key = JSON.stringify(row._id?.g ?? null);
    let group = groups.get(key);
    if (group === undefined) {
      group = { g: row._id?.g, rows: [], stats: emptyStats() };
      groups.set(key, group);
    }
    group.rows.push(row);
    mergeStats(group.stats, rowStats(row, fieldIndex));
  }
  const values = (g: unknown): (string | null)[] => {
    if (grouping.by === 'series') return [typeof g === 'string' ? g : null];
    if (grouping.by !== 'tags') return [];
    const tags = (g ?? {}) as Record<string, unknown>;
    return grouping.keys.map((key) => (typeof tags[key] === 'string' ? (tags[key] as string) : null));
  };
  const sign = ranking.direction === 'ASC' ? 1 : -1;
  return [...groups.values()]
    .filter((group) => group.stats.n > 0)
    .map((group) => ({ group, rank: summarize(group.stats)[ranking.orderBy] ?? Number.POSITIVE_INFINITY, values: values(group.g) }))
    .sort((a, b) => byRank(sign, a, b))
    .slice(0, ranking.limit)
    .flatMap(({ group, rank }) => group.rows.map((row) => ({ ...row, [RANK_FIELD]: rank })));
}
