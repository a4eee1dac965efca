/**
 * Day summaries as stored (`documents/summaries.ts`; docs/design.md, "Day
 * summaries and day sketches"): a summary's statistics in `day_summaries`, its day
 * sketches apart in `day_sketches` under the same `_id`, `metric`, `date` and `f`, so a
 * query without percentiles reads no sketch, and every filter that selects summaries
 * selects their sketches too.
 */
import type { Document, Filter, FindOptions } from 'mongodb';
import { CollectionName, type Store } from './store.ts';
import type { DaySummary, StoredSketches } from '../documents/summaries.ts';

/**
 * The summaries `filter` selects (a filter on `metric`, `date`, `f` and `kind`), with
 * their day sketches when `sketches` (read beside them by the same filter without
 * `kind`, so no wait is added; a summary whose sketches are not found has none).
 * @param options driver options of both reads (a `maxTimeMS` and a signal, as the caller's other reads).
 * @throws driver errors.
 */
export async function findSummaries(
  store: Store,
  filter: Filter<Document>,
  options: FindOptions = {},
  sketches = false,
): Promise<DaySummary[]> {
  const { kind: _kind, ...sketchFilter } = filter;
  const [found, stored] = await Promise.all([
    store.db.collection(CollectionName.summaries).find(filter, options).toArray() as unknown as Promise<DaySummary[]>,
    sketches
      ? (store.db.collection(CollectionName.sketches).find(sketchFilter, options).toArray() as unknown as Promise<StoredSketches[]>)
      : [],
  ]);
  if (!sketches) return found;
  const byId = new Map(stored.map(({ _id, total, values, omitted, documents }) => [_id, { total, values, omitted, documents }]));
  return found.map((summary) => {
    const own = byId.get(summary._id);
    return own === undefined ? summary : { ...summary, sketches: own };
  });
}

/**
 * Deletes the summaries `filter` selects (on `metric`, `date`, `f` and `kind`), then
 * their sketches (the same filter without `kind`, which sketches do not keep: they
 * exist only for `whole` and `fold` summaries). A summary whose sketches are gone reads
 * its day's sketches from the documents, so the order only keeps sketches from
 * outliving their summary for long.
 * @returns the summaries deleted.
 */
export async function deleteSummaries(store: Store, filter: Filter<Document>): Promise<number> {
  const deleted = (await store.db.collection(CollectionName.summaries).deleteMany(filter)).deletedCount;
  const { kind: _kind, ...sketchFilter } = filter;
  await store.db.collection(CollectionName.sketches).deleteMany(sketchFilter);
  return deleted;
}
