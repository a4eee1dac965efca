import type { Document, Filter } from 'mongodb';
import { LAYOUT_VERSION } from '../model/day-document.ts';
import type { TimedValue } from '../model/stats.ts';
import { limitedRead, type QueryOptions } from './query-options.ts';
import type { MetricDocument, SeriesDocument, Store } from './store.ts';

/**
 * Runs a pipeline (built by `query/buckets-pipeline.ts`) on the collection of series-day
 * documents, or on the collection of a rollup (whose documents have the same layout),
 * and returns its rows, typed `T` by the caller.
 * @param collection a rollup's collection (`RollupDefinition.collection`); omitted: the series-day documents.
 * @throws ServiceError QUERY_TIMEOUT when it runs longer than `options.maxTimeMS`.
 */
export async function aggregateBuckets<T extends Document = Document>(
  store: Store,
  pipeline: Document[],
  options: QueryOptions = {},
  collection?: string,
): Promise<T[]> {
  const source = collection === undefined ? store.buckets : store.db.collection(collection);
  return limitedRead(options, (driver) => source.aggregate<T>(pipeline, driver).toArray());
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
 * The registry entries matching `filter` (see `registryFilter` in `query/buckets-pipeline.ts`),
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

/** Which end of a series' readings to look up: the earliest (`first`) or the latest (`last`). */
export type Edge = 'first' | 'last';

/**
 * Exact time of the earliest (`first`) or latest (`last`) reading of each series of
 * `ids`, in that order (null for a series without readings): the `first` of its
 * earliest series-day document or the `last` of its latest, one index lookup on
 * `{series, date}` per series.
 * @throws ServiceError QUERY_TIMEOUT when a lookup runs longer than `options.maxTimeMS`.
 */
export async function seriesReadingTimes(
  store: Store,
  ids: readonly string[],
  edge: Edge,
  options: QueryOptions = {},
): Promise<(Date | null)[]> {
  const direction = edge === 'first' ? 1 : -1;
  return Promise.all(
    ids.map(async (series) => {
      const doc = await limitedRead(options, (driver) =>
        store.buckets.findOne(
          { series, [edge]: { $exists: true } },
          { sort: { series: 1, date: direction }, projection: { [edge]: 1 }, ...driver },
        ),
      );
      return doc?.[edge] ?? null;
    }),
  );
}

/**
 * A series' latest reading of one field (see {@link latestValues}): the reading; null
 * when it is unknown (the newest document holding the field is of layout version 1);
 * undefined when the series has no reading of the field.
 */
export type LatestValue = TimedValue | null | undefined;

/**
 * The latest reading of `field` in each series of `ids`, in that order: the `last` pair
 * of the day totals of the newest series-day document holding the field (one indexed
 * look-up per series, `series_date`). Undefined when the series has no reading of the
 * field; null when that document was created before first and last values were kept
 * (layout version 1), whose `last` may miss readings.
 * @throws ServiceError QUERY_TIMEOUT when a look-up runs longer than `options.maxTimeMS`.
 */
export async function latestValues(
  store: Store,
  ids: readonly string[],
  field: string,
  options: QueryOptions = {},
): Promise<LatestValue[]> {
  return Promise.all(
    ids.map(async (id) => {
      const doc = await limitedRead(options, (driver) =>
        store.buckets.findOne(
          { series: id, [`fields.${field}.n`]: { $gt: 0 } },
          { ...driver, sort: { date: -1 }, projection: { _id: 0, v: 1, [`fields.${field}.last`]: 1 } },
        ),
      );
      if (doc === null) return undefined;
      const last = doc.fields?.[field]?.last;
      if ((doc.v ?? 1) < LAYOUT_VERSION || last === undefined) return null;
      return { t: last.t.getTime(), v: last.v };
    }),
  );
}

/** One of a series' latest readings: time in ms since the epoch (UTC) and field values by name. */
export interface LatestReading {
  t: number;
  f: Record<string, number>;
}

/**
 * The latest `n` readings of series `id`, newest first, from the `recent` lists of its
 * newest series-day documents (the days are read newest first until `n` readings are
 * found). A document's list holds its day's latest readings only, so the walk stops
 * after a document whose list is shorter than its number of readings, and before a
 * document of layout version 1 (which has none): fewer than `n` readings come back then,
 * never a wrong one.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function latestReadings(store: Store, id: string, n: number, options: QueryOptions = {}): Promise<LatestReading[]> {
  return limitedRead(options, async (driver) => {
    const cursor = store.buckets.find(
      { series: id },
      { ...driver, sort: { date: -1 }, projection: { _id: 0, v: 1, readings: 1, recent: 1 }, batchSize: 4 },
    );
    const found: LatestReading[] = [];
    try {
      for await (const doc of cursor) {
        if ((doc.v ?? 1) < LAYOUT_VERSION) break;
        const recent = doc.recent ?? [];
        for (let i = recent.length - 1; i >= 0 && found.length < n; i--) found.push({ t: recent[i]!.t.getTime(), f: recent[i]!.f });
        if (found.length >= n || recent.length < (doc.readings ?? 0)) break;
      }
    } finally {
      await cursor.close();
    }
    return found;
  });
}
