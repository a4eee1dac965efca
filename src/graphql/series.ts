import { metricOfSeriesKey } from '../auth/access.ts';
import {
  parseFieldName,
  parseLatestCount,
  parseLatestValuesQuery,
  parseSeriesAggregateQuery,
  parseSeriesBucketsQuery,
  parseSeriesListQuery,
} from '../engine/query.ts';
import { MAX_LATEST_READINGS } from '../model/statistics-settings.ts';
import { seriesId, tagList } from '../model/series.ts';
import type { SeriesDocument } from '../storage/store.ts';
import { AggregateRef } from './aggregate.ts';
import { BucketRef, bucketArgs, rangeArgs } from './bucket.ts';
import { builder, type ArgBuilder } from './builder.ts';
import { selectedWants } from './lookahead.ts';
import { TimedValueRef } from './statistics.ts';
import type { TimedValue } from '../model/stats.ts';
import { TagFilterRef, TagRef } from './tag.ts';
import type { LatestReading, Edge } from '../storage/latest.ts';

const readingTime = (edge: Edge, description: string) =>
  builder.objectField(SeriesRef, edge === 'first' ? 'firstReadingAt' : 'lastReadingAt', (t) =>
    t.loadable({
      type: 'DateTime',
      nullable: true,
      description,
      load: (ids: string[], ctx) => ctx.engine.readingTimes(ids, edge),
      resolve: (series) => series._id,
    }),
  );

/** `Series` type: one metric + tag set, backed by the series registry. */
export const SeriesRef = builder.objectRef<SeriesDocument>('Series').implement({
  description:
    "A series: a metric and one set of tag values (InfluxDB's series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments.",
  fields: (t) => ({
    id: t.id({
      resolve: (series) => series.key,
      description: 'The series key in InfluxDB line-protocol form, e.g. `flights,destination=PHL,origin=LAS`.',
    }),
    metric: t.exposeString('metric', { description: 'Metric name.' }),
    tags: t.field({ type: [TagRef], resolve: (series) => tagList(series.tags), description: 'Tags, sorted by key.' }),
    fields: t.stringList({ resolve: (series) => [...series.fields].sort(), description: 'Fields ever recorded, sorted.' }),
    buckets: t.field({
      type: [BucketRef],
      description:
        'Time buckets of one field of this series over `[from, to)`. Asked for on many series (or several fields) in one request, they are computed by one pipeline. Errors as `Query.buckets`; TOO_MANY_BUCKETS counts the buckets of every series, field and alias of the request.',
      args: { ...rangeArgs(t.arg), ...bucketArgs(t.arg) },
      resolve: (series, args, ctx, info) => ctx.engine.seriesBuckets(series, parseSeriesBucketsQuery(args, selectedWants(info))),
    }),
    aggregate: t.field({
      type: AggregateRef,
      description:
        'Statistics of one field of this series over `[from, to)` (count 0 and nulls without readings); batched like `buckets`. Errors as `Query.aggregate`.',
      args: rangeArgs(t.arg),
      resolve: (series, args, ctx, info) => ctx.engine.seriesAggregate(series, parseSeriesAggregateQuery(args, selectedWants(info))),
    }),
  }),
});

/** `FieldValue` type: one field's value in a reading. */
const FieldValueRef = builder.objectRef<{ name: string; value: number }>('FieldValue').implement({
  description: "One field's value in a reading.",
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Field name.' }),
    value: t.exposeFloat('value', { description: 'The value.' }),
  }),
});

/** `LatestReading` type: one raw reading of a series. */
const LatestReadingRef = builder.objectRef<LatestReading>('LatestReading').implement({
  description: 'One reading of a series as it was recorded: its time and the values of its fields.',
  fields: (t) => ({
    time: t.field({ type: 'DateTime', resolve: (reading) => new Date(reading.t), description: 'When the reading was taken (UTC).' }),
    values: t.field({
      type: [FieldValueRef],
      resolve: (reading) => Object.entries(reading.f).map(([name, value]) => ({ name, value })),
      description: 'Every field of the reading, in the order it was sent.',
    }),
    value: t.float({
      nullable: true,
      args: { field: t.arg.string({ required: true, description: 'Field name.' }) },
      resolve: (reading, args) => reading.f[args.field] ?? null,
      description: 'The value of one field; null when the reading does not carry it.',
    }),
  }),
});

builder.objectFields(SeriesRef, (t) => ({
  latestValue: t.loadable({
    type: TimedValueRef,
    nullable: true,
    description:
      "The latest reading of `field`: a dashboard's current value, read from the series' newest series-day document holding the field (one indexed look-up; asked for on many series, they are looked up together). Null without readings, or when that document was written before latest values were kept. Errors: INVALID_NAME.",
    args: { field: t.arg.string({ required: true, description: 'Field name, e.g. `delay`.' }) },
    load: async (keys: { id: string; field: string; metric: string }[], ctx) =>
      (await ctx.engine.latestValues(keys)).map((value) => value ?? null),
    loaderOptions: { cacheKeyFn: (key: { id: string; field: string }) => `${key.id}\u0000${key.field}` },
    resolve: (series, args) => ({ id: series._id, field: parseFieldName(args.field, 'field'), metric: series.metric }),
  }),
  latest: t.field({
    type: [LatestReadingRef],
    description: `The latest \`n\` readings of the series, newest first, as recorded (every field of each reading): kept in each series-day document by the same update that records them (the newest ${MAX_LATEST_READINGS} of each day at most, fewer if the metric is set to keep fewer, see \`setMetricStatistics\`). Fewer than \`n\` when the series has fewer, or when an older day's readings were written before latest readings were kept. Errors: INVALID_ARGUMENT.`,
    args: {
      n: t.arg.int({ defaultValue: 10, description: `How many readings, 1 to ${MAX_LATEST_READINGS} (default 10).` }),
    },
    resolve: (series, args, ctx) => ctx.engine.latestReadings(series._id, parseLatestCount(args.n ?? 10, 'n')),
  }),
}));

readingTime('first', 'Exact time of the earliest reading (UTC); null without readings.');
readingTime('last', 'Exact time of the latest reading (UTC); null without readings.');

/** Arguments of series lists: tag filters and a limit. */
export const seriesListArgs = (arg: ArgBuilder) => ({
  where: arg({ type: [TagFilterRef], description: 'Tag filters, all of which must hold.' }),
  limit: arg.int({
    defaultValue: 100,
    description:
      'Most series to return, in series key order: at least 1, at most MAX_SERIES (1,000 unless configured), which also bounds the series all lists of a request return together.',
  }),
});

builder.queryFields((t) => ({
  series: t.field({
    type: [SeriesRef],
    description:
      'The series of a metric whose tags match `where`, sorted by series key. An unknown metric or tag value gives an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT (limit below 1), TOO_MANY_SERIES (limit above MAX_SERIES, or more than MAX_SERIES series listed by the request), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN.',
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    args: { metric: t.arg.string({ required: true, description: 'Metric name.' }), ...seriesListArgs(t.arg) },
    resolve: (_root, args, ctx) => {
      const list = parseSeriesListQuery(args);
      return ctx.engine.listSeries(list.metric, list.where, list.limit);
    },
  }),
  seriesById: t.field({
    type: SeriesRef,
    nullable: true,
    description:
      "One series by its id (the series key, e.g. `flights,destination=PHL,origin=LAS`); null when unknown. Counts as one series of the request's MAX_SERIES. Needs scope `read` and a token that may touch the metric the key starts with. Errors: FORBIDDEN.",
    authScopes: (_root, args) => ({ read: true, metric: metricOfSeriesKey(String(args.id)) }),
    args: { id: t.arg.id({ required: true, description: 'Series key.' }) },
    resolve: (_root, args, ctx) => ctx.engine.seriesById(seriesId(String(args.id))),
  }),
}));

/** `GroupLatestValue` type: the latest reading of a field in one group of series. */
const GroupLatestValueRef = builder
  .objectRef<{ tags: { key: string; value: string }[]; latest: TimedValue | null }>('GroupLatestValue')
  .implement({
    description: 'The latest reading of a field among the series of one group.',
    fields: (t) => ({
      tags: t.field({
        type: [TagRef],
        resolve: (group) => group.tags,
        description: 'The `groupBy` tag values of the group, in `groupBy` order; empty when not grouped.',
      }),
      latest: t.field({
        type: TimedValueRef,
        nullable: true,
        resolve: (group) => group.latest,
        description: 'The latest reading; null when a series of the group has only data written before latest values were kept.',
      }),
    }),
  });

builder.queryField('latestValues', (t) =>
  t.field({
    type: [GroupLatestValueRef],
    description:
      'The current value of `field` per group: the latest reading among the series of `metric` matching `where`, grouped by `groupBy` (one group without it), sorted by tag values; groups without a reading of the field are left out. Each series is read from its newest document holding the field (one indexed look-up per series), so the series count against MAX_SERIES. Errors: INVALID_NAME, TOO_MANY_SERIES, TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN).',
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `flights`.' }),
      field: t.arg.string({ required: true, description: 'Field name, e.g. `delay`.' }),
      where: t.arg({ type: [TagFilterRef], description: 'Tag filters, all of which must hold.' }),
      groupBy: t.arg.stringList({ description: 'Tag keys to group by (at most 8), e.g. `["origin"]`.' }),
    },
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    resolve: (_root, args, ctx) => {
      const query = parseLatestValuesQuery(args);
      return ctx.engine.latestByGroup(query.metric, query.field, query.where, query.groupBy);
    },
  }),
);
