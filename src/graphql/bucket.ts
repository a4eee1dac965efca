import { parseBucketsQuery } from '../engine/query.ts';
import { GRANULARITIES, GRANULARITY_NAMES, WEEKDAYS, type Weekday } from '../query/granularity.ts';
import type { ChartBucket, ChartGroup } from '../engine/engine.ts';
import { builder, type ArgBuilder } from './builder.ts';
import { chartArgs, rankingArgs } from './chart.ts';
import { selectedWants } from './lookahead.ts';
import { PERCENTILE_GUARANTEE, percentileOf, StatisticsRef } from './statistics.ts';
import { TagFilterRef, TagRef } from './tag.ts';

/** `Granularity` enum, generated from the granularity table in `query/granularity.ts`. */
export const GranularityRef = builder.enumType('Granularity', {
  description:
    "Bucket size, cut in the query's `timeZone` (default UTC): minutes and hours aligned to the zone's offset (a +05:45 zone starts hours at :45 UTC), six hours, days, weeks (Monday unless `weekStart`), months, quarters and years as local calendar periods (a day with a daylight-saving change lasts 23 or 25 hours). Each bucket is computed from the coarsest stored level (day totals, hour slots or minute slots) that never straddles one of its boundaries.",
  values: Object.fromEntries(
    GRANULARITY_NAMES.map((name) => [name, { value: name, description: GRANULARITIES[name].description }]),
  ) as Record<keyof typeof GRANULARITIES, { value: keyof typeof GRANULARITIES; description: string }>,
});

/** `Weekday` enum: the first day of WEEK buckets. */
export const WeekdayRef = builder.enumType('Weekday', {
  description: 'A day of the week.',
  values: Object.fromEntries(
    WEEKDAYS.map((day) => [day, { value: day, description: `${day[0]}${day.slice(1).toLowerCase()}.` }]),
  ) as Record<Weekday, { value: Weekday; description: string }>,
});

/** `Fill` enum: how empty buckets are listed. */
export const FillRef = builder.enumType('Fill', {
  description: 'How a bucket list treats buckets without readings.',
  values: {
    NULL: { value: 'NULL', description: 'List every bucket of the range; empty ones have count 0 and null statistics.' },
    NONE: { value: 'NONE', description: 'List only buckets with readings.' },
    ZERO: {
      value: 'ZERO',
      description:
        'List every bucket; empty ones have 0 for every statistic but `count` (which stays 0, the real number of readings), and null `first`, `last` and percentiles.',
    },
    PREVIOUS: {
      value: 'PREVIOUS',
      description:
        'List every bucket; empty ones repeat the statistics of the last bucket with readings, `first`, `last` and percentiles included (null before the first).',
    },
    LINEAR: {
      value: 'LINEAR',
      description:
        'List every bucket; empty ones interpolate each statistic linearly in time between the nearest buckets with readings (null at the ends); `first`, `last` and percentiles stay null.',
    },
  } as const,
});

/** `Bucket` type: one time bucket and its statistics. */
export const BucketRef = builder.objectRef<ChartBucket>('Bucket').implement({
  description: 'One time bucket `[start, end)` (UTC) and the statistics of its readings.',
  interfaces: [StatisticsRef],
  fields: (t) => ({
    start: t.expose('start', {
      type: 'DateTime',
      description:
        'Start of the bucket, aligned to the granularity. The first bucket may start before `from`; it only counts readings from `from` on.',
    }),
    end: t.expose('end', {
      type: 'DateTime',
      description: 'Real end of the bucket (exclusive): a local day with a daylight-saving change lasts 23 or 25 hours.',
    }),
    partial: t.exposeBoolean('partial', {
      description:
        'True when the range `[from, to)` covers only part of the bucket (only the first and the last bucket can be): its statistics are of that part.',
    }),
    localStart: t.exposeString('localStart', {
      description: "The start as wall-clock time of the query's `timeZone` with its offset, RFC 3339, e.g. `2001-04-01T00:00:00-05:00`.",
    }),
    filled: t.exposeBoolean('filled', {
      description: 'True when the bucket has no readings and its statistics come from `fill` (ZERO, PREVIOUS, LINEAR).',
    }),
    value: t.exposeFloat('value', {
      nullable: true,
      description: 'The chosen `statistic`, after `transform` (the statistic itself without one).',
    }),
    previous: t.exposeFloat('previous', {
      nullable: true,
      description: '`value` of the bucket at the same position of the earlier period (`compareWith`); null without one.',
    }),
    previousStart: t.expose('previousStart', { type: 'DateTime', nullable: true, description: 'Start of that earlier bucket.' }),
    change: t.exposeFloat('change', { nullable: true, description: '`value - previous`.' }),
    relativeChange: t.exposeFloat('relativeChange', {
      nullable: true,
      description: '`(value - previous) / |previous|` as a fraction (0.25 is 25% more); null when `previous` is 0 or null.',
    }),
  }),
});

/**
 * `BucketColumns`: the buckets of a list as parallel arrays, the chart-ready flat form
 * (uPlot and most chart libraries take `[times, values…]`): 10,000 buckets cost a few
 * arrays of numbers instead of 10,000 objects with ISO strings.
 */
export const BucketColumnsRef = builder.objectRef<readonly ChartBucket[]>('BucketColumns').implement({
  description:
    'The buckets of a list as parallel arrays, index i being the i-th bucket in time order: compact to send and to parse, and the shape chart libraries take. Statistics are null where a bucket has no readings.',
  fields: (t) => {
    const column = (
      name: 'sum' | 'min' | 'max' | 'avg' | 'variance' | 'stddev' | 'sampleStddev' | 'increase' | 'rate' | 'value' | 'previous' | 'change',
      description: string,
    ) =>
      t.field({
        type: ['Float'],
        nullable: { list: false, items: true },
        description,
        resolve: (buckets) => buckets.map((bucket) => bucket[name]),
      });
    return {
      times: t.field({
        type: ['Float'],
        description: 'Bucket starts in epoch milliseconds (UTC instants).',
        resolve: (buckets) => buckets.map((bucket) => bucket.start.getTime()),
      }),
      ends: t.field({
        type: ['Float'],
        description: 'Bucket ends (exclusive) in epoch milliseconds.',
        resolve: (buckets) => buckets.map((bucket) => bucket.end.getTime()),
      }),
      count: t.field({
        type: ['SafeInt'],
        description: 'Number of readings per bucket.',
        resolve: (buckets) => buckets.map((bucket) => bucket.count),
      }),
      sum: column('sum', 'Sum per bucket.'),
      min: column('min', 'Smallest value per bucket.'),
      max: column('max', 'Largest value per bucket.'),
      avg: column('avg', 'Mean per bucket.'),
      variance: column('variance', 'Population variance per bucket.'),
      stddev: column('stddev', 'Population standard deviation per bucket.'),
      sampleStddev: column('sampleStddev', 'Sample standard deviation per bucket (null below 2 readings).'),
      first: t.field({
        type: ['Float'],
        nullable: { list: false, items: true },
        description: 'Value of the earliest reading per bucket (see `Bucket.first`).',
        resolve: (buckets) => buckets.map((bucket) => bucket.first?.v ?? null),
      }),
      last: t.field({
        type: ['Float'],
        nullable: { list: false, items: true },
        description: 'Value of the latest reading per bucket (see `Bucket.last`).',
        resolve: (buckets) => buckets.map((bucket) => bucket.last?.v ?? null),
      }),
      percentile: t.field({
        type: ['Float'],
        nullable: { list: false, items: true },
        args: { p: t.arg.float({ required: true, description: 'The percentile, 0 to 100. Errors: INVALID_ARGUMENT.' }) },
        description: `The \`p\` percentile per bucket. ${PERCENTILE_GUARANTEE}`,
        resolve: (buckets, args) => buckets.map((bucket) => percentileOf(bucket, args.p)),
      }),
      increase: column('increase', "A counter's reset-aware increase per bucket (see `Bucket.increase`)."),
      rate: column('rate', "A counter's increase per second per bucket (see `Bucket.rate`)."),
      value: column('value', '`value` per bucket (the chosen statistic after its transform).'),
      previous: column('previous', '`previous` per bucket (with `compareWith`).'),
      change: column('change', '`change` per bucket (with `compareWith`).'),
      filled: t.field({
        type: ['Boolean'],
        description: 'Whether each bucket was made up by `fill`.',
        resolve: (buckets) => buckets.map((bucket) => bucket.filled),
      }),
    };
  },
});

/** `BucketGroup` type: the buckets of one group. */
export const BucketGroupRef = builder.objectRef<ChartGroup>('BucketGroup').implement({
  description: 'The buckets of one group of series, in time order.',
  fields: (t) => ({
    tags: t.field({
      type: [TagRef],
      resolve: (group) => group.tags,
      description: 'The `groupBy` tag values of this group, in `groupBy` order; empty when the query is not grouped.',
    }),
    granularity: t.field({
      type: GranularityRef,
      resolve: (group) => group.granularity,
      description: 'The granularity of the buckets: the one asked for, or the one the engine picked for `maxDataPoints`.',
    }),
    buckets: t.field({ type: [BucketRef], resolve: (group) => group.buckets, description: 'Buckets in time order.' }),
    columns: t.field({
      type: BucketColumnsRef,
      resolve: (group) => group.buckets,
      description:
        'The same buckets as parallel arrays (epoch-millisecond times and one array per statistic): the compact, chart-ready form.',
    }),
  }),
});

/** Arguments of every range query: field, range. */
export const rangeArgs = (arg: ArgBuilder) => ({
  field: arg.string({ required: true, description: 'Field name, e.g. `delay`.' }),
  from: arg({
    type: 'Time',
    required: true,
    description:
      'Start of the range (inclusive), rounded down to the minute: epoch ms, RFC 3339, or a local date or date-time read in `timeZone`.',
  }),
  to: arg({
    type: 'Time',
    required: true,
    description: 'End of the range (exclusive), rounded down to the minute; the same forms as `from`.',
  }),
  timeZone: arg.string({
    defaultValue: 'UTC',
    description: 'IANA time zone (e.g. `America/New_York`, `Asia/Kolkata`) in which local `from`/`to` are read. Errors: INVALID_TIME_ZONE.',
  }),
});

/** Arguments of queries over a metric's series: metric, tag filters, grouping. */
export const selectionArgs = (arg: ArgBuilder) => ({
  metric: arg.string({ required: true, description: 'Metric name, e.g. `flights`.' }),
  where: arg({ type: [TagFilterRef], description: 'Tag filters, all of which must hold.' }),
  groupBy: arg.stringList({ description: 'Tag keys to group by (at most 8), e.g. `["origin"]`.' }),
});

/** Arguments that shape a bucket list: granularity and fill. */
export const bucketArgs = (arg: ArgBuilder) => ({
  granularity: arg({
    type: GranularityRef,
    description:
      'Bucket size; omitted: the finest granularity whose bucket count over the range stays within `maxDataPoints` (see `BucketGroup.granularity`).',
  }),
  maxDataPoints: arg.int({
    description:
      "Without `granularity`: the most buckets the list may have (default 1,000), as Grafana's maxDataPoints; the engine picks the finest granularity that fits. Errors: INVALID_ARGUMENT, TOO_MANY_BUCKETS (not even YEAR fits).",
  }),
  weekStart: arg({ type: WeekdayRef, description: 'First day of WEEK buckets (default MONDAY, as ISO 8601).' }),
  fill: arg({
    type: FillRef,
    defaultValue: 'NULL',
    description: 'How empty buckets are listed and filled; filled buckets say `filled: true`.',
  }),
  ...chartArgs(arg),
});

builder.queryField('buckets', (t) =>
  t.field({
    type: [BucketGroupRef],
    description:
      'Time buckets of one field of a metric over `[from, to)`, filtered by tags and optionally grouped by tag keys (one bucket list per group, sorted by tag values). `from` and `to` are rounded down to the whole minute (the stored resolution). Errors: INVALID_NAME, INVALID_TIME, INVALID_RANGE (from >= to), DUPLICATE_NAME, TOO_MANY_NAMES, TOO_MANY_BUCKETS (the request could return more than MAX_BUCKETS buckets: groups x buckets of the range, summed over every field of the request, a bucket with percentiles counting 10, checked before anything runs), TOO_MANY_FILTER_VALUES (more than MAX_FILTER_VALUES `where` values in the request), QUERY_TIMEOUT (longer than QUERY_TIMEOUT_MS), DETAIL_EXPIRED (the buckets need minute or hour slots removed by the metric retention policy: `extensions.availableFrom` tells where they begin; see `setRetention`). An unknown metric, field or tag value gives an empty list. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN).',
    args: { ...selectionArgs(t.arg), ...rangeArgs(t.arg), ...bucketArgs(t.arg), ...rankingArgs(t.arg) },
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    resolve: (_root, args, ctx, info) => ctx.engine.buckets(parseBucketsQuery(args, selectedWants(info))),
  }),
);
