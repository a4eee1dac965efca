/**
 * Brings stored data to the explicit form of the current layout (`npm run migrate`).
 *
 * Series-day documents written before layout version 2 (see `DOCUMENT_VERSION` in
 * `documents/series-day.ts`) carry no `v`; they hold count, sum, min, max and sum of
 * squares of each slot and nothing else. The readings behind those aggregates were never
 * stored, so nothing can give such a document the first and last reading of its slots,
 * its quantile sketches or its latest readings: the migration only writes down the
 * version the document already is (`v: 1`) and leaves every statistic as it is. Queries
 * answer null for first, last and percentiles over such documents either way; after the
 * migration every document says which layout it has.
 *
 * Metric registry entries made before the optional statistics existed carry no
 * `statistics`; the migration writes the store's default into them, so that what a
 * metric keeps no longer depends on the server's configuration at the time of a write.
 *
 * Databases written before the ingest log keep batch claims in the collection `batches`
 * and batch marks in series-day documents: the migration carries the claims into the
 * log and removes the marks (`storage/migrate-claims.ts`; docs/ingest-design.md,
 * "Existing databases"). Their series-day documents (no `f`) need nothing: readers take
 * them as folded, and compaction rewrites a day of them with its new parts.
 *
 * Only standard driver calls (`find`, `updateMany`, `aggregate` with `$group`), so it
 * runs unchanged on MongoDB 7/8, Atlas and the embedded database.
 */
import type { Filter } from 'mongodb';
import { carryClaims, planClaims, removeBatchMarks, updateInIdRanges, type ClaimsPlan, type ClaimsReport } from './migrate-claims.ts';
import type { MetricDocument, Store } from './store.ts';
import type { SeriesDayDocument } from '../documents/series-day.ts';

/** Documents stamped per write unless told otherwise. */
export const DEFAULT_MIGRATION_BATCH_SIZE = 1_000;

/** The layout version of series-day documents that carry no `v`. */
const UNMARKED_VERSION = 1;

const unmarked: Filter<SeriesDayDocument> = { v: { $exists: false } };
const withoutStatistics: Filter<MetricDocument> = { statistics: { $exists: false } };

/** What {@link migrateLayout} found and did. */
export interface MigrationReport {
  /**
   * Series-day documents per layout version before the migration, keyed by the version
   * as a string (`{"1": 120, "2": 4000}`); documents without `v` count as version 1.
   */
  before: Record<string, number>;
  /**
   * The same after the migration. While the server writes, it may hold more documents
   * of the current version than `before` (new days); never fewer of any version.
   */
  after: Record<string, number>;
  /** Series-day documents this run gave `v: 1` (0 when there were none left to stamp). */
  stamped: number;
  /** Metric registry entries this run gave an explicit `statistics` (the store's default). */
  metricsGivenStatistics: number;
  /** What became of the batch claims of the write path before the ingest log ({@link carryClaims}). */
  claims: ClaimsReport;
  /** Series-day documents whose batch marks this run removed ({@link removeBatchMarks}). */
  marksRemoved: number;
  /** Wall-clock time of the whole run, in milliseconds. */
  elapsedMs: number;
}

/** What a migration would do, found without writing (`npm run migrate -- --dry-run`). */
export interface PendingMigration {
  /** Series-day documents per layout version, as in {@link MigrationReport.before}. */
  versions: Record<string, number>;
  /** Series-day documents without `v`, each of which a migration would give `v: 1`. */
  unstamped: number;
  /** Metric registry entries without `statistics`, each of which a migration would give the store's default. */
  metricsWithoutStatistics: number;
  /** The batch claims of the write path before the ingest log, and what a migration would do with them ({@link planClaims}). */
  claims: ClaimsPlan;
}

/**
 * Counts the series-day documents of each layout version with one `$group` by
 * `{$ifNull: ['$v', 1]}` (a full scan of the collection): documents without `v` count as
 * version 1, like those stamped `v: 1`.
 * @returns counts keyed by the version as a string, e.g. `{"1": 120, "2": 4000}`; `{}`
 * when there are no series-day documents.
 */
export async function layoutVersions(store: Store): Promise<Record<string, number>> {
  const groups = await store.seriesDays
    .aggregate<{ _id: unknown; n: number }>([{ $group: { _id: { $ifNull: ['$v', UNMARKED_VERSION] }, n: { $sum: 1 } } }])
    .toArray();
  const versions: Record<string, number> = {};
  for (const group of groups.sort((a, b) => Number(a._id) - Number(b._id))) versions[String(group._id)] = group.n;
  return versions;
}

/** What {@link migrateLayout} would change, read without writing anything. */
export async function pendingMigration(store: Store): Promise<PendingMigration> {
  const [versions, unstamped, metricsWithoutStatistics, claims] = await Promise.all([
    layoutVersions(store),
    store.seriesDays.countDocuments(unmarked),
    store.metrics.countDocuments(withoutStatistics),
    planClaims(store),
  ]);
  return { versions, unstamped, metricsWithoutStatistics, claims };
}

/**
 * Brings existing data to the explicit form of the current layout:
 * 1. every series-day document without `v` gets `v: 1`, the version it is: nothing
 *    else in it changes, no statistic, no number (what version 2 adds, the first and
 *    last reading of each slot, the sketches and the latest readings, would need the
 *    readings behind the version-1 aggregates, which were never kept). Documents are
 *    stamped in `_id` order, `batchSize` at a time: the ids of the next documents without
 *    `v` are read, then one `updateMany` stamps the documents without `v` in that `_id`
 *    range, so no write is larger than a batch and progress can be reported;
 * 2. every metric registry entry without `statistics` gets the store's
 *    `defaultStatistics` (one `updateMany`; the registry holds one entry per metric);
 * 3. the batch claims of the write path before the ingest log are carried into the log
 *    ({@link carryClaims}: applied ones answer a resend `alreadyApplied`, partly
 *    applied ones store the rest on a resend, ones that applied nothing are dropped);
 * 4. the batch marks are removed from the series-day documents, `batchSize` at a time
 *    ({@link removeBatchMarks}).
 * Steps 3 and 4 expect the servers of the old write path to be stopped (a claim or mark
 * they write afterwards is not carried; a new run carries it).
 *
 * Every write waits for the store's write concern. Safe to run while a server writes:
 * a version-1 document that receives readings stays version 1 (the record path sets
 * `v` only when it creates a document), and the documents it creates carry the current
 * version already, so no write of the record path and no write of the migration undoes
 * the other. Idempotent: only documents without `v` and entries without `statistics`
 * are written, so a second run (or a run after an interrupted one) stamps what is left
 * and nothing else; two runs at once stamp each document once between them.
 *
 * @param options.onProgress called with the documents stamped so far and the number of
 * documents without `v` found at the start (grown when more were stamped, as when a
 * server of the previous version still writes): once before the first batch, then after
 * every batch.
 * @param options.onMarksProgress the same for the documents whose batch marks are removed.
 * @param options.batchSize documents stamped (and cleaned of marks) per write (default
 * {@link DEFAULT_MIGRATION_BATCH_SIZE}).
 * @throws RangeError when `batchSize` is not a positive integer; driver errors (database
 * unreachable, write concern not met) as thrown by the driver, after which a new run
 * goes on where this one stopped.
 */
export async function migrateLayout(
  store: Store,
  options: {
    onProgress?: (done: number, total: number) => void;
    onMarksProgress?: (done: number, total: number) => void;
    batchSize?: number;
  } = {},
): Promise<MigrationReport> {
  const batchSize = options.batchSize ?? DEFAULT_MIGRATION_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer; got ${batchSize}`);
  const started = performance.now();
  const before = await layoutVersions(store);

  const stamped = await updateInIdRanges(
    store,
    unmarked,
    { $set: { v: UNMARKED_VERSION } },
    { batchSize, total: await store.seriesDays.countDocuments(unmarked), onProgress: options.onProgress },
  );

  const metrics = await store.metrics.updateMany(withoutStatistics, { $set: { statistics: store.defaultStatistics } });
  // The claims first: those in progress are decided by the marks.
  const claims = await carryClaims(store);
  const marksRemoved = await removeBatchMarks(store, { batchSize, onProgress: options.onMarksProgress });
  const after = await layoutVersions(store);
  return {
    before,
    after,
    stamped,
    metricsGivenStatistics: metrics.modifiedCount,
    claims,
    marksRemoved,
    elapsedMs: Math.round(performance.now() - started),
  };
}
