/**
 * What a reader sees (docs/ingest-design.md, "3. Real-time reads"): the series-day and
 * rollup documents of the folds up to the visible fold number V, plus the tail, the
 * log entries no visible fold holds yet, read from the log and planned in memory.
 */
import type { AggregationCursor, Collection, Db, Document, Filter } from 'mongodb';
import { type LogEntryDocument, entryKey, ingestLog } from './ingest-log.ts';

/** Collection name of the fold state (a handful of small documents). */
export const FOLD_STATE_COLLECTION = 'fold_state';

/** The `_id` of the fold state's main document. */
export const FOLDS_ID = 'folds';

/**
 * A numbered step under way: a fold (its number and the log entries it takes, fixed
 * once recorded) or a compaction (its number and the UTC days it merges; no entries).
 */
export interface RunningFold {
  seq: number;
  entries: LogEntryDocument['_id'][];
  /** For a compaction: the UTC midnights (ms) whose series-day parts it merges. */
  compact?: number[];
  /**
   * For a compaction, per day of `compact`: the lowest fold number it merges (0: the
   * whole day, documents without `f` included; else the start of the newest runs it
   * takes in, or the parts since the day's last compaction; the older runs' documents
   * stay).
   */
  from?: number[];
}

/**
 * A compaction made visible and still in its grace period: from fold number `c` on,
 * the series-day documents of `days` with `f` below `c` (or none) are replaced by the
 * merged ones and must not be read; they are deleted once no reader can still need them.
 */
export interface CompactionRecord {
  c: number;
  days: Date[];
  /**
   * Per day of `days`: the lowest fold number it replaced there (0: every document of the
   * day below `c`, documents without `f` included); absent: 0 for every day.
   */
  from?: number[];
  /** When it became visible. */
  at: Date;
}

/**
 * One run of a day's compacted documents: the documents a compaction wrote for the day,
 * standing for the parts of fold numbers `from` (0: from the start, documents without
 * `f` included) up to that compaction, and how many folds had written to the day in
 * that span (`folds`, the run's size in the tiered policy of `tieredFrom`).
 */
export interface CompactionRun {
  from: number;
  folds: number;
  /**
   * The series-day documents the compaction wrote for the run (rollups not counted): a
   * run whose documents hold `COMPACT_SEAL_READINGS` readings each on average is sealed
   * (`tieredFrom`). Absent in runs recorded before they were counted, which are never sealed.
   */
  documents?: number;
  /** The readings those documents hold (their `readings`); absent with `documents`. */
  readings?: number;
}

/**
 * A fold made visible whose log entries are not stamped yet: its number and its entries
 * (those of its {@link RunningFold}). Recorded by the fold's flip, so that from V =
 * `seq` on every reader leaves those entries out of its tail; the folder then stamps
 * them (`fold: seq` and `foldedAt`, one update of each entry) and clears the record.
 */
export interface StampingFold {
  seq: number;
  entries: LogEntryDocument['_id'][];
}

/** The fold state (`fold_state`, `_id: "folds"`). */
export interface FoldStateDocument {
  _id: typeof FOLDS_ID;
  /**
   * The visible fold number V: documents with `f <= V` (or no `f`) are read, log entries
   * with `fold <= V` are not, nor those of `stamping` when its `seq <= V`.
   */
  visible: number;
  /** The fold under way, recorded before it writes anything; null between folds. */
  running: RunningFold | null;
  /** The last fold made visible while its entries are not stamped yet; null or absent otherwise. */
  stamping?: StampingFold | null;
  /** The folder's lease: who may run folds, and until when (local time of the holder). */
  lease: { holder: string; until: Date } | null;
  /** Per UTC day (ms, as a string): how many folds wrote parts to it since its last compaction. */
  touched?: Record<string, number>;
  /**
   * Per UTC day (ms, as a string): when the last fold that wrote parts to it made them
   * visible (the folding holder's clock), kept while the day is in `touched`; what tells
   * a quiet day (see `compactOnce`'s `quietMs`). Absent for days folded before it was kept.
   */
  written?: Record<string, Date>;
  /** Compactions in their grace period, oldest first. */
  compactions?: CompactionRecord[];
  /** Per UTC day (ms, as a string): the number of its last compaction. */
  compacted?: Record<string, number>;
  /**
   * Per UTC day (ms, as a string): the runs of its compacted documents, oldest first (see
   * {@link CompactionRun}); absent for a day never compacted, or compacted before runs
   * were kept, whose next compaction merges it whole.
   */
  runs?: Record<string, CompactionRun[]>;
  /**
   * 0 when every series-day document was written by a fold that wrote day summaries
   * (`documents/summaries.ts`); otherwise the first such fold's number: the database held
   * documents written before, which no summary counts. Set once by {@link ensureFoldState}.
   */
  summariesFrom?: number;
}

/** The fold state collection of a store. */
export const foldState = (db: Db): Collection<FoldStateDocument> => db.collection<FoldStateDocument>(FOLD_STATE_COLLECTION);

/**
 * Creates the fold state document when the database has none (idempotent; V starts at
 * 0), and records once where day summaries start (`summariesFrom`): 0 in a database
 * without series-day documents (collection `series_days`, named by the caller: this module
 * does not import the store's names), else the next fold's number.
 */
export async function ensureFoldState(db: Db, buckets: string): Promise<void> {
  await foldState(db).updateOne({ _id: FOLDS_ID }, { $setOnInsert: { visible: 0, running: null, lease: null } }, { upsert: true });
  const state = await foldState(db).findOne({ _id: FOLDS_ID }, { projection: { visible: 1, summariesFrom: 1 } });
  if (state === null || state.summariesFrom !== undefined) return;
  const written = (await db.collection(buckets).findOne({}, { projection: { _id: 1 } })) !== null;
  await foldState(db).updateOne(
    { _id: FOLDS_ID, summariesFrom: { $exists: false } },
    { $set: { summariesFrom: written ? state.visible + 1 : 0 } },
  );
}

/** The visible fold number V: one read by `_id`. */
export async function readVisible(store: { db: Db }): Promise<number> {
  const state = await foldState(store.db).findOne({ _id: FOLDS_ID }, { projection: { visible: 1 } });
  return state?.visible ?? 0;
}

/**
 * What a reader sees: the visible fold number, the compactions still in grace, and the
 * visible fold whose log entries are not stamped yet (their readings are in the folded
 * documents, so they are no part of the tail).
 */
export interface ReadView {
  visible: number;
  compactions: CompactionRecord[];
  /** Absent or null: every entry of a visible fold is stamped. */
  stamping?: StampingFold | null;
}

/** The {@link ReadView} now: one read by `_id` of the fold state. */
export async function readView(store: { db: Db }): Promise<ReadView> {
  const state = await foldState(store.db).findOne({ _id: FOLDS_ID }, { projection: { visible: 1, compactions: 1, stamping: 1 } });
  return { visible: state?.visible ?? 0, compactions: state?.compactions ?? [], stamping: state?.stamping ?? null };
}

/**
 * The ids (as {@link entryKey} strings) of the log entries a visible fold took that are
 * not stamped yet (`view.stamping` when its number is at most V): entries with `fold:
 * null` that a reader of `view` must leave out of its tail. Left out in Node rather than
 * in the filter: the embedded server would read the `_id` index for an `$nin` and scan
 * the log.
 */
export function unstampedFolded(view: Pick<ReadView, 'visible' | 'stamping'>): Set<string> {
  const stamping = view.stamping;
  return new Set(stamping != null && stamping.seq <= view.visible ? stamping.entries.map(entryKey) : []);
}

/**
 * Log entries one update of {@link stampFolded} stamps at most. The embedded server
 * serializes the writes to one collection, and an update rewrites each entry (about 4 ms
 * an entry there, however small), so one update of a whole fold's entries held back every
 * acknowledgement for its duration (0.6 s for the 130 entries of a load-test fold);
 * in updates of 16, an acknowledgement waits for one of them at most.
 */
export const STAMP_CHUNK = 16;

/**
 * Stamps the log entries of the visible fold `stamping` (`fold: seq`, `foldedAt: now`;
 * those without `foldedAt`, so a repeat, or an entry stamped `fold` by an earlier version
 * before its flip, is handled alike), {@link STAMP_CHUNK} entries per update, one update
 * after another, then clears the record when it is still this one.
 * Idempotent: the fold's holder calls it right after the flip, and whoever next runs a
 * fold calls it first when a stopped holder left it (see `foldOnce`).
 * @throws driver errors (the record stays, and the next fold stamps again).
 */
export async function stampFolded(db: Db, stamping: StampingFold): Promise<void> {
  const foldedAt = new Date();
  for (let i = 0; i < stamping.entries.length; i += STAMP_CHUNK) {
    await ingestLog({ db }).updateMany(
      { _id: { $in: stamping.entries.slice(i, i + STAMP_CHUNK) }, foldedAt: null },
      { $set: { fold: stamping.seq, foldedAt } },
    );
  }
  await foldState(db).updateOne({ _id: FOLDS_ID, 'stamping.seq': stamping.seq }, { $set: { stamping: null } });
}

/**
 * Gives `foldedAt` to entries stamped by a visible fold without it (`fold` from 1 to V;
 * the `foldedAt` index reads the entries without it: those not folded, and these): what
 * a folder of an earlier version left when it stopped between its flip and marking its
 * entries, which then would never expire. Run at start-up (`ensureIndexes`).
 * @throws driver errors.
 */
export async function markFoldedEntries(db: Db): Promise<void> {
  const state = await foldState(db).findOne({ _id: FOLDS_ID }, { projection: { visible: 1 } });
  const visible = state?.visible ?? 0;
  if (visible < 1) return;
  await ingestLog({ db }).updateMany({ foldedAt: null, fold: { $gte: 1, $lte: visible } }, { $set: { foldedAt: new Date() } });
}

/**
 * The condition that keeps a series-day document visible in `view`: {@link visibleAt}
 * its fold number, and not replaced by a visible compaction (a document of a compacted
 * day in the fold numbers it replaced, {@link replacedBy}). Compactions merge rollup
 * documents too, so rollup reads take the same condition.
 */
export function visibleIn(view: ReadView): Filter<Document> {
  const replaced = view.compactions.filter((record) => record.c <= view.visible).flatMap(replacedBy);
  return replaced.length === 0 ? visibleAt(view.visible) : { ...visibleAt(view.visible), $nor: replaced };
}

/** How {@link findVisible} orders, limits and shapes what it reads, and the driver's limits. */
export interface FindVisibleOptions {
  /**
   * Conditions the index range `filter` cannot carry (a field's count, say), checked in a
   * `$match` of their own right after it (see {@link findVisible}); absent: none.
   */
  residual?: Filter<Document>;
  /** As in `find`: `{path: 1}` keeps, `{path: 0}` leaves out. */
  projection?: Document;
  /** As in `find`, e.g. `{date: -1}`. */
  sort?: Record<string, 1 | -1>;
  limit?: number;
  batchSize?: number;
  maxTimeMS?: number;
  signal?: AbortSignal;
}

/**
 * Reads the documents of `collection` that `filter` selects and `view` sees, as `find`
 * with `options` would: an aggregation of `$match` stages, `filter` first, then
 * `options.residual` when given, then {@link visibleIn}, then `$sort`, `$limit` and
 * `$project` when asked. MongoDB coalesces
 * the two `$match` stages (manual, "Aggregation Pipeline Optimization"); the embedded
 * server picks its index from the first stage only, and uses none for a filter with a
 * top-level `$nor` (the visibility condition while a compaction is in grace) or with two
 * operator fields, so `filter` must be an index range of its own: equalities followed
 * by at most one operator field.
 */
export function findVisible<T extends Document>(
  collection: Collection<T>,
  filter: Filter<Document>,
  view: ReadView,
  options: FindVisibleOptions = {},
): AggregationCursor<T> {
  const { residual, projection, sort, limit, batchSize, maxTimeMS, signal } = options;
  return collection.aggregate<T>(
    [
      { $match: filter },
      ...(residual === undefined ? [] : [{ $match: residual }]),
      { $match: visibleIn(view) },
      ...(sort === undefined ? [] : [{ $sort: sort }]),
      ...(limit === undefined ? [] : [{ $limit: limit }]),
      ...(projection === undefined ? [] : [{ $project: projection }]),
    ],
    {
      ...(batchSize === undefined ? {} : { batchSize }),
      ...(maxTimeMS === undefined ? {} : { maxTimeMS }),
      ...(signal === undefined ? {} : { signal }),
    },
  );
}

/**
 * The documents a compaction replaced, as filters, in the series-day collection and in
 * every rollup collection alike: on a day compacted whole, `f` below its number (or
 * none); on a day of which it merged only its newest runs and the parts since,
 * `from <= f < c`. One filter for all its whole days, one per other day.
 */
export function replacedBy(record: Pick<CompactionRecord, 'c' | 'days' | 'from'>): Filter<Document>[] {
  const whole = record.days.filter((_, i) => (record.from?.[i] ?? 0) === 0);
  const filters: Filter<Document>[] = whole.length === 0 ? [] : [{ date: { $in: whole }, f: { $not: { $gte: record.c } } }];
  record.days.forEach((date, i) => {
    const from = record.from?.[i] ?? 0;
    if (from > 0) filters.push({ date, f: { $gte: from, $lt: record.c } });
  });
  return filters;
}

/**
 * The condition that keeps a document visible at fold number `visible`: written by a
 * fold up to `visible`, or before folds existed (no `f`). Added to the first `$match`
 * of every read of series-day and rollup documents.
 */
export const visibleAt = (visible: number): Filter<Document> => ({ f: { $not: { $gt: visible } } });
