import { metricOfSeriesKey } from '../auth/access.ts';
import { ErrorCode, InputError } from '../errors.ts';
import { seriesId, tagList } from '../model/series.ts';
import { formatCount } from '../query/budget.ts';
import { bucketsPipeline, rowStats } from '../query/buckets-pipeline.ts';
import { bucketsPerGroup } from '../query/cost.ts';
import { summarize } from '../model/stats.ts';
import { bucketList, statsByStart } from '../query/shape.ts';
import { normalizeBucketing, normalizeRange, normalizeSelection, type TagFilter } from '../query/spec.ts';
import { findSeries, findSeriesByIds, seriesReadingTimes, type Edge } from '../storage/read.ts';
import type { SeriesDocument } from '../storage/store.ts';
import { AggregateRef } from './aggregate.ts';
import { BucketRef, bucketArgs, rangeArgs, reserveFilterValues } from './bucket.ts';
import { builder, type ArgBuilder } from './builder.ts';
import type { Context } from './context.ts';
import { TagFilterRef, TagRef } from './tag.ts';

const readingTime = (edge: Edge, description: string) =>
  builder.objectField(SeriesRef, edge === 'first' ? 'firstReadingAt' : 'lastReadingAt', (t) =>
    t.loadable({
      type: 'DateTime',
      nullable: true,
      description,
      load: (ids: string[], ctx) => seriesReadingTimes(ctx.store, ids, edge, ctx.query),
      resolve: (series) => series._id,
    }),
  );

/** `Series` type: one metric + tag set, backed by the series registry. */
export const SeriesRef = builder.objectRef<SeriesDocument>('Series').implement({
  description:
    'A series: a metric and one set of tag values (InfluxDB\'s series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments.',
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
      resolve: async (series, args, ctx) => {
        const range = normalizeRange(args);
        const bucketing = normalizeBucketing(args);
        const perSeries = bucketsPerGroup({ ...range, granularity: bucketing.granularity });
        if (perSeries === 0) return [];
        ctx.budget.reserve('buckets', perSeries, `this field: ${formatCount(perSeries)} buckets per series`);
        const cut = bucketing.granularity.cut;
        const { rows, index } = await ctx.bucketLoader.load({
          key: JSON.stringify(['series-buckets', range.from, range.to, bucketing.granularity.name]),
          field: range.field,
          series: series._id,
          pipeline: (fields, ids) =>
            bucketsPipeline({ ...range, ...bucketing, fields, scope: { series: ids }, grouping: { by: 'series' } }),
        });
        return bucketList(statsByStart(rows, index), { ...range, ...bucketing, cut });
      },
    }),
    aggregate: t.field({
      type: AggregateRef,
      description:
        'Statistics of one field of this series over `[from, to)` (count 0 and nulls without readings); batched like `buckets`. Errors as `Query.aggregate`.',
      args: rangeArgs(t.arg),
      resolve: async (series, args, ctx) => {
        const range = normalizeRange(args);
        const span = { tags: tagList(series.tags), from: new Date(range.from), to: new Date(range.to) };
        if (range.from >= range.to) return { ...span, ...summarize(null) };
        ctx.budget.reserve('buckets', 1, 'this field: an aggregate per series');
        const { rows, index } = await ctx.bucketLoader.load({
          key: JSON.stringify(['series-aggregate', range.from, range.to]),
          field: range.field,
          series: series._id,
          pipeline: (fields, ids) =>
            bucketsPipeline({ ...range, fields, granularity: null, scope: { series: ids }, grouping: { by: 'series' } }),
        });
        return { ...span, ...summarize(rows[0] ? rowStats(rows[0], index) : null) };
      },
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

/**
 * Lists the series of `metric` matching `where` (normalized, its values already
 * reserved), at most `limit` of them, and reserves them from the request's series
 * budget. The look-up counts as planning: the request's
 * pipelines wait for it, so the `buckets` of the series it lists reserve theirs first.
 * @throws InputError INVALID_ARGUMENT for a `limit` below 1; TOO_MANY_SERIES for a `limit`
 * above MAX_SERIES or when the request's lists would list more than MAX_SERIES series;
 * TOO_MANY_FILTER_VALUES; ServiceError QUERY_TIMEOUT.
 */
export async function listSeries(
  ctx: Context,
  metric: string,
  where: readonly TagFilter[],
  limit: number | null | undefined,
): Promise<SeriesDocument[]> {
  const value = limit ?? 100;
  if (!Number.isInteger(value) || value < 1) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, 'limit must be at least 1', 'limit');
  }
  if (value > ctx.budget.limits.maxSeries) ctx.budget.refuse('series', value, `limit: ${formatCount(value)}`);
  const take = Math.min(value, ctx.budget.remaining('series') + 1);
  const found = await ctx.planning.track(findSeries(ctx.store, metric, where, take, ctx.query));
  ctx.budget.reserve('series', found.length, `this list: ${formatCount(found.length)}${found.length === take && take < value ? ' or more' : ''}`);
  return found;
}

builder.queryFields((t) => ({
  series: t.field({
    type: [SeriesRef],
    description:
      'The series of a metric whose tags match `where`, sorted by series key. An unknown metric or tag value gives an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT (limit below 1), TOO_MANY_SERIES (limit above MAX_SERIES, or more than MAX_SERIES series listed by the request), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN.',
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    args: { metric: t.arg.string({ required: true, description: 'Metric name.' }), ...seriesListArgs(t.arg) },
    resolve: async (_root, args, ctx) => {
      reserveFilterValues(ctx, args.where);
      const selection = normalizeSelection(args);
      return listSeries(ctx, selection.metric, selection.where, args.limit);
    },
  }),
  seriesById: t.field({
    type: SeriesRef,
    nullable: true,
    description:
      'One series by its id (the series key, e.g. `flights,destination=PHL,origin=LAS`); null when unknown. Counts as one series of the request\'s MAX_SERIES. Needs scope `read` and a token that may touch the metric the key starts with. Errors: FORBIDDEN.',
    authScopes: (_root, args) => ({ read: true, metric: metricOfSeriesKey(String(args.id)) }),
    args: { id: t.arg.id({ required: true, description: 'Series key.' }) },
    resolve: async (_root, args, ctx) => {
      ctx.budget.reserve('series', 1, 'seriesById');
      return (await ctx.planning.track(findSeriesByIds(ctx.store, [seriesId(String(args.id))], ctx.query)))[0] ?? null;
    },
  }),
}));
