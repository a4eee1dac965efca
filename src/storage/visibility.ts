/**
 * What a reader sees (docs/ingest-design.md, "Real-time reads"): the series-day and
 * rollup documents of the folds up to the visible fold number V, plus the tail, the
 * log entries no visible fold holds yet, read from the log and planned in memory.
 */
import type { Collection, Db, Document, Filter } from 'mongodb';
import { LRUCache } from 'lru-cache';
import type { Reading } from '../record/validate.ts';
import { entryReadings, ingestLog, type LogEntryDocument } from './ingest-log.ts';
import type { Store } from './store.ts';

/** Collection name of the fold state (a handful of small documents). */
export const FOLD_STATE_COLLECTION = 'fold_state';

/** The `_id` of the fold state's main document. */
export const FOLDS_ID = 'folds';

/** A fold under way: its number and the log entries it takes (fixed once recorded). */
export interface RunningFold {
  seq: number;
  entries: LogEntryDocument['_id'][];
}

/** The fold state (`fold_state`, `_id: "folds"`). */
export interface FoldStateDocument {
  _id: typeof FOLDS_ID;
  /** The visible fold number V: documents with `f <= V` (or no `f`) are read, log entries with `fold <= V` are not. */
  visible: number;
  /** The fold under way, recorded before it writes anything; null between folds. */
  running: RunningFold | null;
  /** The folder's lease: who may run folds, and until when (local time of the holder). */
  lease: { holder: string; until: Date } | null;
}

/** The fold state collection of a store. */
export const foldState = (db: Db): Collection<FoldStateDocument> => db.collection<FoldStateDocument>(FOLD_STATE_COLLECTION);

/** Creates the fold state document when the database has none (idempotent; V starts at 0). */
export async function ensureFoldState(db: Db): Promise<void> {
  await foldState(db).updateOne({ _id: FOLDS_ID }, { $setOnInsert: { visible: 0, running: null, lease: null } }, { upsert: true });
}

/** The visible fold number V: one read by `_id`. */
export async function readVisible(store: Pick<Store, 'db'>): Promise<number> {
  const state = await foldState(store.db).findOne({ _id: FOLDS_ID }, { projection: { visible: 1 } });
  return state?.visible ?? 0;
}

/**
 * The condition that keeps a document visible at fold number `visible`: written by a
 * fold up to `visible`, or before folds existed (no `f`). Added to the first `$match`
 * of every read of series-day and rollup documents.
 */
export const visibleAt = (visible: number): Filter<Document> => ({ f: { $not: { $gt: visible } } });

/** The condition on log entries not yet visible at fold number `visible`: taken by no fold, or by a later one. */
export const unfoldedAt = (visible: number): Filter<LogEntryDocument> => ({ $or: [{ fold: null }, { fold: { $gt: visible } }] });

/** Readings of log entries by entry id: an entry never changes, so its readings are decoded once per process. */
const decoded = new LRUCache<string, Reading[]>({ max: 2_000 });

/** The unfolded readings a reader must add to the documents it reads. */
export interface Tail {
  /** Log entries read. */
  entries: number;
  /** Their readings of the asked metric, in the order of the log. */
  readings: Reading[];
}

/**
 * The tail of `metric` (null: of every metric) at fold number `visible`: the readings of that metric in log
 * entries no fold up to `visible` holds (`{metrics, fold}` index). An entry stamped by a
 * fold after the reader read `visible` has a number above it, so it stays in the tail
 * for that reader, whose documents of that fold are invisible.
 * @param options.maxTimeMS time limit of the read (see `query-options.ts`).
 */
export async function readTail(
  store: Pick<Store, 'db'>,
  metric: string | null,
  visible: number,
  driver: { maxTimeMS?: number; signal?: AbortSignal } = {},
): Promise<Tail> {
  const filter: Filter<LogEntryDocument> = metric === null ? unfoldedAt(visible) : { metrics: metric, ...unfoldedAt(visible) };
  const ids = await ingestLog(store)
    .find(filter, { ...driver, projection: { _id: 1 } })
    .toArray();
  if (ids.length === 0) return { entries: 0, readings: [] };
  const missing = ids.filter((entry) => !decoded.has(String(entry._id))).map((entry) => entry._id);
  if (missing.length > 0) {
    for (const entry of await ingestLog(store)
      .find({ _id: { $in: missing } }, driver)
      .toArray()) {
      decoded.set(String(entry._id), entryReadings(entry));
    }
  }
  const readings: Reading[] = [];
  for (const { _id } of ids) {
    for (const reading of decoded.get(String(_id)) ?? []) if (metric === null || reading.metric === metric) readings.push(reading);
  }
  return { entries: ids.length, readings };
}
