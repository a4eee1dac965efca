/**
 * The batch claims and batch marks of the write path before the ingest log, carried
 * into it by `npm run migrate` (docs/ingest-design.md, "Existing databases").
 *
 * That write path claimed each batch sent with a `batchId` in the collection `batches`
 * (`{_id: batchId, fingerprint, readings, receivedAt, createdAt, state}`, `state`
 * `applying` until every series-day document had applied the batch, then `applied`;
 * a TTL index removed a claim `BATCH_RETENTION_HOURS` after `createdAt`), and every
 * series-day document it wrote kept the marks of its last 64 batches (`batches`, see
 * `batchMark`). The ingest log recognises a resend by the log entry's `_id` instead, so
 * without this step a resend of a batch the old path applied would be stored again.
 * Only standard driver calls (`find`, `insertMany`, `updateOne`, `updateMany`,
 * `deleteMany`), so it runs unchanged on MongoDB 7/8, Atlas and the embedded database.
 */
import type { Filter, UpdateFilter } from 'mongodb';
import { batchMark } from '../model/batch.ts';
import { ingestLog, type CarriedClaim, type LogEntryDocument } from './ingest-log.ts';
import { duplicateKeyIndexes } from './registration.ts';
import { findRollups, markDirty } from './rollups.ts';
import type { BatchDocument, Store } from './store.ts';
import type { SeriesDayDocument } from '../documents/series-day.ts';

/** Claims (and log entries) written or looked up per request. */
const CHUNK = 1_000;

/**
 * A claim still `applying`: the old write path stopped (or was stopped) between its
 * first series-day write and the end of the batch, or before it wrote anything.
 */
export interface ClaimInProgress {
  /** The batch id. */
  id: string;
  /** When the first attempt arrived. */
  receivedAt: Date;
  /** Readings of the batch. */
  readings: number;
  /** Series-day documents carrying the batch's mark: those that applied it. */
  documents: number;
  /**
   * What the migration does with it: `partial` (some documents applied the batch) is
   * carried into the log as such, and a resend stores the readings of the other
   * documents only; `dropped` (no document applied it) is not carried, and a resend
   * stores the whole batch; `inLog` (the log has an entry for the id already: a resend
   * reached a server of the ingest log before the migration) is left to that entry.
   */
  decision: 'partial' | 'dropped' | 'inLog';
}

/** The claims found and what {@link carryClaims} does with them. */
export interface ClaimsPlan {
  /** Claims in the collection `batches`. */
  claims: number;
  /** Claims of batches applied whole, carried as log entries that answer a resend `alreadyApplied` (those with a log entry already excluded). */
  applied: number;
  /** Claims whose id has a log entry already (left to it; the claim is removed). */
  inLog: number;
  /** Every claim still `applying`, with its decision. */
  inProgress: ClaimInProgress[];
  /** Series-day documents that carry batch marks (removed by {@link removeBatchMarks}). */
  markedDocuments: number;
}

/** What {@link carryClaims} did. */
export interface ClaimsReport {
  /** Log entries written for claims of batches applied whole. */
  carriedApplied: number;
  /** Log entries written for claims of batches applied to some documents only. */
  carriedPartial: number;
  /** Claims in progress that no document had applied: not carried. */
  dropped: number;
  /** Claims whose id has a log entry already: not carried. */
  inLog: number;
  /** Every claim still `applying`, with its decision. */
  inProgress: ClaimInProgress[];
  /** Claims removed from the collection `batches` (every one read). */
  claimsRemoved: number;
  /** Rollup days marked dirty for the partly applied batches (a rebuild makes them exact). */
  rollupDaysMarkedDirty: number;
}

/** A claim in progress read with the series-day documents that carry its mark. */
interface ReadClaim {
  claim: BatchDocument;
  /** Whether the ingest log has an entry for its id. */
  inLog: boolean;
  /** `{series, date, metric}` of each document carrying the mark. */
  documents: { series: string; date: Date; metric: string }[];
}

/** Which of `ids` have an ingest-log entry (one `_id` look-up). */
async function idsInLog(store: Store, ids: readonly string[]): Promise<Set<string>> {
  const found = await ingestLog(store)
    .find({ _id: { $in: [...ids] } }, { projection: { _id: 1 } })
    .toArray();
  return new Set(found.map((entry) => String(entry._id)));
}

/**
 * The claims of batches applied whole, {@link CHUNK} at a time in `_id` order, each chunk
 * with the ids the log holds already. A day of claims may be millions: never all in memory.
 */
async function* appliedChunks(store: Store): AsyncGenerator<{ claims: BatchDocument[]; inLog: Set<string> }> {
  const withLog = async (claims: BatchDocument[]) => ({
    claims,
    inLog: await idsInLog(
      store,
      claims.map((claim) => claim._id),
    ),
  });
  const cursor = store.batches.find({ state: 'applied' }).sort({ _id: 1 }).batchSize(CHUNK);
  let chunk: BatchDocument[] = [];
  try {
    for await (const claim of cursor) {
      chunk.push(claim);
      if (chunk.length < CHUNK) continue;
      yield await withLog(chunk);
      chunk = [];
    }
    if (chunk.length > 0) yield await withLog(chunk);
  } finally {
    await cursor.close();
  }
}

/**
 * The claims still `applying` (a handful: each is a batch the old server stopped in the
 * middle of), whether the log holds their ids, and the series-day documents carrying
 * their marks (one `find` of `{batches: {$in: marks}}`: a collection scan, as no index
 * covers the marks, made only when such a claim exists).
 */
async function claimsInProgress(store: Store): Promise<ReadClaim[]> {
  const claims = await store.batches
    .find({ state: { $ne: 'applied' } })
    .sort({ _id: 1 })
    .toArray();
  if (claims.length === 0) return [];
  const inLog = new Set<string>();
  for (let i = 0; i < claims.length; i += CHUNK) {
    for (const id of await idsInLog(
      store,
      claims.slice(i, i + CHUNK).map((claim) => claim._id),
    )) {
      inLog.add(id);
    }
  }
  const byMark = new Map(claims.filter((claim) => !inLog.has(claim._id)).map((claim) => [batchMark(claim._id), claim._id]));
  const documents = new Map<string, ReadClaim['documents']>();
  if (byMark.size > 0) {
    const cursor = store.seriesDays.find(
      { batches: { $in: [...byMark.keys()] } },
      { projection: { _id: 0, series: 1, date: 1, metric: 1, batches: 1 } },
    );
    for await (const doc of cursor) {
      for (const mark of doc.batches ?? []) {
        const id = byMark.get(mark);
        if (id === undefined) continue;
        const list = documents.get(id) ?? [];
        list.push({ series: doc.series, date: doc.date, metric: doc.metric });
        documents.set(id, list);
      }
    }
  }
  return claims.map((claim) => ({ claim, inLog: inLog.has(claim._id), documents: documents.get(claim._id) ?? [] }));
}

/** The decision on a claim still `applying` (see {@link ClaimInProgress.decision}). */
const decide = (read: ReadClaim): ClaimInProgress['decision'] => (read.inLog ? 'inLog' : read.documents.length > 0 ? 'partial' : 'dropped');

/** The claims in progress with their decisions, in id order. */
const inProgressOf = (reads: readonly ReadClaim[]): ClaimInProgress[] =>
  reads.map((read) => ({
    id: read.claim._id,
    receivedAt: read.claim.receivedAt,
    readings: read.claim.readings,
    documents: read.documents.length,
    decision: decide(read),
  }));

/**
 * How many batch claims of the write path before the ingest log the database still
 * holds (`estimatedDocumentCount` of `batches`: metadata, no scan): more than 0 until
 * `npm run migrate` carried them, what a server warns about at start-up, since a resend
 * of such a batch is not recognised before.
 */
export async function claimsLeft(store: Pick<Store, 'batches'>): Promise<number> {
  return store.batches.estimatedDocumentCount();
}

/** Series-day documents that carry batch marks (`countDocuments` of `{batches: {$exists: true}}`). */
export async function countMarkedDocuments(store: Store): Promise<number> {
  return store.seriesDays.countDocuments({ batches: { $exists: true } });
}

/** What {@link carryClaims} would do, read without writing anything (`npm run migrate -- --dry-run`). */
export async function planClaims(store: Store): Promise<ClaimsPlan> {
  const inProgress = await claimsInProgress(store);
  let applied = 0;
  let inLog = inProgress.filter((read) => read.inLog).length;
  for await (const chunk of appliedChunks(store)) {
    applied += chunk.claims.length - chunk.inLog.size;
    inLog += chunk.inLog.size;
  }
  return {
    claims: await store.batches.countDocuments({}),
    applied,
    inLog,
    inProgress: inProgressOf(inProgress),
    markedDocuments: await countMarkedDocuments(store),
  };
}

/**
 * The log entry of a carried claim: no readings (empty columns, `metrics: []`, `first`
 * and `last` the claim's arrival), the claim's fingerprint and readings count (for
 * BATCH_ID_REUSED), `fold: 0` (at or below every visible fold number, so no fold takes
 * it and no read's tail holds it), and `foldedAt` the claim's `createdAt`, so the TTL index
 * of the log removes it when the claim's own would have.
 */
function carriedEntry(claim: BatchDocument, carried: CarriedClaim): LogEntryDocument {
  return {
    _id: claim._id,
    fingerprint: claim.fingerprint,
    receivedAt: claim.receivedAt,
    metrics: [],
    first: claim.receivedAt,
    last: claim.receivedAt,
    readings: claim.readings,
    series: [],
    s: [],
    t: [],
    fields: [],
    v: [],
    fold: 0,
    foldedAt: claim.createdAt,
    claim: carried,
  };
}

/**
 * Carries every batch claim into the ingest log, so a resend keeps the meaning the claim
 * gave it (idempotent; run with the servers of the old write path stopped):
 * 1. the claims still `applying` ({@link claimsInProgress}): one whose mark some
 *    documents carry becomes an entry `{state: 'partial', documents}` (a resend stores
 *    the readings of the other series-days, `completeClaim`), and the days of those
 *    documents are marked dirty in the metric's rollups (the old path wrote rollups
 *    after every series-day document, so theirs may hold any part of the batch; a
 *    rebuild makes them exact from the series-day documents); one that no document
 *    applied gets no entry (a resend stores the whole batch);
 * 2. the claims `applied`, {@link CHUNK} at a time: one entry `{state: 'applied'}` each
 *    (a resend answers `alreadyApplied`);
 * each entry as {@link carriedEntry}, so a resend with other readings is refused
 * BATCH_ID_REUSED by the fingerprint. A claim whose id the log holds already (a resend
 * reached a server of the ingest log first, or an earlier run) gets no entry: the log's
 * rules. Each claim is deleted once its entry is written (the applied ones by the range
 * of ids of their chunk: with the old servers stopped, nothing else writes claims).
 * A crash at any point is completed by a new run: written entries are skipped (duplicate
 * key), the claims and marks not yet deleted are still there.
 */
export async function carryClaims(store: Store): Promise<ClaimsReport> {
  const report: ClaimsReport = {
    carriedApplied: 0,
    carriedPartial: 0,
    dropped: 0,
    inLog: 0,
    inProgress: [],
    claimsRemoved: 0,
    rollupDaysMarkedDirty: 0,
  };
  const inProgress = await claimsInProgress(store);
  report.inProgress = inProgressOf(inProgress);
  const partly = inProgress.filter((read) => decide(read) === 'partial');
  report.inLog += inProgress.filter((read) => read.inLog).length;
  report.dropped = inProgress.filter((read) => decide(read) === 'dropped').length;
  const days = new Map<string, Set<number>>();
  for (const read of partly) {
    for (const doc of read.documents) {
      const set = days.get(doc.metric) ?? new Set<number>();
      set.add(doc.date.getTime());
      days.set(doc.metric, set);
    }
  }
  if (days.size > 0) {
    const dirty = (await findRollups(store, [...days.keys()])).map((rollup) => ({ rollup, days: [...days.get(rollup.metric)!] }));
    await markDirty(store, dirty);
    report.rollupDaysMarkedDirty = dirty.reduce((sum, { days: list }) => sum + list.length, 0);
  }
  report.carriedPartial = await insertEntries(
    store,
    partly.map((read) => {
      const documents = [...new Set(read.documents.map((doc) => `${doc.series}:${doc.date.getTime()}`))].sort();
      return carriedEntry(read.claim, { state: 'partial', documents });
    }),
  );
  report.claimsRemoved += await deleteClaims(
    store,
    inProgress.map((read) => read.claim._id),
  );
  for await (const chunk of appliedChunks(store)) {
    report.inLog += chunk.inLog.size;
    const entries = chunk.claims.filter((claim) => !chunk.inLog.has(claim._id)).map((claim) => carriedEntry(claim, { state: 'applied' }));
    report.carriedApplied += await insertEntries(store, entries);
    // The chunk is every applied claim from its first id to its last: one range delete
    // (an `$in` of 1,000 ids took 8x as long on the embedded server).
    const range = { $gte: chunk.claims[0]!._id, $lte: chunk.claims.at(-1)!._id };
    report.claimsRemoved += (await store.batches.deleteMany({ _id: range, state: 'applied' })).deletedCount;
  }
  return report;
}

/** Inserts log entries, {@link CHUNK} at a time, skipping those already there (duplicate key). @returns how many were inserted. */
async function insertEntries(store: Store, entries: readonly LogEntryDocument[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < entries.length; i += CHUNK) {
    const chunk = entries.slice(i, i + CHUNK);
    try {
      inserted += (await ingestLog(store).insertMany(chunk, { ordered: false })).insertedCount;
    } catch (error) {
      inserted += chunk.length - duplicateKeyIndexes(error).length;
    }
  }
  return inserted;
}

/** Deletes the claims `ids`, {@link CHUNK} at a time. @returns how many were deleted. */
async function deleteClaims(store: Store, ids: readonly string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    deleted += (await store.batches.deleteMany({ _id: { $in: ids.slice(i, i + CHUNK) } })).deletedCount;
  }
  return deleted;
}

/**
 * Removes the batch marks (`batches`) from every series-day document that carries them,
 * `batchSize` documents per `updateMany`, after {@link carryClaims} has read them: the
 * ingest log recognises resends without them, and compaction would drop them anyway.
 * The `_id`s of the next marked documents are read in `_id` order, then one `updateMany`
 * `$unset`s the marks of the marked documents in that `_id` range ({@link updateInIdRanges}:
 * a range, as an `$in` of the ids took several times as long on the embedded server), as
 * the layout stamping does. Nothing else in a document changes. Idempotent.
 * @param onProgress called with the documents cleaned so far and the marked documents
 * found at the start: once before the first write, then after every write.
 * @returns the documents cleaned.
 */
export async function removeBatchMarks(
  store: Store,
  options: { batchSize: number; onProgress?: (done: number, total: number) => void },
): Promise<number> {
  const marked = { batches: { $exists: true } };
  return updateInIdRanges(store, marked, { $unset: { batches: '' } }, { ...options, total: await countMarkedDocuments(store) });
}

/**
 * Applies `update` to the series-day documents matching `filter`, `batchSize` of them
 * per `updateMany`, walking them in `_id` order: each step reads the next `batchSize`
 * ids (`_id` only) and updates the range up to the last of them, so no step sends a
 * list of ids. The documents of the write path before the ingest log (the only ones the
 * upgrade changes) have ObjectId ids, so `_id` order is a total order over them; a
 * document that `update` leaves matching `filter` is passed over, not updated again.
 * @param options.total the matching documents counted before the first step (grows if
 * more are updated, so progress never passes 100%).
 * @param options.onProgress called with the documents updated so far and the total:
 * once before the first write, then after every write.
 * @returns the documents updated.
 */
export async function updateInIdRanges(
  store: Pick<Store, 'seriesDays'>,
  filter: Filter<SeriesDayDocument>,
  update: UpdateFilter<SeriesDayDocument>,
  options: { batchSize: number; total: number; onProgress?: (done: number, total: number) => void },
): Promise<number> {
  let total = options.total;
  let done = 0;
  options.onProgress?.(done, total);
  let last: SeriesDayDocument['_id'] | undefined;
  for (;;) {
    const range = last === undefined ? {} : { _id: { $gt: last } };
    const ids = await store.seriesDays
      .find({ ...filter, ...range }, { projection: { _id: 1 }, sort: { _id: 1 }, limit: options.batchSize })
      .toArray();
    const upTo = ids.at(-1)?._id;
    if (upTo === undefined) break;
    const result = await store.seriesDays.updateMany(
      { ...filter, _id: last === undefined ? { $lte: upTo } : { $gt: last, $lte: upTo } },
      update,
    );
    done += result.modifiedCount;
    total = Math.max(total, done);
    last = upTo;
    options.onProgress?.(done, total);
  }
  return done;
}
