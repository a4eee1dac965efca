import { horizonsOf } from '../model/retention.ts';
import type { PlanSettings } from '../record/fold-plan.ts';
import { ingestLog } from './ingest-log.ts';
import { ErrorCode, InputError, isDuplicateKeyError } from '../errors.ts';
import type { DocumentLayout } from '../model/day-document.ts';
import type { StatisticsSettings } from '../model/statistics-settings.ts';
import type { MetricDocument, Store } from './store.ts';

/**
 * Sets the bucket layout of metric `name`, creating its registry entry when it has none
 * yet (without fields or tag keys). A layout is fixed once the metric has bucket
 * documents: asking for the layout it has is a no-op, asking for another one fails.
 * @returns the metric's registry entry after the change.
 * @throws InputError LAYOUT_LOCKED when the metric has data in another layout.
 */
export async function setMetricLayout(store: Store, name: string, layout: DocumentLayout): Promise<MetricDocument> {
  for (;;) {
    const existing = await store.metrics.findOne({ _id: name });
    if (existing === null) {
      try {
        const created: MetricDocument = {
          _id: name,
          fields: [],
          tagKeys: [],
          layout,
          statistics: store.defaultStatistics,
          createdAt: new Date(),
        };
        await store.metrics.insertOne(created);
        return created;
      } catch (error) {
        if (isDuplicateKeyError(error)) continue; // created concurrently: decide again
        throw error;
      }
    }
    if (existing.layout === layout) return existing;
    const hasData =
      (await store.buckets.findOne({ metric: name }, { projection: { _id: 1 } })) !== null ||
      (await ingestLog(store).findOne({ metrics: name }, { projection: { _id: 1 } })) !== null;
    if (hasData) {
      throw new InputError(
        ErrorCode.LAYOUT_LOCKED,
        `Metric "${name}" already has data in the ${existing.layout} layout; its layout cannot change`,
        'layout',
      );
    }
    const updated = await store.metrics.findOneAndUpdate(
      { _id: name, layout: existing.layout },
      { $set: { layout } },
      { returnDocument: 'after' },
    );
    if (updated === null) continue; // changed concurrently: decide again
    return updated;
  }
}

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
    { $set: { statistics }, $setOnInsert: { fields: [], tagKeys: [], layout: store.defaultLayout, createdAt: new Date() } },
    { upsert: true, returnDocument: 'after' },
  );
  return updated!;
}

/**
 * How readings of `metrics` are planned now (`PlanSettings` of `record/fold-plan.ts`):
 * each metric's statistics settings (the store's default for a metric without an entry
 * or without settings) and the retention horizons its last pass applied, from one read
 * of their registry entries. What a fold, a compaction and a read's tail plan with.
 * @param driver the read's `maxTimeMS` and abort signal (see `query-options.ts`).
 */
export async function planSettingsOf(
  store: Store,
  metrics: readonly string[],
  driver: { maxTimeMS?: number; signal?: AbortSignal } = {},
): Promise<PlanSettings> {
  const entries = await store.metrics
    .find({ _id: { $in: [...metrics] } }, { ...driver, projection: { statistics: 1, retention: 1 } })
    .toArray();
  const entryOf = new Map(entries.map((entry) => [entry._id, entry]));
  return {
    settingsOf: (metric) => entryOf.get(metric)?.statistics ?? store.defaultStatistics,
    horizonsOf: (metric) => horizonsOf(entryOf.get(metric)?.retention?.horizons),
  };
}
