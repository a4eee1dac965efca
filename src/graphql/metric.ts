import { mayTouchMetric } from '../auth/access.ts';
import { parseMetricName, parseSeriesListQuery, parseTagValuesQuery } from '../engine/query.ts';
import { setMetricLayout } from '../storage/registry.ts';
import type { MetricDocument } from '../storage/store.ts';
import { builder } from './builder.ts';
import { SeriesRef, seriesListArgs } from './series.ts';
import { TagFilterRef } from './tag.ts';

/** `DocumentLayout` enum: how a metric's series-day documents are laid out (see README "Design"). */
export const DocumentLayoutRef = builder.enumType('DocumentLayout', {
  description: 'How the series-day documents of a metric are laid out; fixed when the metric is first recorded (config DEFAULT_LAYOUT).',
  values: {
    SPARSE: { value: 'sparse', description: 'Day documents whose hour and minute slots are created by their first reading.' },
    PREALLOCATED: {
      value: 'preallocated',
      description: 'Day documents inserted as a zeroed skeleton of all 1,440 minutes first, then updated in place.',
    },
  } as const,
});

/** `Metric` type, backed by the metric registry. */
export const MetricRef = builder.objectRef<MetricDocument>('Metric').implement({
  description: "A metric (InfluxDB's measurement): a name under which series record numeric fields.",
  fields: (t) => ({
    name: t.string({ resolve: (metric) => metric._id, description: 'Metric name, e.g. `flights`.' }),
    fields: t.stringList({ resolve: (metric) => [...metric.fields].sort(), description: 'Fields ever recorded, sorted.' }),
    tagKeys: t.stringList({ resolve: (metric) => [...metric.tagKeys].sort(), description: 'Tag keys ever used, sorted.' }),
    layout: t.field({ type: DocumentLayoutRef, resolve: (metric) => metric.layout, description: 'Series-day document layout.' }),
    seriesCount: t.field({
      type: 'SafeInt',
      description: 'Number of series.',
      resolve: (metric, _args, ctx) => ctx.engine.seriesCount(metric._id),
    }),
    firstReadingAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Exact time of the earliest reading (UTC).',
      resolve: (metric) => metric.first ?? null,
    }),
    lastReadingAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Exact time of the latest reading (UTC).',
      resolve: (metric) => metric.last ?? null,
    }),
    tagValues: t.stringList({
      description: 'The values of tag `key` among the series matching `where`, sorted.',
      args: {
        key: t.arg.string({ required: true, description: 'Tag key, e.g. `origin`.' }),
        where: t.arg({ type: [TagFilterRef], description: 'Tag filters, all of which must hold.' }),
      },
      resolve: (metric, args, ctx) => {
        const query = parseTagValuesQuery({ metric: metric._id, key: args.key, where: args.where });
        return ctx.engine.tagValues(query.metric, query.key, query.where);
      },
    }),
    series: t.field({
      type: [SeriesRef],
      description: 'The series whose tags match `where`, sorted by series key. Errors as `Query.series`.',
      args: seriesListArgs(t.arg),
      resolve: (metric, args, ctx) => {
        const list = parseSeriesListQuery({ metric: metric._id, where: args.where, limit: args.limit });
        return ctx.engine.listSeries(list.metric, list.where, list.limit);
      },
    }),
  }),
});

builder.queryFields((t) => ({
  metrics: t.field({
    type: [MetricRef],
    description:
      'Every metric the API token may touch (all of them, or those starting with its metric prefixes), sorted by name. Needs scope `read`.',
    authScopes: { read: true },
    resolve: async (_root, _args, ctx) => (await ctx.engine.metrics()).filter((metric) => mayTouchMetric(ctx.access, metric._id)),
  }),
  metric: t.field({
    type: MetricRef,
    nullable: true,
    description:
      'One metric by name; null when it was never recorded. Needs scope `read` and a token that may touch the metric. Errors: INVALID_NAME, FORBIDDEN.',
    args: { name: t.arg.string({ required: true, description: 'Metric name, e.g. `flights`.' }) },
    authScopes: (_root, args) => ({ read: true, metric: args.name }),
    resolve: (_root, args, ctx) => ctx.engine.metric(parseMetricName(args.name, 'name')),
  }),
  tagValues: t.stringList({
    description:
      'The values of tag `key` among the series of `metric` matching `where`, sorted. Unknown metrics and keys give an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN.',
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `flights`.' }),
      key: t.arg.string({ required: true, description: 'Tag key, e.g. `origin`.' }),
      where: t.arg({ type: [TagFilterRef], description: 'Tag filters, all of which must hold.' }),
    },
    resolve: (_root, args, ctx) => {
      const query = parseTagValuesQuery(args);
      return ctx.engine.tagValues(query.metric, query.key, query.where);
    },
  }),
}));

builder.mutationField('setMetricLayout', (t) =>
  t.field({
    type: MetricRef,
    description:
      'Chooses the bucket layout of a metric before its first reading (new metrics otherwise get DEFAULT_LAYOUT, `sparse` unless configured): PREALLOCATED suits dense metrics with a reading in most minutes, SPARSE everything else (see README "Performance"). Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, LAYOUT_LOCKED (the metric already has data in another layout), FORBIDDEN.',
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `cpu`.' }),
      layout: t.arg({ type: DocumentLayoutRef, required: true, description: 'The layout.' }),
    },
    resolve: (_root, args, ctx) => setMetricLayout(ctx.store, parseMetricName(args.metric, 'metric'), args.layout),
  }),
);
