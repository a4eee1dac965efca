import { MongoBulkWriteError, type AnyBulkWriteOperation, type Document } from 'mongodb';
import { ErrorCode, InputError, isDuplicateKeyError } from '../errors.ts';
import { Limits } from '../model/limits.ts';
import { isUnavailable } from './failures.ts';
import { registryGeneration, type MetricDocument, type SeriesDocument, type Store } from './store.ts';
import type { SeriesInBatch, MetricInBatch } from '../documents/content.ts';

/** How often an upsert that lost a first-insert race (error 11000) without a batch mark is retried. */
const DUPLICATE_KEY_RETRIES = 5;

const isSubset = (items: Iterable<string>, of: ReadonlySet<string> | readonly string[]) => {
  const set = of instanceof Set ? of : new Set(of);
  for (const item of items) if (!set.has(item)) return false;
  return true;
};

function tooMany(metric: string, what: 'fields' | 'tag keys', count: number, limit: number): InputError {
  return new InputError(ErrorCode.TOO_MANY_NAMES, `Metric "${metric}" would have ${count} ${what}; a metric may have at most ${limit}`);
}

/**
 * Reads the registry entries of the plan's metrics and refuses the plan when a metric
 * would outgrow `Limits.fieldsPerMetric` fields or `Limits.tagKeysPerMetric` tag keys.
 * Reads only: a refused batch has written nothing.
 * @returns the registry entries found, by metric name.
 * @throws InputError TOO_MANY_NAMES.
 */
export async function checkMetricLimits(store: Store, writes: readonly MetricInBatch[]): Promise<Map<string, MetricDocument>> {
  const found = await store.metrics.find({ _id: { $in: writes.map((write) => write.name) } }).toArray();
  const registered = new Map(found.map((doc) => [doc._id, doc]));
  for (const write of writes) {
    const existing = registered.get(write.name);
    const fields = new Set([...(existing?.fields ?? []), ...write.fields]).size;
    if (fields > Limits.fieldsPerMetric) throw tooMany(write.name, 'fields', fields, Limits.fieldsPerMetric);
    const tagKeys = new Set([...(existing?.tagKeys ?? []), ...write.tagKeys]).size;
    if (tagKeys > Limits.tagKeysPerMetric) throw tooMany(write.name, 'tag keys', tagKeys, Limits.tagKeysPerMetric);
  }
  return registered;
}

/**
 * Refuses a batch that would give a metric more series than `Store.maxSeriesPerMetric`
 * (reads only: a refused batch has written nothing). A metric whose registered count
 * (`MetricDocument.seriesCount`) plus every series of the batch stays within the limit
 * costs no read; near the limit, the batch's series already registered are looked up
 * (one `find` by `_id`) and only the others count, and an entry made before the count
 * existed is counted from the registry. Batches registering at the same moment are
 * checked against the same count, so together they may pass the limit by their new
 * series: a bound against a tag that explodes, not an exact quota.
 * @param registered the registry entries from {@link checkMetricLimits}.
 * @throws InputError TOO_MANY_SERIES naming the metric, its series and the limit.
 */
export async function checkSeriesLimit(
  store: Pick<Store, 'series' | 'maxSeriesPerMetric'>,
  series: readonly SeriesInBatch[],
  registered: ReadonlyMap<string, MetricDocument>,
): Promise<void> {
  const limit = store.maxSeriesPerMetric;
  const byMetric = new Map<string, string[]>();
  for (const write of series) {
    const ids = byMetric.get(write.metric);
    if (ids) ids.push(write.id);
    else byMetric.set(write.metric, [write.id]);
  }
  for (const [metric, ids] of byMetric) {
    const entry = registered.get(metric);
    const counted = entry === undefined ? 0 : entry.seriesCount;
    if (counted !== undefined && counted + ids.length <= limit) continue;
    const found = await store.series.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
    const added = ids.length - found.length;
    const count = counted ?? (await store.series.countDocuments({ metric }));
    if (count + added > limit) {
      throw new InputError(
        ErrorCode.TOO_MANY_SERIES,
        `Metric "${metric}" would have ${(count + added).toLocaleString('en-US')} series; a metric may have at most ${limit.toLocaleString('en-US')} (MAX_SERIES_PER_METRIC); nothing of the batch was written`,
      );
    }
  }
}

/**
 * True when {@link registerBatch} would write something for this batch: a metric that is
 * not registered or lacks one of the batch's fields or tag keys, or a series this
 * process has not registered recently in its metric's current registry generation (see
 * `Store.seriesCache`). Reads nothing: a steady stream of known series answers false,
 * and its batches are acknowledged by the log write alone.
 * @param registered the registry entries from {@link checkMetricLimits}, read by this batch.
 */
export function registrationNeeded(
  store: Pick<Store, 'seriesCache'>,
  batch: { metrics: readonly MetricInBatch[]; series: readonly SeriesInBatch[] },
  registered: ReadonlyMap<string, MetricDocument>,
): boolean {
  for (const write of batch.metrics) {
    const existing = registered.get(write.name);
    if (!existing || !isSubset(write.fields, existing.fields) || !isSubset(write.tagKeys, existing.tagKeys)) return true;
  }
  return batch.series.some((write) => {
    const entry = registered.get(write.metric);
    const cached = store.seriesCache.get(write.id);
    return (
      entry === undefined ||
      cached === undefined ||
      cached.generation !== registryGeneration(entry) ||
      !isSubset(write.fields, cached.fields)
    );
  });
}

/**
 * Registers what a validated batch names (its metrics, `batchMetrics`, and series,
 * `batchSeries`), before its log entry is written, so
 * the next request finds it (docs/ingest-design.md, "1. Acknowledge with one durable write"):
 * 1. checks that no metric would pass its series limit ({@link checkSeriesLimit});
 * 2. new metrics, fields and tag keys, re-checking the per-metric limits atomically in
 *    the update's filter (a concurrent writer may have added names since
 *    {@link checkMetricLimits});
 * 3. series not known to be registered (see `Store.seriesCache`), counted in their
 *    metric's `seriesCount`.
 * The metrics' first/last reading times are widened by the fold that folds the readings
 * ({@link widenMetricSpans}); until then a reader takes them from the tail. Every step
 * is idempotent, so a retry after any failure completes what is missing; a steady
 * stream of known series writes nothing here ({@link registrationNeeded} is false).
 * @param registered the registry entries from {@link checkMetricLimits}.
 * @throws InputError TOO_MANY_SERIES when a metric would pass its series limit (nothing written);
 * TOO_MANY_NAMES when a concurrent writer pushed a metric over a limit.
 * Driver errors propagate unchanged.
 */
export async function registerBatch(
  store: Store,
  batch: { metrics: readonly MetricInBatch[]; series: readonly SeriesInBatch[] },
  registered: ReadonlyMap<string, MetricDocument>,
): Promise<void> {
  if (batch.series.length === 0) return;
  await checkSeriesLimit(store, batch.series, registered);
  const metrics = await registerMetrics(store, batch.metrics, registered);
  await registerSeries(store, batch.series, metrics);
}

/**
 * Makes sure every metric of the batch exists with all the batch's fields and tag keys.
 * Metrics whose entry already lists them are not written. The update of an existing
 * metric re-checks both limits in its filter, so concurrent writers cannot together
 * exceed them.
 * @returns the registry entry of every metric of the batch after the update.
 */
async function registerMetrics(
  store: Store,
  writes: readonly MetricInBatch[],
  registered: ReadonlyMap<string, MetricDocument>,
): Promise<Map<string, MetricDocument>> {
  const entries = new Map<string, MetricDocument>();
  for (const write of writes) {
    const existing = registered.get(write.name);
    if (existing && isSubset(write.fields, existing.fields) && isSubset(write.tagKeys, existing.tagKeys)) {
      entries.set(write.name, existing);
      continue;
    }
    const addToSet = { fields: { $each: [...write.fields] }, tagKeys: { $each: [...write.tagKeys] } };
    let stored: MetricDocument | null = null;
    if (existing === undefined) {
      try {
        stored = await store.metrics.findOneAndUpdate(
          { _id: write.name },
          {
            $addToSet: addToSet,
            $setOnInsert: { statistics: store.defaultStatistics, createdAt: new Date(), seriesCount: 0 },
          },
          { upsert: true, returnDocument: 'after' },
        );
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    if (stored === null) {
      // The metric exists (or a concurrent writer just created it): add the names only
      // while both totals stay within their limits.
      const withinLimit = (path: string, names: Set<string>, limit: number) => ({
        $lte: [{ $size: { $setUnion: [{ $ifNull: [path, []] }, [...names]] } }, limit],
      });
      stored = await store.metrics.findOneAndUpdate(
        {
          _id: write.name,
          $expr: {
            $and: [
              withinLimit('$fields', write.fields, Limits.fieldsPerMetric),
              withinLimit('$tagKeys', write.tagKeys, Limits.tagKeysPerMetric),
            ],
          },
        },
        { $addToSet: addToSet },
        { returnDocument: 'after' },
      );
      if (stored === null) {
        const now = await store.metrics.findOne({ _id: write.name });
        const fields = new Set([...(now?.fields ?? []), ...write.fields]).size;
        if (fields > Limits.fieldsPerMetric) throw tooMany(write.name, 'fields', fields, Limits.fieldsPerMetric);
        throw tooMany(write.name, 'tag keys', new Set([...(now?.tagKeys ?? []), ...write.tagKeys]).size, Limits.tagKeysPerMetric);
      }
    }
    entries.set(write.name, stored);
  }
  return entries;
}

/**
 * Widens each metric's first/last reading time (`$min`/`$max`, idempotent) to the
 * earliest and latest of `readings`: what a fold does for the readings it folds, before
 * it makes them visible, so a reader that no longer finds them in the tail finds them in
 * the registry entry (`metricSpan`).
 * @param readings reading times by metric name, as `[earliest, latest]` in ms since epoch (UTC).
 */
export async function widenMetricSpans(store: Pick<Store, 'metrics'>, readings: ReadonlyMap<string, [number, number]>): Promise<void> {
  for (const [metric, [first, last]] of readings) {
    await store.metrics.updateOne({ _id: metric }, { $min: { first: new Date(first) }, $max: { last: new Date(last) } });
  }
}

/** What a series document holds besides its id and fields, fixed when it is first registered: key, metric, tag pairs and tags, in name order. */
const seriesIdentity = (write: SeriesInBatch): Omit<SeriesDocument, '_id' | 'fields'> => ({
  key: write.key,
  metric: write.metric,
  tagPairs: write.tagPairs,
  tags: write.tags,
});

/**
 * Registers the series of the batch that this process has not registered recently, in
 * the metric's current registry generation, with all the batch's fields (see
 * `Store.seriesCache`):
 * 1. reads which of them exist, with their fields (one `find` by `_id`);
 * 2. inserts the missing ones whole (one unordered bulk write of inserts);
 * 3. adds the batch's fields to those that lack some, and to those a concurrent writer
 *    inserted first (duplicate key in step 2), by upsert (`$setOnInsert` the series,
 *    `$addToSet` the fields), so a series deleted meanwhile is registered again.
 * Inserts rather than upserts because a batch of new series is the common case of an
 * import's first batches, and an upsert costs a lookup and an update plan per series:
 * on the embedded server 751 new series took 957 ms as upserts (docs/measurements/2026-11-27.md,
 * "Registering new series"). Idempotent: a retry after any failure completes what is missing.
 * @param metrics the batch's metric registry entries, read by this batch.
 * @throws Error when an upsert still loses its first-insert race after
 * `DUPLICATE_KEY_RETRIES` retries; driver errors propagate unchanged.
 */
async function registerSeries(store: Store, writes: readonly SeriesInBatch[], metrics: ReadonlyMap<string, MetricDocument>): Promise<void> {
  const generations = new Map([...metrics].map(([name, entry]) => [name, registryGeneration(entry)]));
  const generationOf = (write: SeriesInBatch) => generations.get(write.metric) ?? '';
  const unknown = writes.filter((write) => {
    const cached = store.seriesCache.get(write.id);
    return cached === undefined || cached.generation !== generationOf(write) || !isSubset(write.fields, cached.fields);
  });
  if (unknown.length === 0) return;
  const found = await store.series.find({ _id: { $in: unknown.map((write) => write.id) } }, { projection: { fields: 1 } }).toArray();
  const existing = new Map(found.map((doc) => [doc._id, doc.fields ?? []]));
  const missing = unknown.filter((write) => !existing.has(write.id));
  let toUpdate = unknown.filter((write) => existing.has(write.id) && !isSubset(write.fields, existing.get(write.id)!));
  if (missing.length > 0) {
    // Fields in the order the upsert below stores them (MongoDB applies an upsert's
    // fields in name order), so every series document has one shape.
    const documents: SeriesDocument[] = missing.map((write) => ({ _id: write.id, fields: [...write.fields], ...seriesIdentity(write) }));
    const lost = await bulkWriteDuplicates(
      store.series,
      documents.map((document) => ({ insertOne: { document } })),
    );
    // Inserted by a concurrent writer first, maybe with fewer fields: upserted below.
    toUpdate = [...toUpdate, ...lost.map((index) => missing[index]!)];
    const lostIds = new Set(lost.map((index) => missing[index]!.id));
    await countInserted(
      store,
      missing.filter((write) => !lostIds.has(write.id)),
      metrics,
    );
  }
  let remaining: AnyBulkWriteOperation<SeriesDocument>[] = toUpdate.map((write) => ({
    updateOne: {
      filter: { _id: write.id },
      update: {
        $setOnInsert: seriesIdentity(write),
        $addToSet: { fields: { $each: [...write.fields] } },
      },
      upsert: true,
    },
  }));
  for (let attempt = 0; remaining.length > 0; attempt++) {
    const failed = await bulkWriteDuplicates(store.series, remaining);
    if (failed.length > 0 && attempt >= DUPLICATE_KEY_RETRIES) {
      throw new Error(`Series registration still lost ${failed.length} first-insert races after ${DUPLICATE_KEY_RETRIES} retries`);
    }
    // A lost first-insert race: retried, the upsert matches the document the winner inserted.
    remaining = failed.map((index) => remaining[index]!);
  }
  for (const write of unknown) {
    const generation = generationOf(write);
    const cached = store.seriesCache.get(write.id);
    const known = cached?.generation === generation ? cached.fields : [];
    store.seriesCache.set(write.id, { fields: new Set([...known, ...write.fields]), generation });
  }
}

/**
 * Adds the series `inserted` just put into the registry to their metrics'
 * `seriesCount`; an entry made before the count existed gets its count from the
 * registry first (the inserted series included), once.
 */
async function countInserted(
  store: Pick<Store, 'series' | 'metrics'>,
  inserted: readonly SeriesInBatch[],
  metrics: ReadonlyMap<string, MetricDocument>,
): Promise<void> {
  const byMetric = new Map<string, number>();
  for (const write of inserted) byMetric.set(write.metric, (byMetric.get(write.metric) ?? 0) + 1);
  for (const [metric, added] of byMetric) {
    if (metrics.get(metric)?.seriesCount === undefined) {
      const count = await store.series.countDocuments({ metric });
      const set = await store.metrics.updateOne({ _id: metric, seriesCount: { $exists: false } }, { $set: { seriesCount: count } });
      if (set.modifiedCount > 0) continue;
    }
    await store.metrics.updateOne({ _id: metric }, { $inc: { seriesCount: added } });
  }
}

/**
 * Runs an unordered `bulkWrite` and returns the indexes of the operations that failed
 * with a duplicate-key error (11000), the only failure a caller can act on. Any other
 * failure is thrown, and so is a `MongoBulkWriteError` that lists no write errors at all:
 * the driver throws that when the connection is lost mid-write, and then it is unknown
 * which operations were applied; treating it as success would acknowledge readings that
 * were never stored.
 * @param options.maxTimeMS server-side time limit of the whole write (MongoDB manual,
 * "cursor.maxTimeMS()" / "Write Concern"; a server that ignores it runs the write to the end).
 */
export async function bulkWriteDuplicates<T extends Document>(
  collection: { bulkWrite(ops: AnyBulkWriteOperation<T>[], options: { ordered: false; maxTimeMS?: number }): Promise<unknown> },
  operations: AnyBulkWriteOperation<T>[],
  options: { maxTimeMS?: number } = {},
): Promise<number[]> {
  try {
    await collection.bulkWrite(operations, { ordered: false, ...options });
    return [];
  } catch (error) {
    return duplicateKeyIndexes(error);
  }
}

/**
 * The indexes of the operations an unordered bulk write (`bulkWrite`, `insertMany`)
 * failed with a duplicate key (11000), when that is all that failed.
 * @throws `error` itself otherwise: another failure, or a `MongoBulkWriteError` listing
 * no write errors (a connection lost mid-write: unknown which operations were applied).
 */
export function duplicateKeyIndexes(error: unknown): number[] {
  if (!(error instanceof MongoBulkWriteError) || isUnavailable(error)) throw error;
  const writeErrors = [error.writeErrors].flat();
  if (writeErrors.length === 0 || writeErrors.some((writeError) => writeError.code !== 11000)) throw error;
  return writeErrors.map((writeError) => writeError.index);
}
