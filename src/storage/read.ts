import type { Document, Filter } from 'mongodb';
import { scopeFilter, type BucketRow } from '../query/buckets-pipeline.ts';
import type { TagFilter } from '../query/spec.ts';
import type { MetricDocument, SeriesDocument, Store } from './store.ts';

/** Runs a pipeline built by `query/buckets-pipeline.ts` on the bucket collection. */
export async function aggregateBuckets(store: Store, pipeline: Document[]): Promise<BucketRow[]> {
  return store.buckets.aggregate<BucketRow>(pipeline).toArray();
}

/** All metrics, sorted by name. */
export async function listMetrics(store: Store): Promise<MetricDocument[]> {
  return store.metrics.find({}).sort({ _id: 1 }).toArray();
}

/** One metric by name, or null when it was never recorded. */
export async function findMetric(store: Store, name: string): Promise<MetricDocument | null> {
  return store.metrics.findOne({ _id: name });
}

/**
 * Registry filter for the series of `metric` matching every tag filter, on the
 * `{metric, tagPairs}` index (the same conditions as on bucket documents).
 */
function seriesFilter(metric: string, where: readonly TagFilter[]): Filter<SeriesDocument> {
  const { indexed, residual } = scopeFilter({ metric, where });
  return { ...indexed, ...residual } as Filter<SeriesDocument>;
}

/**
 * The series of `metric` whose tags match every filter of `where`, sorted by series
 * key, at most `limit` of them (all when `limit` is omitted).
 */
export async function findSeries(
  store: Store,
  metric: string,
  where: readonly TagFilter[],
  limit?: number,
): Promise<SeriesDocument[]> {
  const cursor = store.series.find(seriesFilter(metric, where)).sort({ metric: 1, key: 1 });
  if (limit !== undefined) cursor.limit(limit);
  return cursor.toArray();
}

/** Registry entries by series id, in the order of `ids` (null where unknown). */
export async function findSeriesByIds(store: Store, ids: readonly string[]): Promise<(SeriesDocument | null)[]> {
  const found = new Map((await store.series.find({ _id: { $in: [...ids] } }).toArray()).map((doc) => [doc._id, doc]));
  return ids.map((id) => found.get(id) ?? null);
}

/** Number of series of `metric` matching `where`. */
export async function countSeries(store: Store, metric: string, where: readonly TagFilter[] = []): Promise<number> {
  return store.series.countDocuments(seriesFilter(metric, where));
}

/** The distinct values of tag `key` among the series of `metric` matching `where`, sorted. */
export async function tagValues(store: Store, metric: string, key: string, where: readonly TagFilter[]): Promise<string[]> {
  const values = await store.series.distinct(`tags.${key}`, seriesFilter(metric, where));
  return values.filter((value): value is string => typeof value === 'string').sort();
}

/** Which end of a series' readings to look up: the earliest (`first`) or the latest (`last`). */
export type Edge = 'first' | 'last';

/**
 * Exact time of the earliest (`first`) or latest (`last`) reading of each series of
 * `ids`, in that order (null for a series without readings): the `first` of its
 * earliest bucket document or the `last` of its latest, one index lookup on
 * `{series, date}` per series.
 */
export async function seriesReadingTimes(store: Store, ids: readonly string[], edge: Edge): Promise<(Date | null)[]> {
  const direction = edge === 'first' ? 1 : -1;
  return Promise.all(
    ids.map(async (series) => {
      const doc = await store.buckets.findOne(
        { series, [edge]: { $exists: true } },
        { sort: { series: 1, date: direction }, projection: { [edge]: 1 } },
      );
      return doc?.[edge] ?? null;
    }),
  );
}
