import { metricOfSeriesKey } from '../auth/access.ts';
import { parseSeriesAggregateQuery, parseSeriesBucketsQuery, parseSeriesListQuery } from '../engine/query.ts';
import { seriesId, tagList } from '../model/series.ts';
import type { Edge } from '../storage/read.ts';
import type { SeriesDocument } from '../storage/store.ts';
import { AggregateRef } from './aggregate.ts';
import { BucketRef, bucketArgs, rangeArgs } from './bucket.ts';
import { builder, type ArgBuilder } from './builder.ts';
import { TagFilterRef, TagRef } from './tag.ts';

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
      resolve: (series, args, ctx) => ctx.engine.seriesBuckets(series, parseSeriesBucketsQuery(args)),
    }),
    aggregate: t.field({
      type: AggregateRef,
      description:
        'Statistics of one field of this series over `[from, to)` (count 0 and nulls without readings); batched like `buckets`. Errors as `Query.aggregate`.',
      args: rangeArgs(t.arg),
      resolve: (series, args, ctx) => ctx.engine.seriesAggregate(series, parseSeriesAggregateQuery(args)),
    }),
  }),
});

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
