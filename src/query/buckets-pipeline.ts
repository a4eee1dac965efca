import type { Document } from 'mongodb';
import { HOUR_MS, MINUTE_MS, floorTo, DAY_MS } from '../model/time.ts';
import { bucketStartExpression, type Granularity } from './granularity.ts';
import { planSegments, type Segment } from './segments.ts';

/** Which bucket documents a query reads: a whole metric, or a list of series ids. */
export type BucketScope = { metric: string } | { series: readonly string[] };

/**
 * How a query splits its results: not at all, by the values of some tag keys
 * (one bucket list per origin airport, say), or by series (for batched `Series.buckets`).
 */
export type Grouping = { by: 'none' } | { by: 'tags'; keys: readonly string[] } | { by: 'series' };

/** A validated, normalized bucket query (see `query/spec.ts`). */
export interface BucketQuery {
  scope: BucketScope;
  /** The field whose statistics are read, a valid name. */
  field: string;
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
 * and the merged statistics.
 */
export interface BucketRow {
  _id: { t?: Date; g?: Record<string, string> | string } | null;
  n: number;
  sum: number;
  min: number;
  max: number;
  sq: number;
}

function scopeFilter(scope: BucketScope): Document {
  if ('metric' in scope) return { metric: scope.metric };
  return scope.series.length === 1 ? { series: scope.series[0] } : { series: { $in: [...scope.series] } };
}

function groupExpression(grouping: Grouping): Document | string | undefined {
  if (grouping.by === 'series') return '$series';
  if (grouping.by === 'tags') return Object.fromEntries(grouping.keys.map((key) => [key, `$tags.${key}`]));
  return undefined;
}

/** `date + <index> * width`: the start time of a slot keyed by its index as a string. */
const slotTime = (base: string, indexPath: string, width: number) => ({
  $add: [base, { $multiply: [{ $toInt: indexPath }, width] }],
});

/**
 * The stages that read one segment and emit one row per non-empty slot:
 * `{time, g, x: {n, sum, min, max, sq}}`. Only documents of the segment's days are
 * matched (index `series_date` or `metric_date`), only documents holding the field,
 * and a day segment never unwinds hours, an hour segment never unwinds minutes.
 */
export function segmentStages(query: BucketQuery, segment: Segment): Document[] {
  const field = query.field;
  const group = groupExpression(query.grouping);
  const keep = group === undefined ? {} : { g: group };
  const carry = group === undefined ? {} : { g: 1 };
  const match: Document = {
    ...scopeFilter(query.scope),
    date: { $gte: new Date(floorTo(segment.from, DAY_MS)), $lt: new Date(segment.to) },
    [`fields.${field}.n`]: { $gt: 0 },
  };
  const inRange = { $gte: new Date(segment.from), $lt: new Date(segment.to) };

  if (segment.level === 'day') {
    return [{ $match: match }, { $project: { _id: 0, time: '$date', x: `$fields.${field}`, ...keep } }];
  }
  const hours: Document[] = [
    { $match: match },
    { $project: { _id: 0, date: 1, hour: { $objectToArray: '$hours' }, ...keep } },
    { $unwind: '$hour' },
  ];
  if (segment.level === 'hour') {
    return [
      ...hours,
      { $project: { time: slotTime('$date', '$hour.k', HOUR_MS), x: `$hour.v.fields.${field}`, ...carry } },
      { $match: { time: inRange, 'x.n': { $gt: 0 } } },
    ];
  }
  return [
    ...hours,
    {
      $project: {
        hourTime: slotTime('$date', '$hour.k', HOUR_MS),
        hourCount: `$hour.v.fields.${field}.n`,
        minute: { $objectToArray: '$hour.v.minutes' },
        ...carry,
      },
    },
    { $match: { hourTime: { $gte: new Date(floorTo(segment.from, HOUR_MS)), $lt: new Date(segment.to) }, hourCount: { $gt: 0 } } },
    { $unwind: '$minute' },
    { $project: { time: slotTime('$hourTime', '$minute.k', MINUTE_MS), x: `$minute.v.${field}`, ...carry } },
    { $match: { time: inRange, 'x.n': { $gt: 0 } } },
  ];
}

/**
 * Builds the aggregation pipeline of a bucket query (pure, no I/O).
 *
 * The range is split into segments (see {@link planSegments}) read at the coarsest
 * level the granularity allows: a `DAY` query over whole days only reads day totals, a
 * `MINUTE` query reads minute slots. The first segment's stages start the pipeline,
 * each further segment is appended with `$unionWith` on `collection`, and one `$group`
 * merges the slot statistics per bucket (`$sum` of n, sum and sq, `$min`, `$max`) and
 * per group. Rows come out unsorted; see {@link BucketRow}.
 */
export function bucketsPipeline(query: BucketQuery, collection: string): Document[] {
  const coarsest = query.granularity?.level ?? 'day';
  const segments = planSegments(query.from, query.to, coarsest);
  if (segments.length === 0) throw new Error('bucketsPipeline: empty range');
  const [first, ...rest] = segments.map((segment) => segmentStages(query, segment));
  const stages: Document[] = [...first!];
  for (const pipeline of rest) stages.push({ $unionWith: { coll: collection, pipeline } });

  const id: Document = {};
  if (query.granularity) id.t = bucketStartExpression('$time', query.granularity.cut);
  if (query.grouping.by !== 'none') id.g = '$g';
  stages.push({
    $group: {
      _id: Object.keys(id).length === 0 ? null : id,
      n: { $sum: '$x.n' },
      sum: { $sum: '$x.sum' },
      min: { $min: '$x.min' },
      max: { $max: '$x.max' },
      sq: { $sum: '$x.sq' },
    },
  });
  return stages;
}
