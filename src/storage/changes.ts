/**
 * Change streams on the series-day documents, for live subscriptions
 * (`events/live-events.ts`): whether the database offers them, and a stream of the
 * changes to chosen metrics' documents.
 */
import type { ChangeStream, ChangeStreamDocument, ResumeToken } from 'mongodb';
import type { DayDocument } from '../model/day-document.ts';
import type { Store } from './store.ts';

/** A change to a series-day document, as {@link watchDayDocuments} delivers it: the metric, the day and the updated paths' names (their values too). */
export type DayDocumentChange = ChangeStreamDocument<{ metric?: unknown; date?: unknown }>;

/**
 * Whether the database can watch the series-day collection with a change stream. A
 * standalone server refuses with "The $changeStream stage is only supported on replica
 * sets" (code 40573); so does the embedded SecantusDB, which runs standalone.
 * @returns `supported`, and the server's reason when not.
 */
export async function probeChangeStreams(store: Store): Promise<{ supported: boolean; reason?: string }> {
  const probe = store.buckets.watch([], { maxAwaitTimeMS: 1 });
  try {
    await probe.tryNext();
    return { supported: true };
  } catch (error) {
    return { supported: false, reason: (error as Error).message };
  } finally {
    await probe.close().catch(() => {});
  }
}

/**
 * A change stream of the inserts, updates and replacements of the series-day documents
 * of `metrics` (`$match` on `fullDocument.metric`, with `fullDocument: 'updateLookup'`,
 * as an update event carries only the changed paths; `$project` keeps the metric, the
 * day and the updated paths), from `startAfter` when given, else from now.
 */
export function watchDayDocuments(
  store: Store,
  metrics: readonly string[],
  startAfter?: ResumeToken,
): ChangeStream<DayDocument, DayDocumentChange> {
  return store.buckets.watch<DayDocument, DayDocumentChange>(
    [
      { $match: { operationType: { $in: ['insert', 'update', 'replace'] }, 'fullDocument.metric': { $in: [...metrics] } } },
      { $project: { operationType: 1, 'fullDocument.metric': 1, 'fullDocument.date': 1, 'updateDescription.updatedFields': 1 } },
    ],
    { fullDocument: 'updateLookup', ...(startAfter === undefined ? {} : { startAfter }) },
  );
}
