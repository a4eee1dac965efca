/**
 * The folder (docs/ingest-design.md, "2. Fold in bulk, exactly once"): turns log entries
 * into write-once parts of series-day and rollup documents, one numbered fold at a time,
 * under a lease (`lease.ts`), and makes each fold visible with one compare-and-set. A
 * compaction a stopped holder left under way is completed first (`compaction.ts`).
 */
import { CollectionName, type Store } from './store.ts';
import { type DaySummary, summarizeDays } from '../documents/summaries.ts';
import { FOLDS_ID, foldState, readView, stampFolded } from './fold-state.ts';
import { LeaseLost, takeLease, leaseLeft } from './lease.ts';
import { type LogEntryDocument, entryReadings, forgetReadings, ingestLog, readingsKey, readingsOf } from './ingest-log.ts';
import type { Reading } from '../record/validate.ts';
import type { SeriesDayDocument } from '../documents/series-day.ts';
import { compactOnce } from './compaction.ts';
import { faultPoint } from './fault-points.ts';
import { findRollups, markDirty } from './rollups.ts';
import { foldDocuments } from '../documents/encode.ts';
import { insertOnce, insertFoldParts, insertSummaries } from './parts.ts';
import { planReadings } from '../documents/from-readings.ts';
import { planRollups } from '../documents/rollup.ts';
import { planSettingsOf } from './registry.ts';
import { unavailable } from './failures.ts';
import { unfoldedEntries } from './tail.ts';
import { widenMetricSpans } from './registration.ts';

/** Readings a fold takes at most (it takes at least one entry, however large). */
export const DEFAULT_FOLD_MAX_READINGS = 20_000;

/** What one call of {@link foldOnce} did. */
export interface FoldOutcome {
  /**
   * False when this call did not complete a fold as the lease holder: another holder
   * has the lease, a concurrent call of the same holder recorded the fold first, or the
   * final compare-and-set failed (the fold is then completed by the holder).
   */
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
 * The day summaries of fold `seq` (`documents/summaries.ts`): per metric and day of its
 * parts `docs`, a `whole` summary when the metric's day has no document yet (the fold's
 * parts are then all it holds), else a `fold` summary of its parts. A day has documents
 * exactly when an earlier fold or compaction wrote a summary of it (deletions and
 * retention delete the summaries with the documents), so the summaries numbered below
 * `seq` are what is looked for (index `{metric, date, f}`; a retried fold, whose own may
 * be stored already, decides the same). In a database with documents from before
 * summaries (`summariesFrom` above 0) every summary of a fold is a `fold` one: whole
 * ones come from whole-day compactions there.
 */
async function foldSummaries(store: Store, docs: readonly SeriesDayDocument[], seq: number, summariesFrom: number): Promise<DaySummary[]> {
  const days = new Map<string, { metric: string; date: Date }>();
  for (const doc of docs) days.set(`${doc.metric}:${doc.date.getTime()}`, { metric: doc.metric, date: doc.date });
  const first = new Set<string>();
  if (summariesFrom === 0) {
    const summaries = store.db.collection<DaySummary>(CollectionName.summaries);
    await Promise.all(
      [...days].map(async ([key, { metric, date }]) => {
        const earlier = await summaries.findOne({ metric, date, f: { $lt: seq } }, { projection: { _id: 1 } });
        if (earlier === null) first.add(key);
      }),
    );
  }
  return summarizeDays(docs, seq, (metric, day) => (first.has(`${metric}:${day}`) ? 'whole' : 'fold'));
}

/**
 * Chooses the oldest entries no fold has taken (`{fold, receivedAt}` index), up to
 * `maxReadings` readings and at least one entry.
 * @returns the entries' ids with their `receivedAt`, in order of arrival, and their readings' count.
 */
async function chooseEntries(
  store: Store,
  maxReadings: number,
): Promise<{ arrivals: Pick<LogEntryDocument, '_id' | 'receivedAt'>[]; readings: number }> {
  const arrivals: Pick<LogEntryDocument, '_id' | 'receivedAt'>[] = [];
  let readings = 0;
  const cursor = ingestLog(store)
    .find({ fold: null }, { projection: { _id: 1, readings: 1, receivedAt: 1 } })
    .sort({ fold: 1, receivedAt: 1 })
    .batchSize(500);
  try {
    for await (const entry of cursor) {
      if (arrivals.length > 0 && readings + entry.readings > maxReadings) break;
      arrivals.push({ _id: entry._id, receivedAt: entry.receivedAt });
      readings += entry.readings;
    }
  } finally {
    await cursor.close();
  }
  return { arrivals, readings };
}

/**
 * The readings of the log entries `ids` of a fold. With `arrivals` (the same entries with
 * their `receivedAt`, as `chooseEntries` read them), in that order, those this process
 * appended or decoded from its cache and the others fetched (`readingsOf`), without
 * keeping them (once the fold is visible, only a reader of an older view reads them): a
 * fold of the entries its own process acknowledged reads and inflates none of them.
 * Without (completing a stopped holder's fold), every entry fetched.
 * @throws driver errors; Error when an entry's packed columns are corrupted.
 */
async function foldReadings(
  store: Store,
  ids: readonly LogEntryDocument['_id'][],
  arrivals?: readonly Pick<LogEntryDocument, '_id' | 'receivedAt'>[],
): Promise<Reading[]> {
  if (arrivals === undefined) {
    const entries = await ingestLog(store)
      .find({ _id: { $in: [...ids] } })
      .toArray();
    return entries.flatMap((entry) => entryReadings(entry));
  }
  const found = await readingsOf(store, arrivals, { keep: false });
  return arrivals.flatMap((entry) => found.get(readingsKey(store.db, entry)) ?? []);
}

/**
 * Runs one fold as `holder`, or completes the fold a stopped holder left under way:
 * 1. takes or renews the lease (nothing when another holder has it), and stamps the
 *    entries of the last visible fold when a stopped holder left them unstamped
 *    (`stamping`, see step 5);
 * 2. records `running: {seq: V + 1, entries}` with a compare-and-set on `visible: V,
 *    running: null, stamping: null` and the lease: from then on the fold means exactly
 *    those entries, whoever completes it (they keep `fold: null`, so readers keep them
 *    in their tail);
 * 3. plans their readings per series-day with each metric's current settings and
 *    horizons, and per rollup group-day for ready rollups whose day is clean (others get
 *    their days marked dirty, before the parts are written and after the fold is
 *    visible, as `rebuildRollupDay` requires);
 * 4. inserts the parts (`_id` `<series>:<day>:<seq>`, `f: seq`), then the day summaries
 *    of what they add to each metric's day (`foldSummaries`), skipping those an earlier
 *    attempt inserted, each `insertMany` after renewing the lease and bounded by it
 *    (`leaseLeft`; a folder that lost the lease stops here);
 * 5. makes the fold visible: compare-and-set `visible: seq, running: null, stamping:
 *    {seq, entries}` on `visible: seq - 1`, `running.seq: seq` and the lease, counting
 *    the fold in `touched` of every day it wrote to (what schedules compactions); from
 *    then on readers leave the entries out of their tail (`unstampedFolded`);
 * 6. stamps the entries `fold: seq` and `foldedAt` (which starts their batch-id
 *    retention) in one update each, and clears `stamping` (`stampFolded`).
 * An entry is so rewritten once after its insert; this server rewrites a whole document
 * to change a field of it.
 * A compaction left under way by a stopped holder is completed first ({@link compactOnce}).
 * A crash between any two steps leaves a state the next attempt (of any holder)
 * completes with the same entries: from step 3 before the flip, step 6 after it (see
 * the design's crash-point table).
 * @throws driver errors (the next attempt completes the fold).
 */
export async function foldOnce(store: Store, holder: string, options: { maxReadings?: number } = {}): Promise<FoldOutcome> {
  const state = await takeLease(store, holder);
  if (state === null) return nothing(false);
  // The entries of the last visible fold, when its holder stopped before stamping them:
  // stamped before any entry is chosen, so none is taken twice.
  if (state.stamping != null) await stampFolded(store.db, state.stamping);
  let running = state.running;
  let arrivals: Pick<LogEntryDocument, '_id' | 'receivedAt'>[] | undefined;
  if (running?.compact !== undefined) {
    // A compaction a stopped holder left under way: complete it first, then fold.
    const completed = await compactOnce(store, holder);
    return completed.leased ? foldOnce(store, holder, options) : nothing(false);
  }
  if (running === null) {
    const chosen = await chooseEntries(store, options.maxReadings ?? DEFAULT_FOLD_MAX_READINGS);
    if (chosen.arrivals.length === 0) return nothing(true);
    arrivals = chosen.arrivals;
    running = { seq: state.visible + 1, entries: arrivals.map((entry) => entry._id) };
    const recorded = await foldState(store.db).updateOne(
      { _id: FOLDS_ID, visible: state.visible, running: null, stamping: null, 'lease.holder': holder },
      { $set: { running } },
    );
    if (recorded.modifiedCount !== 1) return nothing(false);
  }
  const seq = running.seq;
  const readings = await foldReadings(store, running.entries, arrivals);
  const metrics = [...new Set(readings.map((reading) => reading.metric))];
  const [settings, rollups] = await Promise.all([planSettingsOf(store, metrics), findRollups(store, metrics)]);
  const plan = planReadings(readings, settings);
  const rollupPlan = planRollups(plan, rollups, { retry: false });
  if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
  let parts = 0;
  let rollupParts = 0;
  try {
    const built = await insertFoldParts(store, holder, plan.days, seq);
    parts = built.inserted;
    const summaries = await foldSummaries(store, built.docs as unknown as SeriesDayDocument[], seq, state.summariesFrom ?? 1);
    for (const { rollup, writes } of rollupPlan.writes) {
      rollupParts += await insertOnce(store.db.collection(rollup.collection), foldDocuments(writes, seq), await leaseLeft(store, holder));
    }
    await insertSummaries(store, summaries, await leaseLeft(store, holder));
  } catch (error) {
    if (error instanceof LeaseLost) return nothing(false);
    throw error;
  }
  await faultPoint('fold:after-parts');
  // Before the flip, while the readings are still in every reader's tail: the registry
  // entries' first/last reading times take them in (idempotent, so a retried fold may too).
  await widenMetricSpans(store, readingSpans(readings));
  const daysWritten = [...new Set(plan.days.map((write) => write.date.getTime()))];
  const touched = Object.fromEntries(daysWritten.map((day) => [`touched.${day}`, 1]));
  const now = new Date();
  const written = Object.fromEntries(daysWritten.map((day) => [`written.${day}`, now]));
  const stamping = { seq, entries: running.entries };
  const flipped = await foldState(store.db).updateOne(
    { _id: FOLDS_ID, visible: seq - 1, 'running.seq': seq, 'lease.holder': holder },
    { $set: { visible: seq, running: null, stamping, ...written }, ...(daysWritten.length > 0 ? { $inc: touched } : {}) },
  );
  await faultPoint('fold:after-flip');
  if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
  if (flipped.modifiedCount !== 1) return nothing(false);
  // One update of each entry, once visible: only a visible entry may expire (the TTL
  // index on `foldedAt`). Until then readers leave them out through `stamping`.
  await stampFolded(store.db, stamping);
  if (arrivals !== undefined) forgetReadings(store.db, arrivals);
  return { leased: true, fold: seq, entries: running.entries.length, readings: readings.length, parts, rollupParts };
}

/** The earliest and latest time of `readings` per metric, ms since epoch (UTC). */
export function readingSpans(readings: readonly Reading[]): Map<string, [number, number]> {
  const spans = new Map<string, [number, number]>();
  for (const reading of readings) {
    const span = spans.get(reading.metric);
    if (span === undefined) spans.set(reading.metric, [reading.time, reading.time]);
    else {
      if (reading.time < span[0]) span[0] = reading.time;
      if (reading.time > span[1]) span[1] = reading.time;
    }
  }
  return spans;
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
    const pending = await unfoldedEntries(store, metric, await readView(store), {}, 1);
    if (pending.length === 0) return;
    const outcome = await foldOnce(store, store.holder);
    if (outcome.fold !== null) continue;
    if (Date.now() > deadline) throw unavailable(`The readings of metric "${metric}" waiting to be folded`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until no fold or compaction is under way, completing one a stopped holder left
 * (as `store.holder`) when the lease is free: what a deletion does after deleting, so a
 * compaction that read the deleted documents before cannot bring them back (the
 * deletion then deletes again).
 * @throws ServiceError UNAVAILABLE when a step is still under way after `timeoutMs`.
 */
export async function finishRunning(store: Store, timeoutMs = FOLD_PENDING_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await foldState(store.db).findOne({ _id: FOLDS_ID }, { projection: { running: 1 } });
    if (state?.running === null || state === null) return;
    if (state.running?.compact !== undefined) await compactOnce(store, store.holder);
    else await foldOnce(store, store.holder);
    if (Date.now() > deadline) throw unavailable('A fold or compaction under way');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
