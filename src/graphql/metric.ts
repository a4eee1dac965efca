import { mayTouchMetric } from '../auth/access.ts';
import { parseMetricName, parseSeriesListQuery, parseStatisticsSettings, parseTagValuesQuery } from '../engine/query.ts';
import { MAX_LATEST_READINGS, type StatisticsSettings } from '../model/statistics-settings.ts';
import { setMetricKind, setMetricStatistics } from '../storage/registry.ts';
import type { MetricDocument } from '../storage/store.ts';
import { builder } from './builder.ts';
import { SeriesRef, seriesListArgs } from './series.ts';
import { TagFilterRef } from './tag.ts';

/** `MetricKind` enum: what a metric's fields measure (see `model/counter.ts`). */
export const MetricKindRef = builder.enumType('MetricKind', {
  description: 'What a metric\'s fields measure: values at a time, or running counts (see docs/statistics.md, "Counters").',
  values: {
    GAUGE: { value: 'gauge', description: 'A value at a time (a temperature, a delay): the default.' },
    COUNTER: {
      value: 'counter',
      description:
        'A running count that only grows except when reset to 0 (requests served, bytes sent): its buckets and aggregates have `increase` and `rate`, a drop counting as a reset.',
    },
  } as const,
});

/** `SlotLevel` enum: a level of the stored slots. */
export const SlotLevelRef = builder.enumType('SlotLevel', {
  description: 'A level of the stored statistics of a series and day.',
  values: {
    DAY: { value: 'day', description: 'The day totals.' },
    HOUR: { value: 'hour', description: 'The 24 hour slots.' },
    QUARTER: {
      value: 'quarter',
      description:
        'The 96 quarter hours (UTC :00, :15, :30, :45), a level of sketches only: percentile buckets whose edges fall inside an hour (Asia/Kolkata hours, Asia/Kathmandu days, 30-minute buckets) read them instead of minute slots.',
    },
    MINUTE: { value: 'minute', description: 'The 1,440 minute slots.' },
  } as const,
});

/** `MetricStatistics` type: a metric's optional statistics (see `model/statistics-settings.ts`). */
const MetricStatisticsRef = builder.objectRef<StatisticsSettings>('MetricStatistics').implement({
  description: 'Which optional statistics a metric keeps; see docs/statistics.md for what each costs.',
  fields: (t) => ({
    sketchLevels: t.field({
      type: [SlotLevelRef],
      resolve: (settings) => settings.sketchLevels,
      description:
        'Levels whose slots keep a quantile sketch (for percentiles): a query reads percentiles only where every slot it reads has one.',
    }),
    sketchFields: t.stringList({
      nullable: true,
      resolve: (settings) => settings.sketchFields,
      description: 'Fields with sketches; null: every field.',
    }),
    latestReadings: t.int({
      resolve: (settings) => settings.latestReadings,
      description: 'Latest readings kept per series and day (`Series.latest`).',
    }),
  }),
});

/** `Metric` type, backed by the metric registry. */
export const MetricRef = builder.objectRef<MetricDocument>('Metric').implement({
  description: "A metric (InfluxDB's measurement): a name under which series record numeric fields.",
  fields: (t) => ({
    name: t.string({ resolve: (metric) => metric._id, description: 'Metric name, e.g. `flights`.' }),
    fields: t.stringList({ resolve: (metric) => [...metric.fields].sort(), description: 'Fields ever recorded, sorted.' }),
    tagKeys: t.stringList({ resolve: (metric) => [...metric.tagKeys].sort(), description: 'Tag keys ever used, sorted.' }),
    kind: t.field({
      type: MetricKindRef,
      resolve: (metric) => metric.kind ?? 'gauge',
      description: 'What the fields measure: GAUGE unless `setMetricKind` (or a receiver of counters) declared the metric a COUNTER.',
    }),
    statistics: t.field({
      type: MetricStatisticsRef,
      resolve: (metric, _args, ctx) => metric.statistics ?? ctx.store.defaultStatistics,
      description: 'The optional statistics the metric keeps: quantile sketches and latest readings.',
    }),
    seriesCount: t.field({
      type: 'SafeInt',
      description: 'Number of series.',
      resolve: (metric, _args, ctx) => ctx.engine.seriesCount(metric._id),
    }),
    firstReadingAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Exact time of the earliest reading (UTC).',
      resolve: (metric, _args, ctx) => ctx.engine.metricReadingTime(metric._id, 'first'),
    }),
    lastReadingAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Exact time of the latest reading (UTC).',
      resolve: (metric, _args, ctx) => ctx.engine.metricReadingTime(metric._id, 'last'),
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

builder.mutationField('setMetricStatistics', (t) =>
  t.field({
    type: MetricRef,
    description:
      'Chooses which optional statistics a metric keeps from now on (new metrics get SKETCH_LEVELS and LATEST_READINGS): quantile sketches at some levels and for some fields, and how many latest readings per series and day. Data already stored keeps what it was written with; percentiles over slots without a sketch are null. Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT, FORBIDDEN.',
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `flights`.' }),
      sketchLevels: t.arg({ type: [SlotLevelRef], required: true, description: 'Levels that keep sketches; empty: none.' }),
      sketchFields: t.arg.stringList({ description: 'Fields that get sketches; omitted or null: every field.' }),
      latestReadings: t.arg.int({ required: true, description: `Latest readings kept per series and day, 0 to ${MAX_LATEST_READINGS}.` }),
    },
    resolve: (_root, args, ctx) => setMetricStatistics(ctx.store, parseMetricName(args.metric, 'metric'), parseStatisticsSettings(args)),
  }),
);

builder.mutationField('setMetricKind', (t) =>
  t.field({
    type: MetricRef,
    description:
      'Declares what a metric\'s fields measure. A COUNTER\'s folds keep, per slot, what the reset-aware increase needs, so its buckets and aggregates answer `increase` and `rate` (docs/statistics.md, "Counters"); it applies to every fold from now on, readings acknowledged but not folded yet included, and slots folded before give a null `increase`. GAUGE stops keeping it. Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, FORBIDDEN.',
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `http_requests`.' }),
      kind: t.arg({ type: MetricKindRef, required: true, description: 'GAUGE or COUNTER.' }),
    },
    resolve: (_root, args, ctx) => setMetricKind(ctx.store, parseMetricName(args.metric, 'metric'), args.kind),
  }),
);
