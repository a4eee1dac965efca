/**
 * Change streams for live subscriptions (`events/live-events.ts`): whether the database
 * offers them, and a stream of the acknowledged batches of chosen metrics (the inserts
 * into the ingest log).
 */
import type { ChangeStream, ChangeStreamDocument, ResumeToken } from 'mongodb';
import { ingestLog, type LogEntryDocument } from './ingest-log.ts';
import type { Store } from './store.ts';

/**
 * Whether the database can watch the series-day collection with a change stream. A
 * standalone server refuses with "The $changeStream stage is only supported on replica
 * sets" (code 40573); so does the embedded SecantusDB, which runs standalone.
 * @returns `supported`, and the server's reason when not.
 */
export async function probeChangeStreams(store: Store): Promise<{ supported: boolean; reason?: string }> {
  const probe = store.seriesDays.watch([], { maxAwaitTimeMS: 1 });
  try {
    await probe.tryNext();
    return { supported: true };
  } catch (error) {
    return { supported: false, reason: (error as Error).message };
  } finally {
    await probe.close().catch(() => {});
  }
}

/** A new log entry, as {@link watchIngestLog} delivers it: its metrics and the time span of its readings. */
export type LogEntryChange = ChangeStreamDocument<{ metrics?: unknown; first?: unknown; last?: unknown }>;

/**
 * A change stream of the inserts into the ingest log (each an acknowledged batch) that
 * hold readings of `metrics` (`$match` on `fullDocument.metrics`; `$project` keeps the
 * metrics and the first and last reading time), from `startAfter` when given, else from now.
 */
export function watchIngestLog(
  store: Store,
  metrics: readonly string[],
  startAfter?: ResumeToken,
): ChangeStream<LogEntryDocument, LogEntryChange> {
  return ingestLog(store).watch<LogEntryDocument, LogEntryChange>(
    [
      { $match: { operationType: 'insert', 'fullDocument.metrics': { $in: [...metrics] } } },
      { $project: { operationType: 1, 'fullDocument.metrics': 1, 'fullDocument.first': 1, 'fullDocument.last': 1 } },
    ],
    startAfter === undefined ? {} : { startAfter },
  );
}
