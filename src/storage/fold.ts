/**
 * The folder (docs/ingest-design.md, "Fold in bulk, exactly once"): turns log entries
 * into write-once parts of series-day and rollup documents, one numbered fold at a
 * time, under a lease, and makes each fold visible with one compare-and-set.
 */
import type { Collection, Document, Filter } from 'mongodb';
import type { Reading } from '../record/validate.ts';
import { unavailable } from './failures.ts';
import { entryReadings, forgetReadings, ingestLog, readingsKey, readingsOf, type LogEntryDocument } from './ingest-log.ts';
import { faultArmed, faultPoint } from './fault-points.ts';
import { duplicateKeyIndexes, widenMetricSpans } from './record.ts';
import { findRollups, markDirty } from './rollups.ts';
import { planSettingsOf } from './registry.ts';
import { lowestPin, PIN_REFRESH_MS } from './read-pins.ts';
import { CollectionName, documentForms, type Store } from './store.ts';
import { deleteSummaries, findSummaries } from './summaries.ts';
import { foldDocuments, partDocument } from '../documents/encode.ts';
import { planReadings, trimToHorizons, type PlanSettings } from '../documents/from-readings.ts';
import { mergeParts } from '../documents/merge.ts';
import { planRollups } from '../documents/rollup.ts';
import { type SeriesDayDocument, type DocumentForms, SLOT_FORM } from '../documents/series-day.ts';
import { mergeSummaries, summariesOfDay, summarizeDays, type DaySummary, storedSummaries } from '../documents/summaries.ts';
import type { DayContent } from '../documents/content.ts';
import {
  FOLDS_ID,
  findVisible,
  foldState,
  readView,
  replacedBy,
  stampFolded,
  type CompactionRun,
  type FoldStateDocument,
} from './fold-state.ts';
import { unfoldedEntries } from './tail.ts';

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
 * Takes or renews the lease for `holder` for `store.foldLeaseMs`: one
 * `findOneAndUpdate` that matches only when the lease is free, expired or already the
 * holder's.
 * @returns the fold state after the update, or null when another holder has the lease.
 */
export async function takeLease(store: Pick<Store, 'db' | 'foldLeaseMs'>, holder: string): Promise<FoldStateDocument | null> {
  const now = new Date();
  return foldState(store.db).findOneAndUpdate(
    { _id: FOLDS_ID, $or: [{ lease: null }, { 'lease.until': { $lt: now } }, { 'lease.holder': holder }] },
    { $set: { lease: { holder, until: new Date(now.getTime() + store.foldLeaseMs) } } },
    { returnDocument: 'after' },
  );
}

/** Gives the lease up (at shutdown), so another instance folds at once instead of after it expires. */
export async function releaseLease(store: Pick<Store, 'db'>, holder: string): Promise<void> {
  await foldState(store.db).updateOne({ _id: FOLDS_ID, 'lease.holder': holder }, { $set: { lease: null } });
}

/**
 * Inserts documents that may exist already from an earlier attempt of the same fold,
 * compaction or deletion (same `_id`): one unordered `insertMany`, with a server-side
 * time limit when given (`maxTimeMS`: a folder passes its lease left, see
 * {@link LeaseLost}); duplicate keys (11000) are skipped (`duplicateKeyIndexes`).
 * @returns how many were inserted now.
 * @throws any other failure, and a bulk error without write errors (a connection lost
 * mid-write: unknown which landed; the next attempt completes it).
 */
export async function insertOnce(collection: Collection<Document>, docs: Document[], maxTimeMS?: number): Promise<number> {
  if (docs.length === 0) return 0;
  try {
    return (await collection.insertMany(docs, { ordered: false, ...(maxTimeMS === undefined ? {} : { maxTimeMS }) })).insertedCount;
  } catch (error) {
    return docs.length - duplicateKeyIndexes(error).length;
  }
}

/**
 * Inserts day summaries (each once, as {@link insertOnce}): their sketches first, then
 * the summaries (`storedSummaries`), so a summary a reader finds has its sketches unless
 * they were deleted after it.
 */
async function insertSummaries(store: Store, summaries: readonly DaySummary[], maxTimeMS: number): Promise<void> {
  const stored = storedSummaries(summaries);
  await insertOnce(store.db.collection(CollectionName.sketches), stored.sketches, maxTimeMS);
  await insertOnce(store.db.collection(CollectionName.summaries), stored.summaries, maxTimeMS);
}

/** Margin kept between the end of a fold's writes and the end of its lease, in ms: a sixth of the lease, at most 5 s. */
const leaseMargin = (leaseMs: number) => Math.min(5_000, leaseMs / 6);

/**
 * Thrown when a folder finds, before writing, that its lease is gone or nearly gone: it
 * stops, and whoever holds the lease completes the fold.
 */
export class LeaseLost extends Error {
  constructor(holder: string) {
    super(`Folder ${holder} no longer holds the fold lease; the fold is left to the holder`);
    this.name = 'LeaseLost';
  }
}

/**
 * Renews `holder`'s lease and returns the ms its writes may take: until
 * {@link leaseMargin} before the renewed lease ends. A part inserted by a stalled
 * folder after another took over could land after a rollup rebuild at a later fold and
 * be counted twice; renewing before every insert and bounding the insert by the lease
 * (`maxTimeMS`) keeps a folder's writes inside the time it holds the lease.
 * @throws LeaseLost when another holder has the lease.
 */
async function leaseLeft(store: Store, holder: string): Promise<number> {
  const state = await takeLease(store, holder);
  if (state === null || state.lease === null) throw new LeaseLost(holder);
  return Math.max(1, Math.floor(state.lease.until.getTime() - Date.now() - leaseMargin(store.foldLeaseMs)));
}

/**
 * Inserts a step's series-day documents with {@link insertOnce}, after renewing the
 * lease (`leaseLeft`): in one `insertMany`, or, when fault point `point` is armed (fault
 * tests only), half of them, then the point, then the rest.
 * @returns how many were inserted now.
 * @throws LeaseLost when another holder has the lease; driver errors.
 */
async function insertParts(
  store: Store,
  holder: string,
  collection: Collection<Document>,
  docs: Document[],
  point: 'fold:mid-parts' | 'compact:mid-merge',
): Promise<number> {
  const half = faultArmed(point) ? Math.ceil(docs.length / 2) : docs.length;
  let inserted = await insertOnce(collection, half === docs.length ? docs : docs.slice(0, half), await leaseLeft(store, holder));
  if (half < docs.length) {
    await faultPoint(point);
    inserted += await insertOnce(collection, docs.slice(half), await leaseLeft(store, holder));
  }
  return inserted;
}

/**
 * Readings a slice of a fold's parts holds (about), for {@link insertFoldParts}: a fold of
 * 20,000 sparse readings (6,000 parts) goes in five or six slices, one of dense readings
 * (a few hundred readings a part) in about as many.
 */
const PART_SLICE_READINGS = 4_000;

/**
 * Builds the parts of fold `seq` from its series-day `writes` (`foldDocuments`, in the
 * forms the store allows: `documentForms`) and
 * inserts them with {@link insertOnce}, in slices of about {@link PART_SLICE_READINGS}
 * readings: each slice is built while the one before is being inserted, and sent as soon
 * as it is built, so the database is not left idle while Node builds documents (building
 * 6,000 parts took 0.7 s of a 10 s fold on the embedded server). The lease is renewed
 * before each slice is built (`leaseLeft`), and the slice's insert is bounded by what is
 * left of it (`maxTimeMS`). When fault point `fold:mid-parts` is armed (fault tests
 * only): half of the parts, then the point, then the rest, one after another.
 * @returns the parts built (all of them, for the fold's day summaries) and how many were
 * inserted now (a retried fold finds some inserted already).
 * @throws LeaseLost when another holder has the lease; driver errors.
 */
async function insertFoldParts(
  store: Store,
  holder: string,
  writes: readonly DayContent[],
  seq: number,
): Promise<{ docs: Record<string, unknown>[]; inserted: number }> {
  const forms = documentForms(store);
  const collection = store.buckets as unknown as Collection<Document>;
  if (faultArmed('fold:mid-parts')) {
    const docs = foldDocuments(writes, seq, forms);
    return { docs, inserted: await insertParts(store, holder, collection, docs, 'fold:mid-parts') };
  }
  const docs: Record<string, unknown>[] = [];
  const inserts: Promise<number>[] = [];
  let inserted = 0;
  let start = 0;
  while (start < writes.length) {
    // Renewed while the slice before is being inserted; the insert gets what is left.
    const left = await leaseLeft(store, holder);
    const renewed = Date.now();
    let end = start;
    let readings = 0;
    while (end < writes.length && (end === start || readings < PART_SLICE_READINGS)) readings += writes[end++]!.readings;
    const slice = foldDocuments(writes.slice(start, end), seq, forms);
    docs.push(...slice);
    // At most two slices in flight: the one the database inserts and the next, queued.
    if (inserts.length >= 2) inserted += await inserts.shift()!;
    const insert = insertOnce(collection, slice, Math.max(1, left - (Date.now() - renewed)));
    // Awaited in turn; a failure must not count as unhandled meanwhile.
    insert.catch(() => undefined);
    inserts.push(insert);
    start = end;
    // Let the insert's commands go out before building the next slice.
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const insert of inserts) inserted += await insert;
  return { docs, inserted };
}

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
  const touched = Object.fromEntries([...new Set(plan.days.map((write) => write.date.getTime()))].map((day) => [`touched.${day}`, 1]));
  const stamping = { seq, entries: running.entries };
  const flipped = await foldState(store.db).updateOne(
    { _id: FOLDS_ID, visible: seq - 1, 'running.seq': seq, 'lease.holder': holder },
    { $set: { visible: seq, running: null, stamping }, ...(Object.keys(touched).length > 0 ? { $inc: touched } : {}) },
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

/** Folds that wrote to a day before a compaction merges its parts (`COMPACT_AFTER_FOLDS`). */
export const DEFAULT_COMPACT_AFTER_FOLDS = 8;

/** Days one compaction merges at most. */
const COMPACT_DAYS = 4;

/** What one call of {@link compactOnce} did. */
export interface CompactOutcome {
  /**
   * False when another holder has the lease, a fold is under way, or there was nothing to
   * do and no lease to take or renew (then it was not asked for); nothing was done.
   */
  leased: boolean;
  /** The compaction made visible, or null when no day was due. */
  compaction: number | null;
  /** Days merged. */
  days: number;
  /** Parts read and merged. */
  merged: number;
  /** Merged documents inserted now. */
  documents: number;
  /** Replaced parts deleted now (of compactions past their grace period). */
  deleted: number;
}

/**
 * Deletes the parts replaced by compactions no reader can still need, one range delete
 * per compaction, then forgets them (`$pull`, by the lease holder): those whose grace
 * period has passed (no reader that began before their flip can still run) and, with
 * `pinned`, those every live read pin has passed (`storage/read-pins.ts`: no read holds
 * a view from before their flip). Deleting first keeps every reader right: one that
 * still reads the record excludes parts that are gone.
 * @returns the parts deleted.
 */
async function dropReplaced(store: Store, holder: string, state: FoldStateDocument, graceMs: number, pinned: boolean): Promise<number> {
  const records = state.compactions ?? [];
  if (records.length === 0) return 0;
  const lowest = pinned ? await lowestPin(store.db, graceMs + PIN_REFRESH_MS) : Number.NEGATIVE_INFINITY;
  const due = records.filter((record) => Date.now() - record.at.getTime() >= graceMs || record.c <= lowest);
  if (due.length === 0) return 0;
  // The rollup collections, read once for every compaction deleted now.
  const collections = [store.buckets, ...(await findRollups(store)).map((rollup) => store.db.collection(rollup.collection))];
  let deleted = 0;
  for (const record of due) {
    for (const collection of collections) {
      for (const filter of replacedBy(record)) deleted += (await collection.deleteMany(filter)).deletedCount;
    }
    // The day summaries its new ones replaced: every older one of a day merged whole; on
    // the other days, those of each metric it wrote a `whole` summary for.
    const summaries = store.db.collection<DaySummary>(CollectionName.summaries);
    const whole = record.days.filter((_, i) => (record.from?.[i] ?? 0) === 0);
    const partial = record.days.filter((_, i) => (record.from?.[i] ?? 0) > 0);
    const composed =
      partial.length === 0
        ? []
        : await summaries.find({ date: { $in: partial }, f: record.c, kind: 'whole' }, { projection: { metric: 1, date: 1 } }).toArray();
    const replaced = [
      ...(whole.length > 0 ? [{ date: { $in: whole } }] : []),
      ...composed.map((summary) => ({ metric: summary.metric, date: summary.date })),
    ];
    if (replaced.length > 0) await deleteSummaries(store, { f: { $lt: record.c }, $or: replaced });
    await foldState(store.db).updateOne({ _id: FOLDS_ID, 'lease.holder': holder }, { $pull: { compactions: { c: record.c } } });
  }
  return deleted;
}

/**
 * Whether a folder with nothing to do should still take or renew the lease, in fold
 * state `state` at `now` (ms since epoch): when nobody holds it or it has expired (so
 * the instance that looks first keeps folding, as when it renewed at every look), and
 * when `holder` holds it with less than half of `leaseMs` left. Pure.
 */
export function leaseDue(state: Pick<FoldStateDocument, 'lease'> | null, holder: string, leaseMs: number, now: number): boolean {
  const lease = state?.lease ?? null;
  if (lease === null || lease.until.getTime() < now) return true;
  return lease.holder === holder && lease.until.getTime() - now < leaseMs / 2;
}

/** The UTC midnights (ms, ascending) of the days that `afterFolds` folds or more wrote to since their last compaction (`touched`). Pure. */
const dueDays = (state: Pick<FoldStateDocument, 'touched'>, afterFolds: number): number[] =>
  Object.entries(state.touched ?? {})
    .filter(([, folds]) => folds >= afterFolds)
    .map(([day]) => Number(day))
    .sort((a, b) => a - b);

/**
 * Whether {@link compactOnce} has anything to do in fold state `state`: a compaction
 * under way (left by a holder that stopped), compactions whose replaced parts are still
 * to be deleted, or a day that `afterFolds` folds wrote to ({@link dueDays}). Pure.
 */
export function compactionWork(state: Pick<FoldStateDocument, 'running' | 'compactions' | 'touched'> | null, afterFolds: number): boolean {
  if (state === null) return false;
  if (state.running?.compact !== undefined) return true;
  if ((state.compactions ?? []).length > 0) return true;
  return dueDays(state, afterFolds).length > 0;
}

/**
 * Merges the parts of the days that many folds wrote to (docs/ingest-design.md,
 * "Compaction"), as one numbered step under the lease, like a fold:
 * 1. reads the fold state, and does nothing (without taking the lease) when there is
 *    nothing to do ({@link compactionWork}) and the lease is held with more than half its
 *    time left ({@link leaseDue}); takes or renews the lease; deletes the parts
 *    of earlier compactions whose grace period `graceMs` has passed; does nothing while a
 *    fold is under way;
 * 2. chooses up to 4 days whose `touched` count reached `afterFolds` and records
 *    `running: {seq: V + 1, compact: days}` (compare-and-set, as a fold);
 * 3. reads the series-day documents of those days visible at V (every one for a
 *    whole-day compaction; with `tiered`, only those from the fold number
 *    `tieredFrom` gives: the parts since the day's last compaction and the newest runs
 *    of earlier compactions no larger than them, as log-structured stores merge runs
 *    of similar size), merges each series-day's documents into one
 *    (`mergeParts`, every level, sketches and latest readings; trimmed to the
 *    retention horizons, and none for a day retention deleted meanwhile), and inserts
 *    them with `f: seq` (`_id` `<series>:<day>:<seq>`; a series-day of one document is
 *    rewritten too, so what it replaces is one range per day), with a `whole` day
 *    summary of each metric and day (`_id` `<metric>:<day>:<seq>`): on the days merged
 *    whole from the merged documents (`summarizeDays`), on the others from the day's
 *    summaries visible at V (`composeSummaries`; none where those are one `whole`
 *    summary already or answer nothing); the older summaries they replace are deleted
 *    with the parts the compaction replaced. A day whose summaries a deletion's `void`
 *    made answer nothing is merged whole (`voidedDays`). The rollup documents of every
 *    rollup in the same range are merged too, whatever their metric;
 * 4. makes it visible: compare-and-set `visible: seq`, resets the days' `touched`, keeps
 *    the days' runs (`runsAfter`), and records `{c: seq, days, from}`: from then on
 *    readers skip the documents of those days it replaced (`visibleIn`, `replacedBy`),
 *    and after `graceMs` they are deleted.
 * The documents of the metrics' rollups on those days are merged the same way, per
 * rollup group and day, and skipped by readers alike. A rollup rebuild of such a day
 * that read the fold state before this compaction's flip leaves the day dirty
 * (`rebuildRollupDay`), so a merge of parts the rebuild replaced never stays visible.
 * A crash between any two steps is completed by the next holder with the same days and
 * the same document ids.
 * @param options.afterFolds folds that wrote to a day before it is compacted (default 8).
 * @param options.tiered merge in tiers (`tieredFrom`; the server's fold job does);
 * default false: every compaction merges its days whole.
 * @param options.fanIn with `tiered`, runs of one size merged at once (`tieredFrom`; default 2).
 * @param options.sealReadings with `tiered`, readings per document on average that seal
 * a run (`tieredFrom`, `COMPACT_SEAL_READINGS`); default 0: none is sealed.
 * @param options.graceMs how long replaced parts are kept after the flip: longer than any
 * query may run (the server uses QUERY_TIMEOUT_MS + 30 s; default 60 s).
 * @param options.pinned delete replaced parts before the grace period ends once every
 * live read pin is past the compaction (`storage/read-pins.ts`; the server's fold job
 * does; default false: only after the grace period).
 */
export async function compactOnce(
  store: Store,
  holder: string,
  options: { afterFolds?: number; graceMs?: number; tiered?: boolean; fanIn?: number; sealReadings?: number; pinned?: boolean } = {},
): Promise<CompactOutcome> {
  const outcome: CompactOutcome = { leased: false, compaction: null, days: 0, merged: 0, documents: 0, deleted: 0 };
  const afterFolds = options.afterFolds ?? DEFAULT_COMPACT_AFTER_FOLDS;
  // Read first, and leased only with something to do or a lease to take or renew: an
  // idle server's folder looks several times a second, and each lease is a journaled
  // write of the fold state.
  const current = await foldState(store.db).findOne(
    { _id: FOLDS_ID },
    { projection: { running: 1, compactions: 1, touched: 1, lease: 1 } },
  );
  if (!compactionWork(current, afterFolds) && !leaseDue(current, holder, store.foldLeaseMs, Date.now())) return outcome;
  const state = await takeLease(store, holder);
  if (state === null) return outcome;
  outcome.deleted = await dropReplaced(store, holder, state, options.graceMs ?? 60_000, options.pinned ?? false);
  let running = state.running;
  if (running !== null && running.compact === undefined) return outcome;
  outcome.leased = true;
  if (running === null) {
    const due = dueDays(state, afterFolds).slice(0, COMPACT_DAYS);
    if (due.length === 0) return outcome;
    const voided = options.tiered === true ? await voidedDays(store, due) : new Set<number>();
    const from = due.map((day) =>
      options.tiered === true && !voided.has(day)
        ? tieredFrom(
            state.runs?.[String(day)],
            state.compacted?.[String(day)],
            state.touched?.[String(day)] ?? 0,
            options.fanIn,
            options.sealReadings,
          )
        : 0,
    );
    running = { seq: state.visible + 1, entries: [], compact: due, from };
    const recorded = await foldState(store.db).updateOne(
      { _id: FOLDS_ID, visible: state.visible, running: null, 'lease.holder': holder },
      { $set: { running } },
    );
    if (recorded.modifiedCount !== 1) return { ...outcome, leased: false };
  }
  const seq = running.seq;
  const days = (running.compact ?? []).map((day) => new Date(day));
  const view = { visible: seq - 1, compactions: (state.compactions ?? []).filter((record) => record.c < seq) };
  const from = running.from ?? days.map(() => 0);
  // What the compaction replaces on each day: every document visible at V (a whole-day
  // compaction), or the parts since the day's last compaction.
  // Read by the `date_f` index (see `findVisible`), then kept when visible at V.
  const replacedOn = (date: Date, i: number): Filter<Document> => ({
    date,
    ...(from[i]! > 0 ? { f: { $gte: from[i], $lt: seq } } : {}),
  });
  // Every rollup, not only those of the metrics merged here (read beside the documents):
  // readers skip, and the clean-up deletes, what the compaction replaced in every rollup
  // collection, and a rollup rebuilt at a fold number in a partial compaction's range
  // may belong to a metric with no part there.
  const [byDay, rollups] = await Promise.all([
    Promise.all(days.map((date, i) => findVisible(store.buckets, replacedOn(date, i), view).toArray())),
    findRollups(store),
  ]);
  const docs = byDay.flat();
  const metrics = [...new Set([...docs.map((doc) => doc.metric), ...rollups.map((rollup) => rollup.metric)])];
  const settings = await planSettingsOf(store, metrics);
  const merged = mergeDays(
    docs,
    settings,
    (metric) => settings.settingsOf(metric).latestReadings,
    seq,
    documentForms(store),
  ) as SeriesDayDocument[];
  // The day summaries of the days merged whole: what the merged documents of each metric
  // add up to; of the others, the metrics' summaries visible at V merged into one.
  const wholeDays = new Set(days.filter((_, i) => from[i] === 0).map((day) => day.getTime()));
  const summaries = [
    ...summarizeDays(
      merged.filter((doc) => wholeDays.has(doc.date.getTime())),
      seq,
    ),
    ...(await composeSummaries(
      store,
      merged.filter((doc) => !wholeDays.has(doc.date.getTime())),
      seq,
    )),
  ];
  // The rollups of the same metrics, over the same documents of the same days: the
  // readers' `visibleIn` skips what the compaction replaced in every collection alike.
  const rollupMerged: { collection: Collection<Document>; documents: Document[] }[] = [];
  for (const rollup of rollups) {
    const collection = store.db.collection<SeriesDayDocument>(rollup.collection);
    const rollupDocs = (await Promise.all(days.map((date, i) => findVisible(collection, replacedOn(date, i), view).toArray()))).flat();
    outcome.merged += rollupDocs.length;
    rollupMerged.push({
      collection: collection as unknown as Collection<Document>,
      documents: mergeDays(rollupDocs, settings, () => 0, seq),
    });
  }
  try {
    outcome.documents = await insertParts(store, holder, store.buckets as unknown as Collection<Document>, merged, 'compact:mid-merge');
    for (const { collection, documents } of rollupMerged) {
      outcome.documents += await insertOnce(collection, documents, await leaseLeft(store, holder));
    }
    await insertSummaries(store, summaries, await leaseLeft(store, holder));
  } catch (error) {
    if (error instanceof LeaseLost) return { ...outcome, leased: false };
    throw error;
  }
  const flipped = await foldState(store.db).updateOne(
    { _id: FOLDS_ID, visible: seq - 1, 'running.seq': seq, 'lease.holder': holder },
    {
      $set: {
        visible: seq,
        running: null,
        ...Object.fromEntries(
          days.flatMap((day, i) => [
            [`compacted.${day.getTime()}`, seq],
            [
              `runs.${day.getTime()}`,
              runsAfter(state.runs?.[String(day.getTime())], from[i]!, state.touched?.[String(day.getTime())] ?? 0, writtenOn(merged, day)),
            ],
          ]),
        ),
      },
      $unset: Object.fromEntries(days.map((day) => [`touched.${day.getTime()}`, ''])),
      $push: { compactions: { c: seq, days, from, at: new Date() } },
    },
  );
  if (flipped.modifiedCount !== 1) return { ...outcome, leased: false };
  return { ...outcome, compaction: seq, days: days.length, merged: outcome.merged + docs.length };
}

/**
 * Where a tiered compaction of a day begins (pure; docs/ingest-design.md, "Compaction"),
 * as log-structured stores merge runs of similar size: the parts of the `folds` folds
 * since the day's last compaction `last` form a new run, which takes in every run from
 * the oldest one whose size (in folds) times `fanIn - 1` is no more than all the runs
 * after it and the new folds together. With the default fan-in of 2, each run then stays
 * larger than all newer runs together, so a day keeps at most log2(its folds) + 1 runs,
 * and a fold's parts are rewritten only into a run at least twice as large, at most
 * log2(its day's folds) + 1 times; merging the whole day every few compactions rewrites
 * them a number of times that grows with the day. With runs of one size this is a
 * counter in base `fanIn`: with 2, a day is merged whole at its 1st, 2nd, 4th, 8th...
 * compaction; with 4, at its 1st, 4th, 16th..., keeping up to 3 runs of each size,
 * each fold's parts rewritten about half as often (the "minimum threshold" of
 * size-tiered compaction in Cassandra). In general each run times `fanIn - 1` stays
 * larger than all newer runs together, and a rewrite puts a fold's parts into a run at
 * least `fanIn / (fanIn - 1)` times as large as the one they leave.
 *
 * A run whose documents hold `sealReadings` readings or more each on average (over the
 * day's series-days) is sealed: it is never taken in again, and neither is any run
 * before it, so merges begin after the newest sealed run. The open runs after it then
 * hold fewer readings than that each, and a merge takes in at most about `fanIn` times
 * the newest of them taken in (each run times `fanIn - 1` being larger than the newer
 * ones together), so on a day of dense series a compaction rewrites at most about
 * `fanIn` times `sealReadings` readings of a series-day plus the new folds, however full
 * the day. A sparse day's documents never reach it and merge as before (the largest-run
 * limit of LevelDB's and Cassandra's compactions, counted in readings per series-day
 * rather than in bytes). A day merged whole (never compacted, runs unknown, or voided by
 * a deletion) takes in its sealed runs too.
 * @param runs the day's runs, oldest first (`FoldStateDocument.runs`); absent: none known.
 * @param last the number of the day's last compaction; absent: never compacted.
 * @param folds the folds that wrote to the day since then (`FoldStateDocument.touched`).
 * @param fanIn runs of one size merged at once, at least 2 (`COMPACT_FAN_IN`).
 * @param sealReadings readings per document on average that seal a run
 * (`COMPACT_SEAL_READINGS`); absent or 0: no run is sealed.
 * @returns the lowest fold number to merge: 0 (the whole day, documents without `f`
 * included) when the day has no known runs (none, or runs that do not begin at 0) or
 * the oldest run is taken in.
 */
export function tieredFrom(
  runs: readonly CompactionRun[] | undefined,
  last: number | undefined,
  folds: number,
  fanIn = 2,
  sealReadings = 0,
): number {
  if (last === undefined || runs === undefined || runs[0]?.from !== 0) return 0;
  const open = runs.slice(runs.findLastIndex((run) => isSealed(run, sealReadings)) + 1);
  let newer = folds + open.reduce((sum, run) => sum + run.folds, 0);
  for (const run of open) {
    newer -= run.folds;
    if (run.folds * (fanIn - 1) <= newer) return run.from;
  }
  return last + 1;
}

/** Whether `run` is sealed: its documents hold `sealReadings` readings or more each on average (never when 0, or when not counted). */
const isSealed = (run: CompactionRun, sealReadings: number) =>
  sealReadings > 0 &&
  run.documents !== undefined &&
  run.readings !== undefined &&
  run.documents > 0 &&
  run.readings >= sealReadings * run.documents;

/**
 * A day's runs once a compaction merged its documents from fold number `from` (pure):
 * the runs that begin below `from` stay, the others and the `folds` folds since the last
 * compaction become one run beginning at `from` (0: the whole day, one run). None when
 * `from` is above 0 and the day's runs were not known (a compaction recorded by a
 * version that kept none): its next compaction then merges it whole.
 * @param runs the day's runs before the compaction, oldest first; absent: none known.
 * @param from the lowest fold number the compaction merged on the day (`tieredFrom`, or 0).
 * @param folds the folds that wrote to the day since its last compaction.
 * @param written the series-day documents the compaction wrote for the day and the
 * readings they hold, recorded on the new run (see `CompactionRun.documents`); absent:
 * not recorded.
 * @returns the day's runs after it, oldest first.
 */
export function runsAfter(
  runs: readonly CompactionRun[] | undefined,
  from: number,
  folds: number,
  written?: { documents: number; readings: number },
): CompactionRun[] {
  if (from > 0 && (runs === undefined || runs[0]?.from !== 0)) return [];
  const kept = (runs ?? []).filter((run) => run.from < from);
  const taken = (runs ?? []).filter((run) => run.from >= from).reduce((sum, run) => sum + run.folds, 0);
  return [...kept, { from, folds: taken + folds, ...written }];
}

/** The documents among `merged` of `day` (a compaction's new run there) and the readings they hold. */
function writtenOn(merged: readonly SeriesDayDocument[], day: Date): { documents: number; readings: number } {
  const written = { documents: 0, readings: 0 };
  for (const doc of merged) {
    if (doc.date.getTime() !== day.getTime()) continue;
    written.documents += 1;
    written.readings += doc.readings ?? 0;
  }
  return written;
}

/**
 * The UTC days among `days` (ms) where some metric's day summaries answer nothing
 * because a deletion's `void` is as new as its newest `whole` one or newer (see
 * `summariesOfDay`): a compaction in tiers merges those whole, since only a whole-day
 * merge can write the summary that answers them again.
 */
async function voidedDays(store: Store, days: readonly number[]): Promise<Set<number>> {
  const found = await store.db
    .collection<DaySummary>(CollectionName.summaries)
    .find(
      { date: { $in: days.map((day) => new Date(day)) }, kind: { $in: ['whole', 'void'] } },
      { projection: { metric: 1, date: 1, f: 1, kind: 1 } },
    )
    .toArray();
  // A metric-day with a `whole` or a `void` summary whose summaries answer nothing at any view.
  const voided = new Set<number>();
  for (const ofMetricDay of byMetricDay(found).values()) {
    if (summariesOfDay(ofMetricDay, Number.POSITIVE_INFINITY, null).length === 0) voided.add(ofMetricDay[0]!.date.getTime());
  }
  return voided;
}

/** `items` grouped by the key `keyOf` gives, each group and the groups in the items' order. */
function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** `summaries` grouped by metric and day (`<metric>:<day ms>`). */
const byMetricDay = <S extends Pick<DaySummary, 'metric' | 'date'>>(summaries: readonly S[]): Map<string, S[]> =>
  groupBy(summaries, (summary) => `${summary.metric}:${summary.date.getTime()}`);

/**
 * The `whole` day summaries of compaction `seq` on days it did not merge whole: for each
 * metric and day among `merged`, the summaries visible at `seq - 1` that answer it
 * (`summariesOfDay`) merged into one (`mergeSummaries`), when there are more than one.
 * None for a metric-day whose summaries answer nothing (none whole, or a deletion's
 * `void` as new): its next whole-day compaction writes one (for a voided day, its
 * next compaction: `voidedDays`). Readers at `seq` or later
 * then read that summary and the folds' after it, a few per day however long ago the
 * day was merged whole.
 */
async function composeSummaries(store: Store, merged: readonly SeriesDayDocument[], seq: number): Promise<DaySummary[]> {
  const pairs = new Map<string, { metric: string; date: Date }>();
  for (const doc of merged) pairs.set(`${doc.metric}:${doc.date.getTime()}`, { metric: doc.metric, date: doc.date });
  if (pairs.size === 0) return [];
  const metrics = [...new Set([...pairs.values()].map((pair) => pair.metric))];
  const dates = [...new Map([...pairs.values()].map((pair) => [pair.date.getTime(), pair.date])).values()];
  const grouped = byMetricDay(await findSummaries(store, { metric: { $in: metrics }, date: { $in: dates }, f: { $lt: seq } }, {}, true));
  const composed: DaySummary[] = [];
  for (const key of pairs.keys()) {
    const chosen = summariesOfDay(grouped.get(key) ?? [], seq - 1, null);
    if (chosen.length > 1) composed.push(mergeSummaries(chosen, seq));
  }
  return composed;
}

/**
 * The merged documents of a compaction (pure): `docs` grouped per series (or rollup
 * group) and day, each group merged into one document (`mergeParts`) with
 * `f: seq`, none for a day before its metric's retention horizons.
 * @param latestReadings latest readings kept per document of a metric (0 for rollups, which keep none).
 * @param forms the forms the documents are written in (`partDocument`; by default the
 *   slot form only, as for rollups, whose documents keep no readings or minutes anyway),
 *   except a counter's, always in the slot form: its increases may have become unknown
 *   in the merge, which neither the raw form nor packed minutes could say.
 */
function mergeDays(
  docs: readonly SeriesDayDocument[],
  settings: Pick<PlanSettings, 'horizonsOf' | 'kindOf'>,
  latestReadings: (metric: string) => number,
  seq: number,
  forms: Readonly<DocumentForms> = SLOT_FORM,
): Document[] {
  const groups = groupBy(docs, (doc) => `${doc.series}:${doc.date.getTime()}`);
  const writes = [...groups.values()].map((group) => mergeParts(group, latestReadings(group[0]!.metric)));
  const kept = new Set(
    trimToHorizons(
      writes.map(({ write }) => write),
      settings.horizonsOf,
    ),
  );
  const formsOf = (metric: string) => (settings.kindOf?.(metric) === 'counter' ? SLOT_FORM : forms);
  return writes
    .filter(({ write }) => kept.has(write))
    .map(({ write, version }) => partDocument(write, seq, version, formsOf(write.metric)));
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
