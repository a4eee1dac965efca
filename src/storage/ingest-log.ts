/**
 * The ingest log (collection `ingest_log`): every acknowledged batch as one entry, kept
 * until the folder (`storage/fold.ts`) has folded it into series-day documents, and then
 * as the record of its batch id for `BATCH_RETENTION_HOURS`. See docs/ingest-design.md.
 */
import { Binary, ObjectId, type Collection, type Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { BacklogError, ErrorCode, InputError, isDuplicateKeyError } from '../errors.ts';
import { DAY_MS, floorTo } from '../model/time.ts';
import { fromColumns, packColumns, toColumns, unpackColumns, type LogColumns } from '../record/log-entry.ts';
import { withServerTime, type Reading } from '../record/validate.ts';
import { faultPoint } from './fault-points.ts';
import { dropIndexIfPresent } from './indexes.ts';

/**
 * Bounds of the unfolded log (see {@link checkBacklog}) and what this process knows of it
 * (`Store.ingest`): past either bound, writes are refused with INGEST_BACKLOG. 0 turns a
 * bound off.
 */
export interface IngestBounds {
  /** `INGEST_MAX_TAIL_READINGS`. */
  maxTailReadings: number;
  /** `INGEST_MAX_TAIL_SECONDS`. */
  maxTailSeconds: number;
  /**
   * Readings per second the folder folds, for `Retry-After` (`backlogWait`): 20,000 until
   * this process folds, then the rate of its last fold of at least half
   * `FOLD_MAX_READINGS` (`jobs/fold-job.ts`).
   */
  foldRate: number;
  /** The last backlog this process measured (or is measuring), and when it began (ms since epoch). */
  measured?: { at: number; backlog: Promise<Backlog> };
}

/** Collection name of the ingest log. */
export const INGEST_LOG_COLLECTION = 'ingest_log';

/**
 * One acknowledged batch. Its readings are the columns of `record/log-entry.ts`, stored
 * packed in `packed`; entries written before the packing, and those `npm run migrate`
 * carried from batch claims (no readings), hold the columns as fields instead.
 */
export interface LogEntryDocument extends Partial<LogColumns> {
  /** The client's batch id, or an ObjectId for a batch sent without one. */
  _id: string | ObjectId;
  /** SHA-256 of the batch as sent (see `batchFingerprint`), for a batch with an id; tells a retry from a reuse of the id. */
  fingerprint?: string;
  /** When the server acknowledged the batch; the time of its readings sent without one. */
  receivedAt: Date;
  /** Metrics of the batch, each once (index `{metrics, fold}`: a query's tail). */
  metrics: string[];
  /** Earliest and latest reading time of the batch. */
  first: Date;
  last: Date;
  /** Number of readings. */
  readings: number;
  /** The batch's columns as one deflated BSON block (`packColumns`); absent in entries that hold the columns as fields. */
  packed?: Binary;
  /** The number of the fold that took the entry; absent (null) until a fold takes it. */
  fold?: number | null;
  /** When the fold that took the entry became visible; a TTL index removes the entry `BATCH_RETENTION_HOURS` later. */
  foldedAt?: Date | null;
  /**
   * Set on an entry that `npm run migrate` made of a batch claim of the write path before
   * the ingest log (`storage/migrate-claims.ts`): it holds no readings (`readings` is the
   * claimed batch's count), `fold: 0`, and `foldedAt` the claim's `createdAt`, so it
   * expires when the claim would have.
   */
  claim?: CarriedClaim;
}

/**
 * What a batch claim of the write path before the ingest log said when it was carried
 * into the log: `applied`, the batch was applied whole (a resend answers it as stored);
 * `partial`, the claim was still `applying` and the series-day documents `documents`
 * (`"<series id>:<UTC midnight ms>"`) carried the batch's mark, so they held its readings
 * and no other document did: a resend stores the batch's other readings
 * ({@link completeClaim}).
 */
export type CarriedClaim = { state: 'applied' } | { state: 'partial'; documents: string[] };

/** What the log holds of a batch id (see {@link knownBatch}). */
export type StoredBatch =
  /** No entry: the batch is new. */
  | { status: 'new' }
  /** An entry with the same readings: a retry, already stored. */
  | { status: 'stored' }
  /**
   * A claim carried from the write path before the ingest log that had applied the batch
   * to some series-day documents only: a resend completes it ({@link completeClaim}).
   */
  | { status: 'partial'; documents: string[]; receivedAt: number };

/**
 * A log entry's `_id` as a string key: a client's batch id (a string) and an id the
 * server made (an ObjectId) stay apart even when the batch id is the ObjectId's 24 hex
 * digits, as they do as `_id` values.
 */
export const entryKey = (id: LogEntryDocument['_id']): string => (typeof id === 'string' ? `b:${id}` : `o:${id.toHexString()}`);

/** The ingest log collection of a store. */
export const ingestLog = (store: { db: Db }): Collection<LogEntryDocument> => store.db.collection<LogEntryDocument>(INGEST_LOG_COLLECTION);

/**
 * Creates the ingest log's indexes (idempotent): `{fold, receivedAt}` (the folder takes
 * the oldest entries without a fold), `{metrics, fold}` (a query's tail), and a TTL
 * index on `foldedAt`, so an entry is removed `retentionSeconds` after it was folded and
 * never before (MongoDB manual, "TTL Indexes": documents without the field never
 * expire). Drops `{foldedAt, fold}`, which an earlier version made for marking entries
 * after a fold: a fold now stamps its entries by `_id` (`stampFolded`), and each index
 * costs every acknowledged batch.
 */
export async function ensureIngestLogIndexes(db: Db, retentionSeconds: number): Promise<void> {
  const log = db.collection(INGEST_LOG_COLLECTION);
  await log.createIndexes([
    { key: { fold: 1, receivedAt: 1 }, name: 'fold_receivedAt' },
    { key: { metrics: 1, fold: 1 }, name: 'metrics_fold' },
  ]);
  await dropIndexIfPresent(db, INGEST_LOG_COLLECTION, 'foldedAt_fold');
  try {
    await log.createIndexes([{ key: { foldedAt: 1 }, name: 'foldedAt_ttl', expireAfterSeconds: retentionSeconds }]);
  } catch (error) {
    // 85 IndexOptionsConflict: the index exists with another retention.
    if ((error as { code?: number }).code !== 85) throw error;
    await db.command({ collMod: INGEST_LOG_COLLECTION, index: { name: 'foldedAt_ttl', expireAfterSeconds: retentionSeconds } });
  }
}

/**
 * What the log holds of batch id `id` (one read by `_id`): nothing (`new`); an entry of
 * the same readings (`stored`: fingerprint `fingerprint`, a retry); or a partly applied
 * batch claim carried from the write path before the ingest log (`partial`).
 * @param readings the batch's number of readings, for the error.
 * @throws InputError BATCH_ID_REUSED when the id's entry holds other readings.
 */
export async function knownBatch(store: { db: Db }, id: string, fingerprint: string | undefined, readings: number): Promise<StoredBatch> {
  const before = await ingestLog(store).findOne({ _id: id }, { projection: { fingerprint: 1, receivedAt: 1, readings: 1, claim: 1 } });
  if (before === null) return { status: 'new' };
  if (before.fingerprint !== fingerprint) {
    throw new InputError(
      ErrorCode.BATCH_ID_REUSED,
      `batchId "${id}" was used on ${before.receivedAt.toISOString()} for ${before.readings} other readings than these ${readings}; a retry must send exactly the same readings, new readings need a new batchId`,
      'batchId',
    );
  }
  if (before.claim?.state === 'partial') {
    return { status: 'partial', documents: before.claim.documents, receivedAt: before.receivedAt.getTime() };
  }
  return { status: 'stored' };
}

/**
 * Readings the decoded-entry cache keeps: more than the default bound of the unfolded log
 * (`INGEST_MAX_TAIL_READINGS`, 200,000), so reads of a whole tail at the bound decode
 * each entry once. A decoded reading of two tags and two fields takes about 450 B of
 * heap, so the cache stays near 110 MB whatever the size of the entries (bounded by
 * entries, 2,000 of them, it could have held 2,000,000 readings of batches of 1,000).
 */
const DECODED_READINGS = 250_000;

/**
 * Readings of log entries by {@link readingsKey}: an entry never changes, so its readings
 * are decoded once per process, and those of the entries this process appends are kept
 * as it writes them, so a read of its own tail, and its fold, fetch none of them. A fold
 * drops its entries once they are stamped ({@link forgetReadings}).
 */
const decoded = new LRUCache<string, Reading[]>({
  maxSize: DECODED_READINGS,
  sizeCalculation: (readings) => Math.max(1, readings.length),
});

/**
 * The key of an entry's readings in the decoded-entry cache: its database, id and
 * arrival. An id names an entry only within one database and one retention period (a
 * batch id may be used again once its entry expired), so the key holds all three.
 */
export const readingsKey = (db: Pick<Db, 'databaseName'>, entry: Pick<LogEntryDocument, '_id' | 'receivedAt'>): string =>
  `${db.databaseName}\u0000${entryKey(entry._id)}\u0000${entry.receivedAt.getTime()}`;

/**
 * Drops the readings of `entries` of `db` from the decoded-entry cache: a fold calls it
 * once its entries are stamped, so the cache holds mostly the unfolded log (a reader of
 * a view older than that fold fetches them again).
 */
export function forgetReadings(db: Pick<Db, 'databaseName'>, entries: readonly Pick<LogEntryDocument, '_id' | 'receivedAt'>[]): void {
  for (const entry of entries) decoded.delete(readingsKey(db, entry));
}

/**
 * The readings of the log entries `entries` (each with its `receivedAt` as the log holds
 * it), by {@link readingsKey}: those in the decoded-entry cache taken from it (looked up
 * at the call, before its first wait), the others fetched by `_id` in one find and
 * decoded ({@link entryReadings}), and kept in the cache when `keep`. An entry gone from
 * the log has none.
 * @param options.driver options of the find (a `maxTimeMS` and a signal, see `query-options.ts`).
 * @throws driver errors; Error when an entry's packed columns are corrupted.
 */
export async function readingsOf(
  store: { db: Db },
  entries: readonly Pick<LogEntryDocument, '_id' | 'receivedAt'>[],
  options: { keep: boolean; driver?: { maxTimeMS?: number; signal?: AbortSignal } },
): Promise<Map<string, Reading[]>> {
  const found = new Map<string, Reading[]>();
  const missing: LogEntryDocument['_id'][] = [];
  for (const entry of entries) {
    const key = readingsKey(store.db, entry);
    const cached = decoded.get(key);
    if (cached !== undefined) found.set(key, cached);
    else missing.push(entry._id);
  }
  if (missing.length === 0) return found;
  for (const entry of await ingestLog(store)
    .find({ _id: { $in: missing } }, options.driver)
    .toArray()) {
    const key = readingsKey(store.db, entry);
    const readings = entryReadings(entry);
    found.set(key, readings);
    if (options.keep) decoded.set(key, readings);
  }
  return found;
}

/** The fields of a log entry that describe its readings (metrics, time span, count and the packed columns), and its columns. */
function entryContent(readings: readonly Reading[]): {
  content: Omit<LogEntryDocument, '_id' | 'fingerprint' | 'receivedAt'>;
  columns: LogColumns;
} {
  let first = Infinity;
  let last = -Infinity;
  for (const reading of readings) {
    if (reading.time < first) first = reading.time;
    if (reading.time > last) last = reading.time;
  }
  const columns = toColumns(readings);
  return {
    content: {
      metrics: [...new Set(readings.map((reading) => reading.metric))],
      first: new Date(first),
      last: new Date(last),
      readings: readings.length,
      packed: new Binary(packColumns(columns)),
    },
    columns,
  };
}

/**
 * The log entry of a validated batch, as {@link appendEntry} inserts it: `_id` the batch
 * id (or a new ObjectId), its fingerprint, `receivedAt` and its readings' fields
 * (packed columns, metrics, time span, count); and the columns it packs. Pure but for
 * the ObjectId.
 * @param batch.receivedAt when the request arrived (ms since epoch, UTC).
 */
export function newEntry(
  readings: readonly Reading[],
  batch: { id?: string; fingerprint?: string; receivedAt: number },
): { entry: LogEntryDocument; columns: LogColumns } {
  const { content, columns } = entryContent(readings);
  const entry: LogEntryDocument = {
    _id: batch.id ?? new ObjectId(),
    ...(batch.fingerprint === undefined ? {} : { fingerprint: batch.fingerprint }),
    receivedAt: new Date(batch.receivedAt),
    ...content,
  };
  return { entry, columns };
}

/**
 * Appends a validated batch to the log as one entry: one insert, journaled by the
 * store's write concern, so the answer that follows means stored. With a batch id the id
 * is the entry's `_id`, so the database itself recognises a resend (duplicate key,
 * error 11000), concurrent resends included; the entry found then must have the same
 * fingerprint ({@link knownBatch}). Once written, its readings are kept in this process's
 * decoded-entry cache, so its own reads and folds fetch none of them.
 * @param batch.receivedAt when the request arrived (ms since epoch, UTC).
 * @returns `appended` when the entry was written now; otherwise what the log held of the
 * id ({@link knownBatch}: `stored`, a concurrent twin or an earlier attempt, or `partial`).
 * @throws InputError BATCH_ID_REUSED when the id was used for other readings (nothing written).
 * Driver errors propagate (the caller reports UNAVAILABLE; the client retries with its id).
 */
export async function appendEntry(
  store: { db: Db },
  readings: readonly Reading[],
  batch: { id?: string; fingerprint?: string; receivedAt: number },
): Promise<{ status: 'appended' } | Exclude<StoredBatch, { status: 'new' }>> {
  const { entry, columns } = newEntry(readings, batch);
  try {
    await ingestLog(store).insertOne(entry);
    // Its readings as a read decodes them (from the same columns), so this process's
    // reads of the tail fetch no entry it wrote.
    decoded.set(readingsKey(store.db, entry), fromColumns(columns));
    await faultPoint('record:after-log');
    return { status: 'appended' };
  } catch (error) {
    if (!isDuplicateKeyError(error) || batch.id === undefined) throw error;
  }
  const known = await knownBatch(store, batch.id, batch.fingerprint, readings.length);
  if (known.status !== 'new') return known;
  throw new Error(`Batch ${batch.id} was reported stored (duplicate key) but its log entry is gone`);
}

/**
 * Completes a resent batch whose claim was carried from the write path before the
 * ingest log while it was partly applied (`partial`, see {@link CarriedClaim}): the
 * readings of the series-day documents that had applied it are left out, and the others
 * become the entry's readings, to be folded like any entry, with one compare-and-set
 * update of the entry (on its `claim`), so of concurrent resends one stores them. As the
 * old write path did for a retry, readings sent without a time take the first attempt's
 * arrival time (`claim.receivedAt`), so they fall in the days it planned; the entry's
 * `receivedAt` becomes `now`, the time it joins the unfolded log.
 * A document that applied the batch but lost its mark to 64 later batches (the old
 * `BATCH_MARKS_KEPT`) is not listed, and gets the batch's readings again: the old write
 * path's own bound on recognising a retry.
 * @param readings the resent batch, validated (its fingerprint matched the entry's).
 * @returns the readings stored now and those the documents held already.
 */
export async function completeClaim(
  store: { db: Db },
  id: string,
  readings: readonly Reading[],
  claim: { documents: readonly string[]; receivedAt: number },
  now = Date.now(),
): Promise<{ applied: number; alreadyApplied: number }> {
  const held = new Set(claim.documents);
  const rest = withServerTime(readings, claim.receivedAt).filter(
    (reading) => !held.has(`${reading.seriesId}:${floorTo(reading.time, DAY_MS)}`),
  );
  const update =
    rest.length === 0
      ? { $set: { claim: { state: 'applied' } as CarriedClaim } }
      : {
          $set: { ...entryContent(rest).content, receivedAt: new Date(now), fold: null, foldedAt: null },
          // The claim's empty columns go too: the entry's readings are its packed ones.
          $unset: { claim: '', series: '', s: '', t: '', fields: '', v: '', serverTime: '' } as const,
        };
  const done = await ingestLog(store).updateOne({ _id: id, 'claim.state': 'partial' }, update);
  // A concurrent resend completed it first: everything is stored.
  if (done.modifiedCount !== 1) return { applied: 0, alreadyApplied: readings.length };
  return { applied: rest.length, alreadyApplied: readings.length - rest.length };
}

/**
 * The readings of a stored entry, in the order sent: from its packed columns, or from its
 * columns as fields (entries written before the packing, carried claims).
 * @throws Error when the packed columns are corrupted.
 */
export const entryReadings = (entry: LogEntryDocument): Reading[] =>
  fromColumns(entry.packed === undefined ? (entry as LogColumns) : unpackColumns(entry.packed.buffer));

/**
 * The unfolded part of the log: readings in entries not stamped by a fold (`fold: null`:
 * those no fold has taken, those of the fold under way, and for a moment after each flip
 * those of the fold just made visible), and the age of the oldest.
 */
export interface Backlog {
  readings: number;
  entries: number;
  /** When the oldest such entry was received (ms since epoch); null when there is none. */
  oldest: number | null;
  /** When the newest such entry was received (ms since epoch); null when there is none. */
  newest: number | null;
}

/** The {@link Backlog} of a log with nothing unfolded (frozen: every caller gets this one object). */
export const NO_BACKLOG: Backlog = Object.freeze({ readings: 0, entries: 0, oldest: null, newest: null });

/** Measures the {@link Backlog} (one aggregation on the `{fold, receivedAt}` index). */
export async function measureBacklog(store: { db: Db }): Promise<Backlog> {
  const [row] = await ingestLog(store)
    .aggregate<{ readings: number; entries: number; oldest: Date | null; newest: Date | null }>([
      { $match: { fold: null } },
      {
        $group: {
          _id: null,
          readings: { $sum: '$readings' },
          entries: { $sum: 1 },
          oldest: { $min: '$receivedAt' },
          newest: { $max: '$receivedAt' },
        },
      },
    ])
    .toArray();
  if (row === undefined) return NO_BACKLOG;
  return { readings: row.readings, entries: row.entries, oldest: row.oldest?.getTime() ?? null, newest: row.newest?.getTime() ?? null };
}

/** How long a measured backlog is reused by one process (its writes and its folder), in ms. */
const BACKLOG_REUSE_MS = 500;

/**
 * The {@link Backlog} this process measured less than 500 ms ago (`Store.ingest.measured`),
 * or a new measurement ({@link measureBacklog}), kept for the next caller: the write
 * path's bound check and the folder's decision share it, and callers that arrive while
 * it is under way wait for the same one.
 * @param now ms since epoch.
 * @throws driver errors of the measurement.
 */
export async function recentBacklog(store: { db: Db; ingest: IngestBounds }, now = Date.now()): Promise<Backlog> {
  const { ingest } = store;
  if (ingest.measured === undefined || now - ingest.measured.at > BACKLOG_REUSE_MS) {
    // The promise is kept, so the requests that find the measurement stale together
    // share one aggregation; a failed one is not kept.
    const backlog = measureBacklog(store);
    const measured = { at: now, backlog };
    ingest.measured = measured;
    backlog.catch(() => {
      if (ingest.measured === measured) ingest.measured = undefined;
    });
  }
  return ingest.measured.backlog;
}

/** Age in seconds of the oldest unfolded entry of `backlog` at `now` (ms since epoch); 0 when there is none. */
const backlogAge = (backlog: Backlog, now: number): number => (backlog.oldest === null ? 0 : (now - backlog.oldest) / 1000);

/**
 * Seconds a refused writer should wait (at least 1), or 0 when `backlog` is within the
 * bounds at `now` (ms since epoch): the time the folder needs, at `bounds.foldRate`
 * readings per second, to fold what is past them. Past the readings bound, the excess
 * readings. Past the age bound, the readings older than the bound, taken as
 * `readings x excess age / age` (entries are folded oldest first, and arrivals are taken
 * as even over the backlog's span): what has to be folded before the oldest entry left
 * is young enough. Waiting for the excess age itself would be wrong: the oldest entry
 * does not get younger with time, only folded, and a writer that waits that long finds
 * the folder idle (the month's import waited 30 to 60 s with nothing left to fold).
 * Pure.
 */
export function backlogWait(
  backlog: Backlog,
  now: number,
  bounds: Pick<IngestBounds, 'maxTailReadings' | 'maxTailSeconds' | 'foldRate'>,
): number {
  const excessReadings = bounds.maxTailReadings > 0 ? backlog.readings - bounds.maxTailReadings : 0;
  const age = backlogAge(backlog, now);
  const excessAge = bounds.maxTailSeconds > 0 ? age - bounds.maxTailSeconds : 0;
  if (excessReadings <= 0 && excessAge <= 0) return 0;
  const olderThanBound = excessAge > 0 ? backlog.readings * Math.min(1, excessAge / age) : 0;
  return Math.max(1, Math.ceil(Math.max(excessReadings, olderThanBound) / Math.max(1, bounds.foldRate)));
}

/**
 * Refuses a write while the unfolded log is past the store's bounds
 * (`Store.ingest`: `INGEST_MAX_TAIL_READINGS` readings, or an oldest entry older than
 * `INGEST_MAX_TAIL_SECONDS`). The backlog is measured at most every 500 ms per process
 * ({@link recentBacklog}), so a steady stream of writes costs one small aggregation a second
 * or two, not one per batch.
 * @throws BacklogError INGEST_BACKLOG with the seconds to wait ({@link backlogWait}).
 */
export async function checkBacklog(store: { db: Db; ingest: IngestBounds }): Promise<void> {
  const { ingest } = store;
  if (ingest.maxTailReadings <= 0 && ingest.maxTailSeconds <= 0) return;
  const now = Date.now();
  const backlog = await recentBacklog(store, now);
  const wait = backlogWait(backlog, now, ingest);
  if (wait === 0) return;
  const age = backlogAge(backlog, now);
  throw new BacklogError(
    `The server is ${backlog.readings.toLocaleString('en-US')} readings behind in folding acknowledged writes (oldest ${Math.round(age)} s old; bounds ${ingest.maxTailReadings.toLocaleString('en-US')} readings, ${ingest.maxTailSeconds} s). Nothing was written: retry the batch after ${wait} s.`,
    wait,
  );
}
