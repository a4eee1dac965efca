import type { BucketScope } from '../query/buckets-pipeline.ts';
import type { TagFilter } from '../query/spec.ts';
import { findSeries } from '../storage/read.ts';
import type { Store } from '../storage/store.ts';

/**
 * Which bucket documents a query over `metric` filtered by `where` reads: the whole
 * metric when there is no filter, otherwise the ids of the matching series found in
 * the series registry. Null when no series matches (the answer is then empty without
 * running a pipeline).
 */
export async function resolveScope(store: Store, metric: string, where: readonly TagFilter[]): Promise<BucketScope | null> {
  if (where.length === 0) return { metric };
  const series = await findSeries(store, metric, where);
  return series.length === 0 ? null : { series: series.map((doc) => doc._id) };
}
