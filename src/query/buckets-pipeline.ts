import type { Document } from 'mongodb';
import { tagPair } from '../model/series.ts';
import type { Stats } from '../model/stats.ts';
import type { TagFilter } from './spec.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, floorTo } from '../model/time.ts';
import { bucketStartExpression, type Granularity } from './granularity.ts';
import { planSegments, type Segment } from './segments.ts';

/**
 * Which bucket documents a query reads: the series of a metric whose tags pass every
 * filter of `where` (all of them when `where` is empty), or a list of series ids.
 */
export type BucketScope = { metric: string; where?: readonly TagFilter[] } | { series: readonly string[] };

/**
 * How a query splits its results: not at all, by the values of some tag keys
 * (one bucket list per origin airport, say), or by series (for batched `Series.buckets`).
 */
export type Grouping = { by: 'none' } | { by: 'tags'; keys: readonly string[] } | { by: 'series' };

/** A validated, normalized bucket query (see `query/spec.ts`). */
export interface BucketQuery {
  scope: BucketScope;
  /** The fields whose statistics are read (valid names, at least one), all in one pass. */
  fields: readonly string[];
  /** Half-open range `[from, to)` in ms since epoch, UTC, whole minutes, `from < to`. */
  from: number;
  to: number;
  /** Bucket size; null computes one aggregate over the whole range. */
  granularity: Granularity | null;
  grouping: Grouping;
}

/**
 * One output row of a bucket pipeline: the bucket start `t` (absent for an aggregate),
 * the group `g` (tag values keyed by tag key, or a series id; absent when not grouped)
 * and the merged statistics of each field of the query, by position: `n0`, `sum0`,
 * `min0`, `max0`, `sq0` for the first field, `n1`… for the second (see {@link rowStats}).
 */
export interface BucketRow {
  _id: { t?: Date; g?: Record<string, string> | string } | null;
  [statistic: string]: unknown;
}

/** The statistics of the field at `index` (its position in `BucketQuery.fields`) in a row; n is 0 when it had none. */
export function rowStats(row: BucketRow, index: number): Stats {
  return {
    n: (row[`n${index}`] as number | undefined) ?? 0,
    sum: (row[`sum${index}`] as number | undefined) ?? 0,
    min: (row[`min${index}`] as number | null | undefined) ?? Infinity,
    max: (row[`max${index}`] as number | null | undefined) ?? -Infinity,
    sq: (row[`sq${index}`] as number | undefined) ?? 0,
  };
}

/** The disjunction of `tests` (a query filter or an expression), without `$or` for a single test. */
const anyOf = (tests: Document[]): Document => (tests.length === 1 ? tests[0]! : { $or: tests });

/** Query filter for documents holding readings of any of `fields`. */
const documentsWithReadings = (fields: readonly string[]) => anyOf(fields.map((field) => ({ [`fields.${field}.n`]: { $gt: 0 } })));

/** A document filter split in two: the part an index serves, and the part checked on what it selects. */
export interface SplitFilter {
  indexed: Document;
  residual: Document;
}

/**
 * The document filter of a scope. Tag filters become conditions on `tagPairs`, an
 * equality for a single value, so `{metric, tagPairs, date}` serves them: the most
 * selective one (fewest values) goes into `indexed`, the others into `residual`.
 */
export function scopeFilter(scope: BucketScope): SplitFilter {
  if ('series' in scope) {
    return { indexed: scope.series.length === 1 ? { series: scope.series[0] } : { series: { $in: [...scope.series] } }, residual: {} };
  }
  const where = [...(scope.where ?? [])].sort((a, b) => a.in.length - b.in.length);
  const conditions = where.map((tag) =>
    tag.in.length === 1 ? { tagPairs: tagPair(tag.key, tag.in[0]!) } : { tagPairs: { $in: tag.in.map((value) => tagPair(tag.key, value)) } },
  );
  const [first, ...rest] = conditions;
  return { indexed: { metric: scope.metric, ...first }, residual: rest.length > 0 ? { $and: rest } : {} };
}

/**
 * Pipeline on the series registry that counts the groups a query grouped by `keys` can
 * have: the distinct combinations of those tag values among the series of `metric`
 * matching `where` (series lacking a key group together, as in the bucket pipeline).
 * It yields one document `{groups: n}`, none when no series matches. The registry has
 * one small document per series, so this is cheap next to the bucket pipeline whose
 * size it bounds.
 */
export function seriesGroupsPipeline(metric: string, where: readonly TagFilter[], keys: readonly string[]): Document[] {
  const { indexed, residual } = scopeFilter({ metric, where });
  return [
    { $match: indexed },
    ...(Object.keys(residual).length > 0 ? [{ $match: residual }] : []),
    { $group: { _id: groupExpression({ by: 'tags', keys }) } },
    { $count: 'groups' },
  ];
}

function groupExpression(grouping: Grouping): Document | string | undefined {
  if (grouping.by === 'series') return '$series';
  if (grouping.by === 'tags') return Object.fromEntries(grouping.keys.map((key) => [key, `$tags.${key}`]));
  return undefined;
}

const hourTime = (hourKey: string) => ({ $add: ['$date', { $multiply: [{ $toInt: hourKey }, HOUR_MS] }] });
const minuteTime = (hourKey: string, minuteKey: string) => ({
  $add: ['$date', { $multiply: [{ $toInt: hourKey }, HOUR_MS] }, { $multiply: [{ $toInt: minuteKey }, MINUTE_MS] }],
});
const within = (expression: unknown, from: number, to: number) => ({
  $and: [{ $gte: [expression, new Date(from)] }, { $lt: [expression, new Date(to)] }],
});
/** True when any of the fields at `statsPath(field)` has readings. */
const anyReadings = (fields: readonly string[], statsPath: (field: string) => string) =>
  anyOf(fields.map((field) => ({ $gt: [`${statsPath(field)}.n`, 0] })));
/** The statistics of every field as one object `{v0: <stats of field 0>, v1: …}`. */
const fieldStats = (fields: readonly string[], statsPath: (field: string) => string) =>
  Object.fromEntries(fields.map((field, i) => [`v${i}`, `${statsPath(field)}`]));

/**
 * Expression for the slots one segment reads from a bucket document, as an array of
 * `{time, x}` (x: `{v0, v1, …}`, the statistics of each field). It only looks inside
 * documents of the segment's days; a day segment reads the day totals, an hour segment
 * the hour slots in range, a minute segment the minute slots in range of the hours that
 * overlap it. Slots where none of the fields has readings are left out.
 */
export function segmentSlots(fields: readonly string[], segment: Segment): Document {
  const { from, to } = segment;
  let slots: unknown;
  if (segment.level === 'day') {
    slots = [{ time: '$date', x: fieldStats(fields, (f) => `$fields.${f}`) }];
  } else if (segment.level === 'hour') {
    const stats = (f: string) => `$$h.v.fields.${f}`;
    slots = {
      $map: {
        input: {
          $filter: {
            input: { $objectToArray: '$hours' },
            as: 'h',
            cond: { $and: [within(hourTime('$$h.k'), from, to), anyReadings(fields, stats)] },
          },
        },
        as: 'h',
        in: { time: hourTime('$$h.k'), x: fieldStats(fields, stats) },
      },
    };
  } else {
    const minuteStats = (f: string) => `$$m.v.${f}`;
    const hours = {
      $filter: {
        input: { $objectToArray: '$hours' },
        as: 'h',
        cond: { $and: [within(hourTime('$$h.k'), floorTo(from, HOUR_MS), to), anyReadings(fields, (f) => `$$h.v.fields.${f}`)] },
      },
    };
    const minutesOfHour = {
      $map: {
        input: {
          $filter: {
            input: { $objectToArray: '$$this.v.minutes' },
            as: 'm',
            cond: { $and: [within(minuteTime('$$this.k', '$$m.k'), from, to), anyReadings(fields, minuteStats)] },
          },
        },
        as: 'm',
        in: { time: minuteTime('$$this.k', '$$m.k'), x: fieldStats(fields, minuteStats) },
      },
    };
    slots = { $reduce: { input: hours, initialValue: [], in: { $concatArrays: ['$$value', minutesOfHour] } } };
  }
  // Guard: only documents of the segment's days are looked into.
  return { $cond: [within('$date', floorTo(from, DAY_MS), to), slots, []] };
}

/** `$group` accumulators of every field: `n0`, `sum0`, `min0`, `max0`, `sq0`, `n1`… from `statsPath(field, i)`. */
const statistics = (fields: readonly string[], statsPath: (field: string, index: number) => string) =>
  Object.fromEntries(
    fields.flatMap((field, i) => {
      const x = statsPath(field, i);
      return [
        [`n${i}`, { $sum: `${x}.n` }],
        [`sum${i}`, { $sum: `${x}.sum` }],
        [`min${i}`, { $min: `${x}.min` }],
        [`max${i}`, { $max: `${x}.max` }],
        [`sq${i}`, { $sum: `${x}.sq` }],
      ];
    }),
  );

/**
 * Builds the aggregation pipeline of a bucket query (pure, no I/O).
 *
 * The range is split into segments (see {@link planSegments}) read at the coarsest
 * level the granularity allows: a `DAY` query over whole days only reads day totals, an
 * `HOUR` query hour slots, and only ragged range edges read finer slots. `$match`
 * selects the documents of the range's days (index `series_date` or `metric_date`)
 * that hold the field. When day totals answer everything, one `$group` sums them:
 *
 *   `$match` -> `$group`
 *
 * Otherwise each document's slots of every segment are gathered into one array
 * (`$objectToArray` over the hour and minute subdocuments, `$filter` to the range),
 * flattened and grouped:
 *
 *   `$match` -> `$project {slots}` -> `$unwind` -> `$group`
 *
 * `$group` merges the statistics per bucket start and group: `$sum` of count, sum and
 * sum of squares, `$min`, `$max` (seed 004's `_stats`). Rows come out unsorted; see
 * {@link BucketRow}.
 */
export function bucketsPipeline(query: BucketQuery): Document[] {
  const fields = query.fields;
  const segments = planSegments(query.from, query.to, query.granularity?.level ?? 'day');
  if (segments.length === 0) throw new Error('bucketsPipeline: empty range');
  // Two $match stages: the first is exactly an index range (`series_date`,
  // `metric_date` or `metric_tagPairs_date`); MongoDB merges adjacent $match stages
  // anyway, and a planner that does not (SecantusDB) would otherwise scan the collection.
  const scope = scopeFilter(query.scope);
  const match = [
    { $match: { ...scope.indexed, date: { $gte: new Date(floorTo(query.from, DAY_MS)), $lt: new Date(query.to) } } },
    { $match: { ...scope.residual, ...documentsWithReadings(fields) } },
  ];
  const group = groupExpression(query.grouping);
  /** `$group` _id: bucket start of the time at `timePath` and/or the group; null for one ungrouped aggregate. */
  const groupId = (timePath: string, groupRef: unknown) => {
    const id: Document = {};
    if (query.granularity) id.t = bucketStartExpression(timePath, query.granularity.cut);
    if (group !== undefined) id.g = groupRef;
    return Object.keys(id).length === 0 ? null : id;
  };

  if (segments.length === 1 && segments[0]!.level === 'day') {
    return [...match, { $group: { _id: groupId('$date', group), ...statistics(fields, (field) => `$fields.${field}`) } }];
  }
  const slots = segments.map((segment) => segmentSlots(fields, segment));
  return [
    ...match,
    {
      $project: {
        _id: 0,
        slot: slots.length === 1 ? slots[0] : { $concatArrays: slots },
        ...(group === undefined ? {} : { g: group }),
      },
    },
    { $unwind: '$slot' },
    { $group: { _id: groupId('$slot.time', '$g'), ...statistics(fields, (_field, i) => `$slot.x.v${i}`) } },
  ];
}
