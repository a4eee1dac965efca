import { ErrorCode, InputError } from '../errors.ts';
import { seriesId, tagList } from '../model/series.ts';
import { bucketsPipeline } from '../query/buckets-pipeline.ts';
import { shapeSeriesAggregates, shapeSeriesBuckets } from '../query/shape.ts';
import { normalizeBucketing, normalizeRange, normalizeSelection } from '../query/spec.ts';
import { aggregateBuckets, findSeries, findSeriesByIds, seriesReadingTimes, type Edge } from '../storage/read.ts';
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
      load: (ids: string[], ctx) => seriesReadingTimes(ctx.store, ids, edge),
      resolve: (series) => series._id,
    }),
  );

/** `Series` type: one metric + tag set, backed by the series registry. */
export const SeriesRef = builder.objectRef<SeriesDocument>('Series').implement({
  description:
    'A series: a metric and one set of tag values (InfluxDB\'s series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per field selection.',
  fields: (t) => ({
    id: t.id({
      resolve: (series) => series.key,
      description: 'The series key in InfluxDB line-protocol form, e.g. `flights,destination=PHL,origin=LAS`.',
    }),
    metric: t.exposeString('metric', { description: 'Metric name.' }),
    tags: t.field({ type: [TagRef], resolve: (series) => tagList(series.tags), description: 'Tags, sorted by key.' }),
    fields: t.stringList({ resolve: (series) => [...series.fields].sort(), description: 'Fields ever recorded, sorted.' }),
    buckets: t.loadableList({
      type: BucketRef,
      byPath: true,
      description:
        'Time buckets of one field of this series over `[from, to)`. Errors as `Query.buckets`; TOO_MANY_BUCKETS counts the buckets of all series asked for at this place of the query.',
      args: { ...rangeArgs(t.arg), ...bucketArgs(t.arg) },
      load: async (ids: string[], ctx, args) => {
        const range = normalizeRange(args);
        const bucketing = normalizeBucketing(args, range, ids.length, ctx.limits.maxBuckets);
        if (range.from >= range.to) return ids.map(() => []);
        const pipeline = bucketsPipeline(
          { ...range, ...bucketing, scope: { series: ids }, grouping: { by: 'series' } });
        const rows = await aggregateBuckets(ctx.store, pipeline);
        return shapeSeriesBuckets(rows, ids, { ...range, ...bucketing, cut: bucketing.granularity.cut });
      },
      resolve: (series) => series._id,
    }),
    aggregate: t.loadable({
      type: AggregateRef,
      byPath: true,
      description: 'Statistics of one field of this series over `[from, to)` (count 0 and nulls without readings). Errors as `Query.aggregate`.',
      args: rangeArgs(t.arg),
      load: async (ids: string[], ctx, args) => {
        const range = normalizeRange(args);
        const [series, rows] = await Promise.all([
          findSeriesByIds(ctx.store, ids),
          range.from < range.to
            ? aggregateBuckets(
                ctx.store,
                bucketsPipeline({ ...range, granularity: null, scope: { series: ids }, grouping: { by: 'series' } }),
              )
            : Promise.resolve([]),
        ]);
        return shapeSeriesAggregates(
          rows,
          ids.map((id, index) => ({ id, tags: series[index]?.tags ?? {} })),
          range,
        );
      },
      resolve: (series) => series._id,
    }),
  }),
});

readingTime('first', 'Exact time of the earliest reading (UTC); null without readings.');
readingTime('last', 'Exact time of the latest reading (UTC); null without readings.');

/** Largest `limit` of a series list. */
const MAX_SERIES_LIMIT = 10_000;

/** Arguments of series lists: tag filters and a limit. */
export const seriesListArgs = (arg: ArgBuilder) => ({
  where: arg({ type: [TagFilterRef], description: 'Tag filters, all of which must hold.' }),
  limit: arg.int({ defaultValue: 100, description: `Most series to return (1 to ${MAX_SERIES_LIMIT}), in series key order.` }),
});

/**
 * Validates the limit of a series list.
 * @throws InputError INVALID_ARGUMENT when `limit` lies outside 1..10,000.
 */
export function checkSeriesLimit(limit: number | null | undefined): number {
  const value = limit ?? 100;
  if (!Number.isInteger(value) || value < 1 || value > MAX_SERIES_LIMIT) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, `limit must lie between 1 and ${MAX_SERIES_LIMIT}`, 'limit');
  }
  return value;
}

builder.queryFields((t) => ({
  series: t.field({
    type: [SeriesRef],
    description:
      'The series of a metric whose tags match `where`, sorted by series key. An unknown metric or tag value gives an empty list. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT (limit).',
    args: { metric: t.arg.string({ required: true, description: 'Metric name.' }), ...seriesListArgs(t.arg) },
    resolve: async (_root, args, ctx) => {
      const selection = normalizeSelection(args);
      return findSeries(ctx.store, selection.metric, selection.where, checkSeriesLimit(args.limit));
    },
  }),
  seriesById: t.field({
    type: SeriesRef,
    nullable: true,
    description: 'One series by its id (the series key, e.g. `flights,destination=PHL,origin=LAS`); null when unknown.',
    args: { id: t.arg.id({ required: true, description: 'Series key.' }) },
    resolve: async (_root, args, ctx) => (await findSeriesByIds(ctx.store, [seriesId(String(args.id))]))[0] ?? null,
  }),
}));
