import { MongoBulkWriteError, type AnyBulkWriteOperation, type Document } from 'mongodb';
import { ErrorCode, InputError, isDuplicateKeyError } from '../errors.ts';
import type { BucketDocument, BucketLayout } from '../model/bucket-document.ts';
import { bucketSkeleton } from '../model/bucket-document.ts';
import { Limits } from '../model/limits.ts';
import { bucketUpdate, planWrites, type BucketWrite, type MetricWrite, type SeriesWrite } from '../record/plan.ts';
import type { Reading } from '../record/validate.ts';
import type { MetricDocument, SeriesDocument, Store } from './store.ts';

/** What one call of {@link recordReadings} wrote. */
export interface RecordSummary {
  /** Readings recorded. */
  recorded: number;
  /** Distinct series written to. */
  series: number;
  /** Bucket documents written to (one update each). */
  buckets: number;
}

/** How often an operation that lost a first-insert race (error 11000) is retried. */
const DUPLICATE_KEY_RETRIES = 5;

/**
 * The record path: writes a validated batch (see `record/validate.ts`).
 * 1. Plans the batch: readings grouped by bucket document and merged in memory.
 * 2. Registers new metrics, fields and tag keys, checking the per-metric field limit
 *    for every metric before anything is written.
 * 3. Registers new series (before their buckets, so a query that finds series
 *    through the registry never misses data).
 * 4. Applies ONE atomic update per bucket document, updating the day, hour and
 *    minute levels at once, in one unordered `bulkWrite`.
 * 5. Widens the metric's first/last reading time in the registry when the batch
 *    reaches outside it.
 * Readings may be late or out of order; an empty batch writes nothing.
 * @throws InputError TOO_MANY_NAMES when a metric would exceed `Limits.fieldsPerMetric`
 * fields (nothing is written then). Driver errors propagate unchanged.
 */
export async function recordReadings(store: Store, readings: readonly Reading[]): Promise<RecordSummary> {
  if (readings.length === 0) return { recorded: 0, series: 0, buckets: 0 };
  const plan = planWrites(readings);
  const layouts = await registerMetrics(store, plan.metrics);
  await registerSeries(store, plan.series);
  await writeBuckets(store, plan.buckets, layouts);
  await widenMetricSpans(store, plan.metrics);
  return { recorded: plan.readings, series: plan.series.length, buckets: plan.buckets.length };
}

const isSubset = (items: Iterable<string>, of: Set<string>) => {
  for (const item of items) if (!of.has(item)) return false;
  return true;
};

function tooManyFields(metric: string, count: number): InputError {
  return new InputError(
    ErrorCode.TOO_MANY_NAMES,
    `Metric "${metric}" would have ${count} fields; a metric may have at most ${Limits.fieldsPerMetric}`,
  );
}

/**
 * Makes sure every metric of the batch exists with all the batch's fields and tag
 * keys, and returns each metric's layout. All limits are checked before the first
 * write; the update of an existing metric re-checks the limit atomically in its filter.
 */
async function registerMetrics(store: Store, writes: readonly MetricWrite[]): Promise<Map<string, BucketLayout>> {
  const layouts = new Map<string, BucketLayout>();
  const pending: { write: MetricWrite; existing: MetricDocument | null }[] = [];
  for (const write of writes) {
    const cached = store.cache.metrics.get(write.name);
    if (cached && isSubset(write.fields, cached.fields) && isSubset(write.tagKeys, cached.tagKeys)) {
      layouts.set(write.name, cached.layout);
      continue;
    }
    const existing = await store.metrics.findOne({ _id: write.name });
    const fields = new Set([...(existing?.fields ?? []), ...write.fields]);
    if (fields.size > Limits.fieldsPerMetric) throw tooManyFields(write.name, fields.size);
    pending.push({ write, existing });
  }

  for (const { write, existing } of pending) {
    const addToSet = { fields: { $each: [...write.fields] }, tagKeys: { $each: [...write.tagKeys] } };
    let stored: MetricDocument | null = null;
    if (existing === null) {
      try {
        stored = await store.metrics.findOneAndUpdate(
          { _id: write.name },
          { $addToSet: addToSet, $setOnInsert: { layout: store.defaultLayout, createdAt: new Date() } },
          { upsert: true, returnDocument: 'after' },
        );
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    if (stored === null) {
      // The metric exists (or a concurrent writer just created it): add the fields only
      // while the total stays within the limit.
      stored = await store.metrics.findOneAndUpdate(
        {
          _id: write.name,
          $expr: {
            $lte: [{ $size: { $setUnion: [{ $ifNull: ['$fields', []] }, [...write.fields]] } }, Limits.fieldsPerMetric],
          },
        },
        { $addToSet: addToSet },
        { returnDocument: 'after' },
      );
      if (stored === null) {
        const now = await store.metrics.findOne({ _id: write.name });
        throw tooManyFields(write.name, new Set([...(now?.fields ?? []), ...write.fields]).size);
      }
    }
    store.cache.metrics.set(write.name, {
      fields: new Set(stored.fields),
      tagKeys: new Set(stored.tagKeys),
      layout: stored.layout,
      first: stored.first?.getTime(),
      last: stored.last?.getTime(),
    });
    layouts.set(write.name, stored.layout);
  }
  return layouts;
}

/**
 * Records the earliest and latest reading time per metric (`$min`/`$max`), skipped when
 * this process already knows the metric's span covers the batch.
 */
async function widenMetricSpans(store: Store, writes: readonly MetricWrite[]): Promise<void> {
  for (const write of writes) {
    const cached = store.cache.metrics.get(write.name);
    if (cached?.first !== undefined && cached.last !== undefined && cached.first <= write.first && cached.last >= write.last) {
      continue;
    }
    const stored = await store.metrics.findOneAndUpdate(
      { _id: write.name },
      { $min: { first: new Date(write.first) }, $max: { last: new Date(write.last) } },
      { returnDocument: 'after', projection: { first: 1, last: 1 } },
    );
    if (cached && stored) {
      cached.first = stored.first?.getTime();
      cached.last = stored.last?.getTime();
    }
  }
}

/** Upserts series the process has not seen yet, and fields new to known series. */
async function registerSeries(store: Store, writes: readonly SeriesWrite[]): Promise<void> {
  const unknown = writes.filter((write) => {
    const cached = store.cache.series.get(write.id);
    return cached === undefined || !isSubset(write.fields, cached);
  });
  if (unknown.length === 0) return;
  const operations: AnyBulkWriteOperation<SeriesDocument>[] = unknown.map((write) => ({
    updateOne: {
      filter: { _id: write.id },
      update: {
        $setOnInsert: {
          key: write.key,
          metric: write.metric,
          tags: write.tags,
          tagPairs: write.tagPairs,
        },
        $addToSet: { fields: { $each: [...write.fields] } },
      },
      upsert: true,
    },
  }));
  await bulkWriteRetryingDuplicates(store.series, operations);
  for (const write of unknown) {
    store.cache.series.set(write.id, new Set([...(store.cache.series.get(write.id) ?? []), ...write.fields]));
  }
}

/**
 * Runs an unordered `bulkWrite` of upserts and retries the operations that failed with
 * a duplicate-key error: two writers upserting the same new document race, one inserts
 * and the other fails with 11000; retried, its update matches the inserted document.
 */
async function bulkWriteRetryingDuplicates<T extends Document>(
  collection: { bulkWrite(ops: AnyBulkWriteOperation<T>[], options: { ordered: false }): Promise<unknown> },
  operations: AnyBulkWriteOperation<T>[],
): Promise<void> {
  let remaining = operations;
  for (let attempt = 0; remaining.length > 0; attempt++) {
    try {
      await collection.bulkWrite(remaining, { ordered: false });
      return;
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError) || attempt >= DUPLICATE_KEY_RETRIES) throw error;
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (writeErrors.some((writeError) => writeError.code !== 11000)) throw error;
      remaining = writeErrors.map((writeError) => remaining[writeError.index]!);
    }
  }
}

/** Applies the batch's bucket writes, one atomic update per bucket document. */
async function writeBuckets(
  store: Store,
  writes: readonly BucketWrite[],
  layouts: ReadonlyMap<string, BucketLayout>,
): Promise<void> {
  const sparse = writes.filter((write) => layouts.get(write.metric) !== 'preallocated');
  const preallocated = writes.filter((write) => layouts.get(write.metric) === 'preallocated');
  if (sparse.length > 0) {
    await bulkWriteRetryingDuplicates(
      store.buckets,
      sparse.map((write) => ({
        updateOne: { filter: { series: write.series, date: write.date }, update: bucketUpdate(write, true), upsert: true },
      })),
    );
  }
  if (preallocated.length > 0) await writePreallocated(store, preallocated);
}

const skeletonKey = (write: BucketWrite) => `${write.series}:${write.date.getTime()}`;

/**
 * The `preallocated` layout, seed 001's three-step initialization done for a whole
 * batch: (1) find which target documents exist, (2) insert zeroed skeletons for the
 * missing ones, ignoring duplicates a concurrent writer inserted first, (3) apply every
 * update without upsert. Each update runs exactly once, and runs on a full skeleton,
 * so it never changes the document's size.
 */
async function writePreallocated(store: Store, writes: readonly BucketWrite[]): Promise<void> {
  const unknown = writes.filter((write) => !store.cache.skeletons.has(skeletonKey(write)));
  if (unknown.length > 0) {
    const existing = await store.buckets
      .find(
        {
          series: { $in: [...new Set(unknown.map((write) => write.series))] },
          date: { $in: [...new Set(unknown.map((write) => write.date.getTime()))].map((ms) => new Date(ms)) },
        },
        { projection: { _id: 0, series: 1, date: 1 } },
      )
      .toArray();
    const found = new Set(existing.map((doc) => `${doc.series}:${doc.date.getTime()}`));
    const missing = unknown.filter((write) => !found.has(skeletonKey(write)));
    if (missing.length > 0) {
      const skeletons = missing.map((write) => {
        const fields = store.cache.metrics.get(write.metric)?.fields ?? write.fields;
        return bucketSkeleton(
          { series: write.series, metric: write.metric, tags: write.tags, tagPairs: write.tagPairs, date: write.date },
          [...new Set([...fields, ...write.fields])],
        );
      });
      try {
        await store.buckets.insertMany(skeletons as unknown as BucketDocument[], { ordered: false });
      } catch (error) {
        const writeErrors = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : null;
        if (writeErrors === null || writeErrors.some((writeError) => writeError.code !== 11000)) throw error;
      }
    }
    for (const write of unknown) store.cache.skeletons.set(skeletonKey(write), true);
  }
  const result = await store.buckets.bulkWrite(
    writes.map((write) => ({
      updateOne: { filter: { series: write.series, date: write.date }, update: bucketUpdate(write, false) },
    })),
    { ordered: false },
  );
  if (result.matchedCount !== writes.length) {
    throw new Error(`Pre-allocated bucket update matched ${result.matchedCount} of ${writes.length} documents`);
  }
}
