/**
 * The automatic rollups (docs/rollups.md, "Automatic rollups"): each metric's shape read
 * from the registries and the day summaries, and the rollups `model/rollup-policy.ts`
 * proposes for it defined (in state `building`; the rollup pass then backfills them,
 * `rebuildDirtyDays`).
 */
import type { Document } from 'mongodb';
import { InputError } from '../errors.ts';
import { type MetricShape, proposeRollups, type RollupPolicy } from '../model/rollup-policy.ts';
import { summariesOfDay } from '../documents/summaries.ts';
import { readView } from './fold-state.ts';
import { createRollup, findRollups } from './rollups.ts';
import type { MetricDocument, Store } from './store.ts';
import { findSummaries } from './summaries.ts';

/**
 * The number of distinct values of each tag key among the series of `metric` (one
 * aggregation of the series registry: its tag pairs, distinct, counted by key).
 */
async function tagKeyValues(store: Store, metric: string): Promise<{ key: string; values: number }[]> {
  const pipeline: Document[] = [
    { $match: { metric } },
    { $unwind: '$tagPairs' },
    { $group: { _id: '$tagPairs' } },
    { $group: { _id: { $arrayElemAt: [{ $split: ['$_id', '='] }, 0] }, values: { $sum: 1 } } },
  ];
  const rows = await store.series.aggregate<{ _id: string; values: number }>(pipeline).toArray();
  return rows.map((row) => ({ key: row._id, values: row.values })).sort((a, b) => a.key.localeCompare(b.key));
}

/**
 * Readings a series of `metric` holds a day, on average, on the metric's latest day with
 * readings: the day summaries' total (the field with the most readings) over the
 * series count; null without a summary of that day.
 */
async function readingsPerSeriesDay(store: Store, entry: MetricDocument, series: number): Promise<number | null> {
  if (entry.last === undefined || series === 0) return null;
  const day = new Date(Math.floor(entry.last.getTime() / 86_400_000) * 86_400_000);
  const [summaries, view] = await Promise.all([findSummaries(store, { metric: entry._id, date: day }), readView(store)]);
  const chosen = summariesOfDay(summaries, view.visible, null);
  if (chosen.length === 0) return null;
  let readings = 0;
  for (const summary of chosen) readings += Math.max(0, ...Object.values(summary.total).map((stats) => stats.n));
  return readings / series;
}

/** The shape of `entry`'s metric (see {@link MetricShape}). */
export async function metricShape(store: Store, entry: MetricDocument): Promise<MetricShape> {
  const [series, keys] = await Promise.all([store.series.countDocuments({ metric: entry._id }), tagKeyValues(store, entry._id)]);
  return { metric: entry._id, series, keys, readingsPerSeriesDay: await readingsPerSeriesDay(store, entry, series) };
}

/**
 * Defines the automatic rollups every metric with readings should have and has not
 * (`proposeRollups` of its shape), as `building` rollups marked `automatic`. A rollup
 * another instance defined meanwhile, or that no longer fits (`ROLLUPS_PER_METRIC`), is
 * skipped. Stops between metrics once `signal` is aborted.
 * @returns the rollups defined (metric and name).
 * @throws driver errors.
 */
export async function defineAutomaticRollups(
  store: Store,
  policy: Readonly<RollupPolicy>,
  options: { signal?: AbortSignal } = {},
): Promise<{ metric: string; name: string; tagKeys: string[] }[]> {
  if (!policy.enabled) return [];
  const defined: { metric: string; name: string; tagKeys: string[] }[] = [];
  for (const entry of await store.metrics
    .find({ last: { $exists: true } })
    .sort({ _id: 1 })
    .toArray()) {
    if (options.signal?.aborted) break;
    const existing = await findRollups(store, [entry._id]);
    const proposals = proposeRollups(
      await metricShape(store, entry),
      policy,
      existing.map((rollup) => rollup.tagKeys),
      entry.declinedRollups ?? [],
      existing.filter((rollup) => rollup.automatic === true).length,
    );
    for (const proposal of proposals) {
      try {
        await createRollup(store, { metric: entry._id, ...proposal, automatic: true });
        defined.push({ metric: entry._id, ...proposal });
      } catch (error) {
        // Defined meanwhile by another instance, or no room left: nothing to do.
        if (!(error instanceof InputError)) throw error;
      }
    }
  }
  return defined;
}
