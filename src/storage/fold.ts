/**
 * The folder (docs/ingest-design.md, "Fold in bulk, exactly once"): turns log entries
 * into write-once parts of series-day and rollup documents, one numbered fold at a
 * time, under a lease, and makes each fold visible with one compare-and-set.
 */
import { MongoBulkWriteError, type Collection, type Document } from 'mongodb';
import { horizonsOf } from '../model/retention.ts';
import { foldDocuments, planReadings } from '../record/fold-plan.ts';
import { planRollups } from '../record/rollup-plan.ts';
import type { Reading } from '../record/validate.ts';
import { isUnavailable, unavailable } from './failures.ts';
import { entryReadings, ingestLog, type LogEntryDocument } from './ingest-log.ts';
import { findRollups, markDirty } from './rollups.ts';
import type { MetricDocument, Store } from './store.ts';
import { FOLDS_ID, foldState, readVisible, unfoldedAt, type FoldStateDocument, type RunningFold } from './visibility.ts';

/** How long a lease lasts, in ms, unless renewed; a folder that stops is replaced after at most this. */
export const LEASE_MS = 30_000;

/** Readings a fold takes at most (it takes at least one entry, however large). */
export const DEFAULT_FOLD_MAX_READINGS = 20_000;

/** What one call of {@link foldOnce} did. */
export interface FoldOutcome {
  /** False when another holder has the lease (nothing was done). */
  leased: boolean;
  /** The fold made visible, or null when there was nothing to fold. */
  fold: number | null;
  entries: number;
  readings: number;
  /** Series-day parts inserted now (parts already there from an earlier attempt not counted). */
  parts: number;
  /** Rollup parts inserted now. */
  rollupParts: number;
}

const nothing = (leased: boolean): FoldOutcome => ({ leased, fold: null, entries: 0, readings: 0, parts: 0, rollupParts: 0 });

/**
 * Takes or renews the lease for `holder`: one `findOneAndUpdate` that matches only when
 * the lease is free, expired or already the holder's.
 * @returns the fold state after the update, or null when another holder has the lease.
 */
export async function takeLease(store: Pick<Store, 'db'>, holder: string, leaseMs = LEASE_MS): Promise<FoldStateDocument | null> {
  const now = new Date();
  return foldState(store.db).findOneAndUpdate(
    { _id: FOLDS_ID, $or: [{ lease: null }, { 'lease.until': { $lt: now } }, { 'lease.holder': holder }] },
    { $set: { lease: { holder, until: new Date(now.getTime() + leaseMs) } } },
    { returnDocument: 'after' },
  );
}

/** Gives the lease up (at shutdown), so another instance folds at once instead of after it expires. */
export async function releaseLease(store: Pick<Store, 'db'>, holder: string): Promise<void> {
  await foldState(store.db).updateOne({ _id: FOLDS_ID, 'lease.holder': holder }, { $set: { lease: null } });
}

/**
 * Inserts documents that may exist already from an earlier attempt of the same fold
 * (same `_id`): one unordered `insertMany`; duplicate keys (11000) are skipped.
 * @returns how many were inserted now.
 * @throws any other failure, and a bulk error without write errors (a connection lost
 * mid-write: unknown which landed; the fold is completed by the next attempt).
 */
async function insertOnce(collection: Collection<Document>, docs: Document[]): Promise<number> {
  if (docs.length === 0) return 0;
  try {
    return (await collection.insertMany(docs, { ordered: false })).insertedCount;
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError) || isUnavailable(error)) throw error;
    const writeErrors = [error.writeErrors].flat();
    if (writeErrors.length === 0 || writeErrors.some((writeError) => writeError.code !== 11000)) throw error;
    return docs.length - writeErrors.length;
  }
}

/**
 * Chooses the oldest entries no fold has taken (`{fold, receivedAt}` index), up to
 * `maxReadings` readings and at least one entry.
 */
async function chooseEntries(store: Store, maxReadings: number): Promise<{ ids: RunningFold['entries']; readings: number }> {
  const ids: RunningFold['entries'] = [];
  let readings = 0;
  const cursor = ingestLog(store)
    .find({ fold: null }, { projection: { _id: 1, readings: 1 } })
    .sort({ fold: 1, receivedAt: 1 })
    .batchSize(500);
  try {
    for await (const entry of cursor) {
      if (ids.length > 0 && readings + entry.readings > maxReadings) break;
      ids.push(entry._id);
      readings += entry.readings;
    }
  } finally {
    await cursor.close();
  }
  return { ids, readings };
}

/**
 * Runs one fold as `holder`, or completes the fold a stopped holder left under way:
 * 1. takes or renews the lease (nothing when another holder has it);
 * 2. records `running: {seq: V + 1, entries}` with a compare-and-set on `visible: V,
 *    running: null` and the lease: from then on the fold means exactly those entries,
 *    whoever completes it;
 * 3. stamps the entries `fold: seq` (idempotent);
 * 4. plans their readings per series-day with each metric's current settings and
 *    horizons, and per rollup group-day for ready rollups whose day is clean (others get
 *    their days marked dirty, before the parts are written and after the fold is
 *    visible, as `rebuildRollupDay` requires);
 * 5. inserts the parts (`_id` `<series>:<day>:<seq>`, `f: seq`), skipping those an
 *    earlier attempt inserted;
 * 6. makes the fold visible: compare-and-set `visible: seq, running: null` on
 *    `visible: seq - 1`, `running.seq: seq` and the lease.
 * A crash between any two steps leaves a state the next attempt (of any holder)
 * completes from step 3 with the same entries (see the design's crash-point table).
 * @throws driver errors (the next attempt completes the fold).
 */
export async function foldOnce(store: Store, holder: string, options: { maxReadings?: number } = {}): Promise<FoldOutcome> {
  const state = await takeLease(store, holder);
  if (state === null) return nothing(false);
  let running = state.running;
  if (running === null) {
    const chosen = await chooseEntries(store, options.maxReadings ?? DEFAULT_FOLD_MAX_READINGS);
    if (chosen.ids.length === 0) return nothing(true);
    running = { seq: state.visible + 1, entries: chosen.ids };
    const recorded = await foldState(store.db).updateOne(
      { _id: FOLDS_ID, visible: state.visible, running: null, 'lease.holder': holder },
      { $set: { running } },
    );
    if (recorded.modifiedCount !== 1) return nothing(false);
  }
  const seq = running.seq;
  await ingestLog(store).updateMany({ _id: { $in: running.entries } }, { $set: { fold: seq, foldedAt: new Date() } });
  const entries = await ingestLog(store)
    .find({ _id: { $in: running.entries } })
    .toArray();
  const readings: Reading[] = entries.flatMap((entry: LogEntryDocument) => entryReadings(entry));
  const metrics = [...new Set(readings.map((reading) => reading.metric))];
  const [registered, rollups] = await Promise.all([store.metrics.find({ _id: { $in: metrics } }).toArray(), findRollups(store, metrics)]);
  const entryOf = new Map<string, MetricDocument>(registered.map((doc) => [doc._id, doc]));
  const plan = planReadings(readings, {
    settingsOf: (metric) => entryOf.get(metric)?.statistics ?? store.defaultStatistics,
    horizonsOf: (metric) => horizonsOf(entryOf.get(metric)?.retention?.horizons),
  });
  const rollupPlan = planRollups(plan, rollups, { retry: false });
  if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
  const parts = await insertOnce(store.buckets as unknown as Collection<Document>, foldDocuments(plan.buckets, seq));
  let rollupParts = 0;
  for (const { rollup, writes } of rollupPlan.writes) {
    rollupParts += await insertOnce(store.db.collection(rollup.collection), foldDocuments(writes, seq));
  }
  const flipped = await foldState(store.db).updateOne(
    { _id: FOLDS_ID, visible: seq - 1, 'running.seq': seq, 'lease.holder': holder },
    { $set: { visible: seq, running: null } },
  );
  if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
  if (flipped.modifiedCount !== 1) return nothing(false);
  return { leased: true, fold: seq, entries: entries.length, readings: readings.length, parts, rollupParts };
}

/**
 * Folds until nothing is left to fold or another holder has the lease: what a test, a
 * deletion or an import that waits for its data calls.
 * @returns the readings folded.
 */
export async function foldAll(store: Store, holder: string): Promise<number> {
  let readings = 0;
  for (;;) {
    const outcome = await foldOnce(store, holder);
    if (outcome.fold === null) return readings;
    readings += outcome.readings;
  }
}

/** How long a deletion waits for the readings of its metric to be folded, in ms. */
export const FOLD_PENDING_TIMEOUT_MS = 30_000;

/**
 * Folds until no log entry of `metric` is left unfolded, as this process's folder
 * (`Store.holder`) or, while another instance holds the lease, by waiting for it: what a
 * deletion does first, so readings acknowledged before it are deleted with the
 * documents instead of being folded back in afterwards.
 * @throws ServiceError UNAVAILABLE when they are still unfolded after `timeoutMs`.
 */
export async function foldPending(store: Store, metric: string, timeoutMs = FOLD_PENDING_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const visible = await readVisible(store);
    if ((await ingestLog(store).countDocuments({ metrics: metric, ...unfoldedAt(visible) }, { limit: 1 })) === 0) return;
    const outcome = await foldOnce(store, store.holder);
    if (outcome.fold !== null) continue;
    if (Date.now() > deadline) throw unavailable(`The readings of metric "${metric}" waiting to be folded`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
