/**
 * Day summaries as stored (`model/day-summary.ts`; docs/ingest-design.md, "Day
 * summaries" and "Day sketches"): a summary's statistics in `day_summaries`, its day
 * sketches apart in `day_sketches` under the same `_id`, `metric`, `date` and `f`, so a
 * query without percentiles reads no sketch, and every filter that selects summaries
 * selects their sketches too.
 */
import type { Document, Filter, FindOptions } from 'mongodb';
import type { DaySummary, SummarySketches } from '../model/day-summary.ts';
import { CollectionName, type Store } from './store.ts';

/** A summary's day sketches as stored in `day_sketches`. */
interface StoredSketches extends SummarySketches {
  _id: string;
  metric: string;
  date: Date;
  f: number;
}

/**
 * The documents to insert for `summaries` (pure): the summaries without their sketches,
 * and the sketches of those that have them, each under its summary's `_id`.
 */
export function storedSummaries(summaries: readonly DaySummary[]): { summaries: Document[]; sketches: Document[] } {
  const stored: Document[] = [];
  const sketches: Document[] = [];
  for (const { sketches: daySketches, ...summary } of summaries) {
    stored.push(summary);
    if (daySketches !== undefined) {
      sketches.push({
        _id: summary._id,
        metric: summary.metric,
        date: summary.date,
        f: summary.f,
        ...daySketches,
      } satisfies StoredSketches);
    }
  }
  return { summaries: stored, sketches };
}

/**
 * Reads the day sketches of the summaries `filter` selects (a filter on `metric`, `date`
 * and `f`, as for the summaries themselves), by summary `_id`.
 * @throws driver errors (a `maxTimeMS` in `options` as the caller's other reads).
 */
export async function findSketches(
  store: Store,
  filter: Filter<Document>,
  options: FindOptions = {},
): Promise<Map<string, SummarySketches>> {
  const found = (await store.db.collection(CollectionName.sketches).find(filter, options).toArray()) as unknown as StoredSketches[];
  return new Map(found.map(({ _id, total, values, omitted, documents }) => [_id, { total, values, omitted, documents }]));
}

/** `summaries` with the sketches of `sketches` (by `_id`) put in, those without any left as they are. */
export function withSketches(summaries: readonly DaySummary[], sketches: ReadonlyMap<string, SummarySketches>): DaySummary[] {
  return summaries.map((summary) => {
    const found = sketches.get(summary._id);
    return found === undefined ? summary : { ...summary, sketches: found };
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
