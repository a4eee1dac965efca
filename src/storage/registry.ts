import type { MetricKind } from '../model/counter.ts';
import type { Document, Filter } from 'mongodb';
import type { MetricDocument, SeriesDocument, Store } from './store.ts';
import type { PlanSettings } from '../documents/from-readings.ts';
import { type QueryOptions, limitedRead } from './query-options.ts';
import type { StatisticsSettings } from '../model/statistics-settings.ts';
import { horizonsOf } from '../model/retention-policy.ts';

/**
 * Sets the optional statistics of metric `name` (sketch levels and fields, latest
 * readings kept), creating its registry entry when it has none yet (with the default
 * layout). They apply to every write from then on; data already stored keeps what it
 * was written with, and queries answer no percentile where a slot lacks its sketch.
 * @returns the metric's registry entry after the change.
 */
export async function setMetricStatistics(store: Store, name: string, statistics: StatisticsSettings): Promise<MetricDocument> {
  const updated = await store.metrics.findOneAndUpdate(
    { _id: name },
    { $set: { statistics }, $setOnInsert: { fields: [], tagKeys: [], createdAt: new Date() } },
    { upsert: true, returnDocument: 'after' },
  );
  return updated!;
}

/**
 * Declares what metric `name` measures (`setMetricKind`), creating its registry entry
 * when it has none yet (with the default layout and statistics, as `setMetricStatistics`
 * does). The kind applies to every fold from then on, readings acknowledged but not yet
 * folded included: a counter's slots keep what the reset-aware increase needs
 * (`inc`, see `planContents`). Slots folded before keep what they were written with, so
 * `increase` over them is null (docs/statistics.md, "Counters"). Idempotent.
 * @returns the metric's registry entry after the change.
 */
export async function setMetricKind(store: Store, name: string, kind: MetricKind): Promise<MetricDocument> {
  const updated = await store.metrics.findOneAndUpdate(
    { _id: name },
    {
      $set: { kind },
      $setOnInsert: { fields: [], tagKeys: [], statistics: store.defaultStatistics, createdAt: new Date() },
    },
    { upsert: true, returnDocument: 'after' },
  );
  return updated!;
}

/**
 * Declares the metrics `names` counters ({@link setMetricKind}) where their registry
 * entry has no kind yet: what the receivers call for the metrics their protocol marks as
 * counters (an OTLP monotonic cumulative sum, a Prometheus `_total` series) once a batch
 * of them is acknowledged (`routes/receivers.ts`; docs/opentelemetry.md and
 * docs/prometheus-remote-write.md, "Counters"). A kind already set, `setMetricKind(GAUGE)`
 * included, is an operator's choice and stays; a name without a registry entry (none of
 * its readings stored) is left alone: no entry is created. One `updateMany` of the
 * entries, whatever their number; a receiver that sees the same metrics in every batch
 * should remember the metrics it declared. The kind applies to the folds from then on:
 * readings folded before keep what a gauge's slots keep (see {@link setMetricKind}).
 * The names are not validated here: the caller validates them with the batch's readings.
 * @returns how many entries became counters now.
 */
export async function declareCounters(store: Store, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  const result = await store.metrics.updateMany({ _id: { $in: [...names] }, kind: { $exists: false } }, { $set: { kind: 'counter' } });
  return result.modifiedCount;
}

/**
 * How readings of `metrics` are planned now (`PlanSettings` of `documents/from-readings.ts`):
 * each metric's statistics settings (the store's default for a metric without an entry
 * or without settings), its kind (gauge unless `setMetricKind` made it a counter) and
 * the retention horizons its last pass applied, from one read
 * of their registry entries. What a fold, a compaction and a read's tail plan with.
 * @param driver the read's `maxTimeMS` and abort signal (see `query-options.ts`).
 */
export async function planSettingsOf(
  store: Store,
  metrics: readonly string[],
  driver: { maxTimeMS?: number; signal?: AbortSignal } = {},
): Promise<PlanSettings> {
  const entries = await store.metrics
    .find({ _id: { $in: [...metrics] } }, { ...driver, projection: { statistics: 1, retention: 1, kind: 1 } })
    .toArray();
  const entryOf = new Map(entries.map((entry) => [entry._id, entry]));
  return {
    settingsOf: (metric) => entryOf.get(metric)?.statistics ?? store.defaultStatistics,
    horizonsOf: (metric) => horizonsOf(entryOf.get(metric)?.retention?.horizons),
    kindOf: (metric) => entryOf.get(metric)?.kind ?? 'gauge',
  };
}

/**
 * All metrics, sorted by name.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function listMetrics(store: Store, options: QueryOptions = {}): Promise<MetricDocument[]> {
  return limitedRead(options, (driver) => store.metrics.find({}, driver).sort({ _id: 1 }).toArray());
}

/**
 * One metric by name, or null when it was never recorded.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findMetric(store: Store, name: string, options: QueryOptions = {}): Promise<MetricDocument | null> {
  return limitedRead(options, (driver) => store.metrics.findOne({ _id: name }, driver));
}

/**
 * The registry entries matching `filter` (see `registryFilter` in `query/registry.ts`),
 * sorted by series key, at most `limit` of them (all when `limit` is omitted).
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findSeries(
  store: Store,
  filter: Filter<SeriesDocument>,
  limit?: number,
  options: QueryOptions = {},
): Promise<SeriesDocument[]> {
  return limitedRead(options, (driver) => {
    const cursor = store.series.find(filter, driver).sort({ metric: 1, key: 1 });
    if (limit !== undefined) cursor.limit(limit);
    return cursor.toArray();
  });
}

/**
 * Registry entries by series id, in the order of `ids` (null where unknown).
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findSeriesByIds(
  store: Store,
  ids: readonly string[],
  options: QueryOptions = {},
): Promise<(SeriesDocument | null)[]> {
  const docs = await limitedRead(options, (driver) => store.series.find({ _id: { $in: [...ids] } }, driver).toArray());
  const found = new Map(docs.map((doc) => [doc._id, doc]));
  return ids.map((id) => found.get(id) ?? null);
}

/**
 * Number of registry entries matching `filter`.
 * @throws ServiceError QUERY_TIMEOUT when the count runs longer than `options.maxTimeMS`.
 */
export async function countSeries(store: Store, filter: Filter<SeriesDocument>, options: QueryOptions = {}): Promise<number> {
  return limitedRead(options, (driver) => store.series.countDocuments(filter, driver));
}

/**
 * Runs a counting pipeline on the series registry (see `seriesGroupsPipeline`) and
 * returns its `groups`; 0 when it returns no row.
 * @throws ServiceError QUERY_TIMEOUT when the count runs longer than `options.maxTimeMS`.
 */
export async function countSeriesGroups(store: Store, pipeline: Document[], options: QueryOptions = {}): Promise<number> {
  const [result] = await limitedRead(options, (driver) => store.series.aggregate<{ groups: number }>(pipeline, driver).toArray());
  return result?.groups ?? 0;
}

/**
 * The distinct values of tag `key` among the registry entries matching `filter`, sorted.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function tagValues(store: Store, key: string, filter: Filter<SeriesDocument>, options: QueryOptions = {}): Promise<string[]> {
  const values = await limitedRead(options, (driver) => store.series.distinct(`tags.${key}`, filter, driver));
  return values.filter((value): value is string => typeof value === 'string').sort();
}
