import { foldPending, finishRunning } from './fold.ts';
import { dropRollup, findRollups, markDirty } from './rollups.ts';
import { CollectionName, type Store } from './store.ts';
import { deleteSummaries } from './summaries.ts';
import { voidSummary } from '../documents/summaries.ts';
import { FOLDS_ID, foldState } from './fold-state.ts';
import { insertOnce } from './parts.ts';

/** What a deletion removed. */
export interface DeleteSummary {
  /** Series-day documents deleted. */
  documents: number;
  /** Series registry entries deleted. */
  series: number;
  /** Metric registry entries deleted (0 or 1). */
  metrics: number;
}

/**
 * Writes a `void` day summary (`documents/summaries.ts`) for each of `dates` of `metric` at
 * the visible fold number: the summaries up to it no longer answer those days, until a
 * newer whole one (the next compaction of the day, which merges a voided day whole,
 * `compactOnce`). A fold after it finds a summary of
 * the day, so it never takes the day for empty.
 * @returns the visible fold number it read.
 */
async function voidSummaries(store: Store, metric: string | undefined, dates: readonly Date[]): Promise<number> {
  const state = await foldState(store.db).findOne({ _id: FOLDS_ID }, { projection: { visible: 1 } });
  const visible = state?.visible ?? 0;
  if (metric === undefined || dates.length === 0) return visible;
  // Those written already at this number (a deletion run again) are the same documents.
  await insertOnce(
    store.db.collection(CollectionName.summaries),
    dates.map((date) => voidSummary(metric, date.getTime(), visible)),
  );
  return visible;
}

/** Forgets that this process registered the series `ids` (see `Store.seriesCache`). */
function forgetSeries(store: Store, ids: ReadonlySet<string>): void {
  for (const id of ids) store.seriesCache.delete(id);
}

/**
 * Deletes metric `name` with all its data: first folds its readings still in the ingest
 * log (`foldPending`), then deletes its rollups, voids its day summaries (`void`
 * summaries, before and after its documents go, then the others are deleted), deletes
 * its series-day documents, then its series registry entries, then its metric registry
 * entry (so an interrupted deletion leaves
 * the registry pointing at less data, never data without registry, and running it
 * again finishes it; the documents are deleted again once no fold or compaction is
 * under way, `finishRunning`), and clears this process's registry caches for it. Readings of the
 * metric recorded while it runs may survive; stop its writers first. A later batch of
 * the metric, sent to any server process on the same database, creates the metric
 * again with a new `createdAt`, so the processes' cached series registrations of the
 * deleted metric no longer count (see `registryGeneration`) and its series are
 * registered again. Batch claims are kept: a retry of a
 * batch completed before the deletion does not bring its readings back.
 * @returns how many documents of each kind were deleted (all 0: the metric was unknown).
 */
export async function deleteMetric(store: Store, name: string): Promise<DeleteSummary> {
  await foldPending(store, name);
  for (const rollup of await findRollups(store, [name])) await dropRollup(store, name, rollup.name);
  const ids = new Set((await store.series.find({ metric: name }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id));
  const dates = (await store.db.collection(CollectionName.summaries).distinct('date', { metric: name })) as Date[];
  await voidSummaries(store, name, dates);
  let documents = (await store.seriesDays.deleteMany({ metric: name })).deletedCount;
  // A compaction that read the documents before they were deleted would insert them again.
  await finishRunning(store);
  const voided = await voidSummaries(store, name, dates);
  documents += (await store.seriesDays.deleteMany({ metric: name })).deletedCount;
  // The summaries the voids replaced: none answers any more.
  await deleteSummaries(store, { metric: name, kind: { $ne: 'void' }, f: { $lte: voided } });
  const series = await store.series.deleteMany({ metric: name });
  const metrics = await store.metrics.deleteOne({ _id: name });
  forgetSeries(store, ids);
  return { documents, series: series.deletedCount, metrics: metrics.deletedCount };
}

/**
 * Deletes one series (by its id, the hash of its key): folds its metric's readings still
 * in the ingest log (`foldPending`), then deletes its series-day documents, then its
 * registry entry, then counts the deletion in the metric's registry entry
 * (`seriesDeletions`, so other processes stop trusting their cached registrations of
 * the metric's series), and clears this process's caches for it. The metric's fields,
 * tag keys and first and last reading time are left as they are. The series' days
 * are marked dirty in every rollup of its metric, before and after the deletion, so
 * queries read the series until a rebuild has taken the series out of the rollups
 * (see `storage/rollups.ts`). The day summaries of its days (`documents/summaries.ts`)
 * are voided before its documents go and again after any fold or compaction under way,
 * so queries read those days from the documents until their next whole-day compaction.
 * @returns how many documents were deleted (`metrics` is always 0; all 0: the series was unknown).
 */
export async function deleteSeries(store: Store, id: string): Promise<DeleteSummary> {
  const entry = await store.series.findOne({ _id: id }, { projection: { metric: 1 } });
  if (entry !== null) await foldPending(store, entry.metric);
  const rollups = entry === null ? [] : await findRollups(store, [entry.metric]);
  const dates = entry === null ? [] : ((await store.seriesDays.distinct('date', { series: id })) as Date[]);
  let dirty: { rollup: (typeof rollups)[number]; days: number[] }[] = [];
  if (rollups.length > 0) {
    const days = dates.map((date) => date.getTime());
    dirty = rollups.map((rollup) => ({ rollup, days }));
    await markDirty(store, dirty);
  }
  // The day summaries of its days count it: voided before its documents go (a query
  // then reads those days from the documents) and again after any fold or compaction
  // under way, which may have summed it up meanwhile.
  await voidSummaries(store, entry?.metric, dates);
  let documents = (await store.seriesDays.deleteMany({ series: id })).deletedCount;
  await finishRunning(store);
  await voidSummaries(store, entry?.metric, dates);
  documents += (await store.seriesDays.deleteMany({ series: id })).deletedCount;
  if (dirty.length > 0) await markDirty(store, dirty);
  const series = await store.series.deleteOne({ _id: id });
  if (entry !== null) await store.metrics.updateOne({ _id: entry.metric }, { $inc: { seriesDeletions: 1 } });
  if (entry !== null && series.deletedCount > 0) {
    await store.metrics.updateOne({ _id: entry.metric, seriesCount: { $gt: 0 } }, { $inc: { seriesCount: -1 } });
  }
  forgetSeries(store, new Set([id]));
  return { documents, series: series.deletedCount, metrics: 0 };
}
