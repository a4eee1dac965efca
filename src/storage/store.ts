import { LRUCache } from 'lru-cache';
import { MongoClient, MongoServerError, type Collection, type Db, type MongoClientOptions, type W } from 'mongodb';
import { randomUUID } from 'node:crypto';
import type { MetricKind } from '../model/counter.ts';
import type { StoredRetention } from '../model/retention-policy.ts';
import type { TagMap } from '../model/series.ts';
import { DEFAULT_STATISTICS, type StatisticsSettings } from '../model/statistics-settings.ts';
import { DEFAULT_MAX_SERIES_PER_METRIC } from '../model/limits.ts';
import { dropIndexIfPresent, indexesOf } from './indexes.ts';
import { ensureIngestLogIndexes, type IngestBounds } from './ingest-log.ts';
import { ReadPins, readPins } from './read-pins.ts';
import { DEFAULT_PACKED_MINUTES, DEFAULT_RAW_READINGS, type SeriesDayDocument, type DocumentForms } from '../documents/series-day.ts';
import { ensureFoldState, markFoldedEntries } from './fold-state.ts';

/** Series registry entry: one document per series (collection `series`). */
export interface SeriesDocument {
  /** Series id (24 hex characters), as in series-day documents. */
  _id: string;
  /** Readable series key, e.g. `flights,destination=PHL,origin=LAS`. */
  key: string;
  metric: string;
  tags: TagMap;
  /** The tags as `key=value` strings (see `tagPair`), indexed with the metric for tag filters. */
  tagPairs: string[];
  /** Every field ever recorded for the series. */
  fields: string[];
}

/** Metric registry entry: one document per metric (collection `metrics`). */
export interface MetricDocument {
  /** The metric name. */
  _id: string;
  /** Every field ever recorded for the metric (at most `Limits.fieldsPerMetric`). */
  fields: string[];
  /** Every tag key ever used by the metric's series. */
  tagKeys: string[];
  createdAt: Date;
  /**
   * The optional statistics the metric keeps (sketches, latest readings); set when the
   * metric is created (config `SKETCH_LEVELS`, `LATEST_READINGS`) and changed by
   * `setMetricStatistics`. Absent in entries made before it existed (until `npm run migrate`
   * writes the default): the store's default applies.
   */
  statistics?: StatisticsSettings;
  /**
   * How long each level of the metric's documents is kept, and how far retention has
   * removed them (see `model/retention-policy.ts`); absent: everything is kept forever.
   */
  retention?: StoredRetention;
  /**
   * What the metric's fields measure (see `model/counter.ts`), set by `setMetricKind` or by
   * a receiver's `declareCounters`; absent: `gauge`.
   */
  kind?: MetricKind;
  /** Exact time of the earliest reading recorded (absent before the first write completes). */
  first?: Date;
  /** Exact time of the latest reading recorded. */
  last?: Date;
  /**
   * How many series of the metric `deleteSeries` has deleted (absent: none). With
   * `createdAt` it names the registry's generation (see {@link registryGeneration}):
   * a process's cached series registrations count only within the generation they were
   * made in, so a series deleted by another process is registered again by the next
   * batch that writes it.
   */
  seriesDeletions?: number;
  /**
   * The metric's series, as registration counts them: set to 0 when the metric is
   * created, raised by the series each batch inserts into the registry and lowered by
   * `deleteSeries`; checked against `Store.maxSeriesPerMetric` before a batch registers
   * new series (`checkSeriesLimit`). Absent in entries made before it existed: counted
   * from the registry once, by the first batch that registers a series of the metric.
   */
  seriesCount?: number;
  /**
   * The tag keys (sorted) of automatic rollups an operator dropped: the server does not
   * define them again (`model/rollup-policy.ts`). Absent: none.
   */
  declinedRollups?: string[][];
}

/**
 * The generation of a metric's series registry, `<createdAt ms>.<seriesDeletions>`: it
 * changes when the metric is deleted and created again and when one of its series is
 * deleted, in this process or another (see `Store.seriesCache`).
 */
export function registryGeneration(entry: Pick<MetricDocument, 'createdAt' | 'seriesDeletions'>): string {
  return `${entry.createdAt?.getTime() ?? 0}.${entry.seriesDeletions ?? 0}`;
}

/** A series this process registered: the fields it registered and the metric's registry generation then. */
export interface CachedSeries {
  fields: Set<string>;
  generation: string;
}

/**
 * The claim of a batch sent with a `batchId` (collection `batches`) by the write path
 * before the ingest log, kept for the retention period (a TTL index on `createdAt`): it
 * told a retry from a reuse of the id for other readings. Nothing writes claims any
 * more; `npm run migrate` carries those of a database written before into the ingest
 * log (`storage/migrate-claims.ts`).
 */
export interface BatchDocument {
  /** The client's `batchId`. */
  _id: string;
  /** SHA-256 of the batch's readings (see `batchFingerprint`). */
  fingerprint: string;
  /** Number of readings in the batch. */
  readings: number;
  /** When the server first received the batch; the time of readings sent without one. */
  receivedAt: Date;
  /** When the claim was made; the TTL index removes it `BATCH_RETENTION_HOURS` later. */
  createdAt: Date;
  /** `applying` until every series-day document has applied the batch, then `applied`. */
  state: 'applying' | 'applied';
  appliedAt?: Date;
}

/** The storage layer's handle: the driver objects and the settings of the record path. */
export interface Store {
  client: MongoClient;
  db: Db;
  /** Series-day documents (collection `series_days`, see `documents/series-day.ts`). */
  seriesDays: Collection<SeriesDayDocument>;
  series: Collection<SeriesDocument>;
  metrics: Collection<MetricDocument>;
  /** Claims of batches sent with a `batchId` by the write path before the ingest log (read by `npm run migrate`). */
  batches: Collection<BatchDocument>;
  /**
   * The rollup rebuild grace period, in ms (`ROLLUP_REBUILD_GRACE_MS`): how long a dirty
   * day rests before a rebuild; a batch's rollup writes must land within half of it
   * (see `rollupWriteWindow` in `storage/rollups.ts`).
   */
  rollupGraceMs: number;
  /** Optional statistics given to metrics created from now on (and used for entries without any). */
  defaultStatistics: StatisticsSettings;
  /**
   * Most readings of a series-day document written in the raw form (`RAW_READINGS`, see
   * `SeriesDayDocument.r`): folds and compactions write a document of at most this many
   * readings as its readings and day totals instead of slots and sketches; 0: never.
   */
  rawReadings: number;
  /**
   * Most series one metric may have (`MAX_SERIES_PER_METRIC`): a batch that would
   * register more is refused with TOO_MANY_SERIES before anything is written
   * (`checkSeriesLimit` in storage/registration.ts).
   */
  maxSeriesPerMetric: number;
  /**
   * Most series-day documents a read of minute slots fetches and merges in this process
   * instead of running its pipeline's stages on the database (`MERGE_HERE_DOCUMENTS`, see
   * `mergedHere` in engine/loader.ts); 0: never.
   */
  mergeHereDocuments: number;
  /**
   * Fewest minutes with readings of an hour whose minute slots folds and compactions
   * write packed (`PACKED_MINUTES`, see `PackedMinutes`): arrays per field with the
   * minute's count and first and last times kept once, where each minute's fields share
   * them (as when every reading carries every field); 0: never.
   */
  packedMinutes: number;
  /**
   * Series id -> fields known to be in the series registry, remembered for a short
   * time (`registryCacheTtlMs`) so a steady stream of writes does not re-register the
   * same series with every batch. An entry counts only while its metric's registry
   * generation (read fresh by every batch) is the one it was made in, so a series or
   * metric deleted by another instance is registered again by the next batch that
   * writes it. Entries also expire, so a registry entry removed behind the server's
   * back (a restore, a manual delete) is written again after at most the TTL.
   */
  seriesCache: LRUCache<string, CachedSeries>;
  /**
   * This process's name as a folder (a random UUID): the holder of the fold lease when
   * it folds (`storage/fold.ts`), whether as the background job or for a deletion.
   */
  holder: string;
  /** The views this process's reads hold, pinned in `read_pins` under `holder` (see `storage/read-pins.ts`). */
  pins: ReadPins;
  /**
   * How long the fold lease lasts unless renewed, in ms (`FOLD_LEASE_MS`, default
   * 30,000): a folder that stops is replaced after at most this long.
   */
  foldLeaseMs: number;
  /** Bounds of the unfolded log and this process's last measure of it (see `IngestBounds`). */
  ingest: IngestBounds;
}

/** Collection names, fixed so that `$unionWith` stages can name them. */
export const CollectionName = {
  seriesDays: 'series_days',
  series: 'series',
  metrics: 'metrics',
  batches: 'batches',
  rollups: 'rollups',
  /** Day summaries (`documents/summaries.ts`), written by folds and compactions, voided by deletions. */
  summaries: 'day_summaries',
  /** The day sketches of day summaries, under each summary's `_id` (`storage/summaries.ts`). */
  sketches: 'day_sketches',
} as const;

/** Default time a fold lease lasts unless renewed, in ms (`FOLD_LEASE_MS`). */
export const DEFAULT_FOLD_LEASE_MS = 30_000;

/** Default bound of the unfolded log, in readings (`INGEST_MAX_TAIL_READINGS`). */
export const DEFAULT_MAX_TAIL_READINGS = 200_000;

/** Default bound of the age of the oldest unfolded log entry, in seconds (`INGEST_MAX_TAIL_SECONDS`). */
export const DEFAULT_MAX_TAIL_SECONDS = 60;

/** Default retention of batch claims: 24 hours, in seconds. */
export const DEFAULT_BATCH_RETENTION_SECONDS = 24 * 3600;

/**
 * Creates the indexes the queries and the record path rely on (idempotent), after
 * renaming the collection of series-day documents of earlier versions
 * ({@link renameLegacyDays}):
 * - on `series_days` and on the collection of every defined rollup, the indexes of
 *   {@link ensureDayIndexes} (the unique `{series, date}` index of databases written
 *   before folds is dropped there, and the unique `series_date_f` of earlier versions
 *   made not unique);
 * - the ingest log's indexes (`ensureIngestLogIndexes`), the fold state document, and
 *   `foldedAt` for entries an earlier version left folded without it (`markFoldedEntries`);
 * - `day_summaries {metric, date, f}`: a query's summaries of a metric's days; `{date,
 *   f}`: the summaries a compaction replaced, deleted by day and number; the same two on
 *   `day_sketches`, read and deleted with them;
 * - `series {metric, key}`: listing a metric's series in key order.
 * - `series {metric, tagPairs}`: finding the series of a tag filter on any tag key.
 * - `batches {createdAt}` TTL: batch claims of the write path before the ingest log
 *   expire `batchRetentionSeconds` after they were made (MongoDB manual, "TTL Indexes"; a
 *   changed retention is applied with `collMod`), until `npm run migrate` carries them
 *   into the ingest log (`storage/migrate-claims.ts`).
 */
export async function ensureIndexes(db: Db, batchRetentionSeconds = DEFAULT_BATCH_RETENTION_SECONDS): Promise<void> {
  await renameLegacyDays(db);
  await ensureDayIndexes(db, CollectionName.seriesDays);
  for (const name of [CollectionName.summaries, CollectionName.sketches]) {
    await db.collection(name).createIndexes([
      { key: { metric: 1, date: 1, f: 1 }, name: 'metric_date_f' },
      { key: { date: 1, f: 1 }, name: 'date_f' },
    ]);
  }
  // Rollup collections made before folds carry the old unique index too, which would
  // refuse the second rollup part of a group and day (and a fold skips a part refused
  // with a duplicate key as already written).
  const rollups = await db
    .collection<{ collection: string }>(CollectionName.rollups)
    .find({}, { projection: { _id: 0, collection: 1 } })
    .toArray();
  for (const { collection } of rollups) await ensureDayIndexes(db, collection);
  await ensureIngestLogIndexes(db, batchRetentionSeconds);
  await ensureFoldState(db, CollectionName.seriesDays);
  await markFoldedEntries(db);
  // A stopped process's read pin is ignored once older than the compaction grace period
  // (storage/read-pins.ts) and removed an hour after its last write.
  await readPins(db).createIndexes([{ key: { at: 1 }, name: 'at_ttl', expireAfterSeconds: 3600 }]);
  await db.collection(CollectionName.series).createIndexes([
    { key: { metric: 1, key: 1 }, name: 'metric_key' },
    { key: { metric: 1, tagPairs: 1 }, name: 'metric_tagPairs' },
  ]);
  const ttl = { key: { createdAt: 1 }, name: 'createdAt_ttl', expireAfterSeconds: batchRetentionSeconds };
  try {
    await db.collection(CollectionName.batches).createIndexes([ttl]);
  } catch (error) {
    // 85 IndexOptionsConflict: the index exists with another retention.
    if (!(error instanceof MongoServerError && error.code === 85)) throw error;
    await db.command({ collMod: CollectionName.batches, index: { name: ttl.name, expireAfterSeconds: batchRetentionSeconds } });
  }
}

/** The name versions before this one gave the collection of series-day documents. */
const LEGACY_DAYS = 'buckets';

/**
 * Renames the collection of series-day documents of an earlier version, `buckets`, to
 * `series_days` ("bucket" names the time buckets of answers), with its documents and
 * indexes: `renameCollection` within the database, a metadata change on MongoDB (it needs
 * the `renameCollectionSameDB` action, which the `readWrite` role has) and on the
 * embedded server. Nothing to do when `buckets` does not exist; an empty `buckets` beside
 * `series_days` is dropped. Two instances starting at once: one renames, the other finds
 * the rename done (a refused rename is checked again).
 * @throws Error when both collections hold documents: a server of an earlier version
 * wrote to `buckets` after the rename (servers of both versions must not run on one
 * database at once; see docs/operations.md, "Upgrading").
 */
async function renameLegacyDays(db: Db): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const names = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((collection) => collection.name));
    if (!names.has(LEGACY_DAYS)) return;
    if (names.has(CollectionName.seriesDays)) {
      if ((await db.collection(LEGACY_DAYS).countDocuments({}, { limit: 1 })) === 0) {
        await db.collection(LEGACY_DAYS).drop();
        return;
      }
      throw new Error(
        `Both "${LEGACY_DAYS}" and "${CollectionName.seriesDays}" hold series-day documents in database ${db.databaseName}: a server of a version before the rename wrote to "${LEGACY_DAYS}" after it. Stop every server of that version, then move its documents into "${CollectionName.seriesDays}" (docs/operations.md, "Upgrading").`,
      );
    }
    try {
      await db.collection(LEGACY_DAYS).rename(CollectionName.seriesDays);
      return;
    } catch (error) {
      // Renamed meanwhile by another instance (the source is gone, or the target exists): look again.
      if (attempt > 0 || !(error instanceof MongoServerError)) throw error;
    }
  }
}

/** The name of the parts index `{series, date, f}` (see {@link ensureDayIndexes}). */
const PARTS_INDEX = 'series_date_f';

/** The key of the unique one-document-per-day index of the write path before folds, as JSON. */
const PRE_FOLD_KEY = JSON.stringify({ series: 1, date: 1 });

/**
 * Creates the indexes of a collection of series-day documents or of a rollup's
 * group-day documents (idempotent), and changes or drops those of earlier versions that
 * parts would break or that cost every insert for nothing:
 * - `{series, date, f}` (`series_date_f`): every query scoped to series (or rollup
 *   groups), in order of day. Not unique: a part's `_id` (`<series>:<day ms>:<f>`,
 *   `documents/encode.ts`) already makes a second part of the same series, day and fold
 *   fail with a duplicate key, and a unique index costs the embedded server a look-up per
 *   insert (measured: a fold of the demo's 20,000 flights 13% faster without it,
 *   docs/measurements/2026-11-27.md, "Fewer checks per part"). The unique one of earlier versions
 *   is made not unique first ({@link makeNotUnique});
 * - `{metric, date, last}` (`metric_date_last`): queries over a whole metric, and of one
 *   day those that read only the documents reaching into their range
 *   (`documents/selection.ts`); it replaces `{metric, date}` (`metric_date`) of earlier
 *   versions, dropped once it exists;
 * - `{metric, tagPairs, date, last}` (`metric_tagPairs_date_last`, multikey on `tagPairs`
 *   only): queries filtered by tags, one equality on a `key=value` string plus the day
 *   range, and of one day those that read only the documents reaching into their range;
 *   it replaces `{metric, tagPairs, date}` (`metric_tagPairs_date`) of earlier versions,
 *   dropped once it exists;
 * - `{metric, date, tagPairs}` (`metric_date_tagPairs`, multikey): queries of one day
 *   filtered by several values of a tag, one equality on the day and an `$in` of
 *   `key=value` strings;
 * - `{date, f}`: what the folder reads and deletes by day and fold number, over every
 *   metric: a compaction's parts, the parts it replaced (without it, each compaction and
 *   each clean-up read the whole collection, so they slowed as it grew);
 * - dropped, after the others exist (so a collection sharded on `{series, date}` keeps an
 *   index of its shard key throughout): every unique index on exactly `{series: 1, date:
 *   1}` (named `series_date` by the write path before folds, which kept one document per
 *   series and day), found by its key whatever its name, since it refuses the second part
 *   of a series-day.
 * @throws driver errors (the caller's start-up fails; every step is safe to repeat).
 */
export async function ensureDayIndexes(db: Db, collection: string): Promise<void> {
  const before = await indexesOf(db, collection);
  if (before.some((index) => index.name === PARTS_INDEX && index.unique === true)) await makeNotUnique(db, collection, PARTS_INDEX);
  await db.collection(collection).createIndexes([
    { key: { series: 1, date: 1, f: 1 }, name: PARTS_INDEX },
    { key: { metric: 1, date: 1, last: 1 }, name: 'metric_date_last' },
    { key: { metric: 1, tagPairs: 1, date: 1, last: 1 }, name: 'metric_tagPairs_date_last' },
    { key: { metric: 1, date: 1, tagPairs: 1 }, name: 'metric_date_tagPairs' },
    { key: { date: 1, f: 1 }, name: 'date_f' },
  ]);
  // The indexes of earlier versions that these serve wholly: `{metric, date}` and `{metric, tagPairs, date}`.
  for (const replaced of ['metric_date', 'metric_tagPairs_date']) {
    if (before.some((index) => index.name === replaced)) await dropIndexIfPresent(db, collection, replaced);
  }
  for (const index of before) {
    if (index.name !== undefined && index.unique === true && JSON.stringify(index.key) === PRE_FOLD_KEY) {
      await dropIndexIfPresent(db, collection, index.name);
    }
  }
}

/**
 * Makes the unique index `name` of `collection` not unique: in place with `collMod
 * {index: {name, unique: false}}` (MongoDB 6.0 and later, "collMod": no rebuild, and the
 * index keeps serving queries and a shard key meanwhile); when the index is still unique
 * after that (a server without the conversion: the embedded one answers ok and changes
 * nothing), by dropping it, so the caller creates it again without `unique` (reading
 * every document once: on the embedded server 20,000 small documents took 2.3 s,
 * docs/operations.md, "Upgrading"). Safe for two instances at once on MongoDB: the
 * conversion of an index already converted changes nothing.
 * @throws driver errors of listing or dropping indexes.
 */
async function makeNotUnique(db: Db, collection: string, name: string): Promise<void> {
  try {
    await db.command({ collMod: collection, index: { name, unique: false } });
  } catch {
    // Refused (a server without the conversion): dropped below instead.
  }
  const after = await indexesOf(db, collection);
  if (after.some((index) => index.name === name && index.unique === true)) await dropIndexIfPresent(db, collection, name);
}

/** What an acknowledged write must have reached before the server answers (MongoDB manual, "Write Concern"). */
export interface WriteConcernSetting {
  /** `majority` (default; on a standalone server the same as 1) or a number of members. */
  w: W;
  /** Wait for the write to reach the on-disk journal (default true). */
  journal: boolean;
}

/** Settings of a {@link Store} (see its fields); each has a default. */
export interface StoreSettings {
  /** Optional statistics of new metrics (default {@link DEFAULT_STATISTICS}). */
  defaultStatistics?: StatisticsSettings;
  /** How long registered series are remembered, in ms (default 10,000; 0: not at all). */
  registryCacheTtlMs?: number;
  /** The rollup rebuild grace period, in ms (default 60,000; see `Store.rollupGraceMs`). */
  rollupGraceMs?: number;
  /** Bounds of the unfolded log (default 200,000 readings and 60 s; see `Store.ingest`). */
  ingest?: { maxTailReadings?: number; maxTailSeconds?: number };
  /** How long the fold lease lasts, in ms (default 30,000; see `Store.foldLeaseMs`). */
  foldLeaseMs?: number;
  /** Most readings of a document written in the raw form (default {@link DEFAULT_RAW_READINGS}; see `Store.rawReadings`). */
  rawReadings?: number;
  /** Fewest minutes of an hour written packed (default {@link DEFAULT_PACKED_MINUTES}; see `Store.packedMinutes`). */
  packedMinutes?: number;
  /** Most series of one metric (default {@link DEFAULT_MAX_SERIES_PER_METRIC}; see `Store.maxSeriesPerMetric`). */
  maxSeriesPerMetric?: number;
  /** Most documents a read merges in this process (default {@link DEFAULT_MERGE_HERE_DOCUMENTS}; see `Store.mergeHereDocuments`). */
  mergeHereDocuments?: number;
}

/**
 * Default of `Store.mergeHereDocuments`: a MINUTE chart of one airport's three hours
 * selects about a hundred route-day documents, of five airports about 550.
 */
export const DEFAULT_MERGE_HERE_DOCUMENTS = 1_000;

/**
 * The {@link Store} of database `db` of the connected `client`, with `settings` (their
 * defaults where absent) and a new `holder`. Makes no request and creates no index:
 * {@link openStore} connects and creates the indexes first.
 */
export function storeOf(client: MongoClient, db: Db, settings: StoreSettings = {}): Store {
  const holder = randomUUID();
  return {
    client,
    db,
    seriesDays: db.collection<SeriesDayDocument>(CollectionName.seriesDays),
    series: db.collection<SeriesDocument>(CollectionName.series),
    metrics: db.collection<MetricDocument>(CollectionName.metrics),
    batches: db.collection<BatchDocument>(CollectionName.batches),
    seriesCache: new LRUCache({ max: 200_000, ttl: Math.max(1, settings.registryCacheTtlMs ?? 10_000) }),
    holder,
    pins: new ReadPins(holder),
    foldLeaseMs: settings.foldLeaseMs ?? DEFAULT_FOLD_LEASE_MS,
    ingest: {
      maxTailReadings: settings.ingest?.maxTailReadings ?? DEFAULT_MAX_TAIL_READINGS,
      maxTailSeconds: settings.ingest?.maxTailSeconds ?? DEFAULT_MAX_TAIL_SECONDS,
      foldRate: 20_000,
    },
    rollupGraceMs: settings.rollupGraceMs ?? 60_000,
    defaultStatistics: settings.defaultStatistics ?? DEFAULT_STATISTICS,
    rawReadings: settings.rawReadings ?? DEFAULT_RAW_READINGS,
    packedMinutes: settings.packedMinutes ?? DEFAULT_PACKED_MINUTES,
    maxSeriesPerMetric: settings.maxSeriesPerMetric ?? DEFAULT_MAX_SERIES_PER_METRIC,
    mergeHereDocuments: settings.mergeHereDocuments ?? DEFAULT_MERGE_HERE_DOCUMENTS,
  };
}

/**
 * Connects to `uri`, checks the server answers, creates the indexes and returns a
 * {@link Store} on database `dbName` ({@link storeOf}). Every write waits for
 * `writeConcern` (default `{w: 'majority', journal: true}`).
 * @throws Error "Cannot reach the database at …" when the server does not answer
 * within `serverSelectionTimeoutMS` (default 10 s).
 */
export async function openStore(
  uri: string,
  dbName: string,
  options: StoreSettings & {
    client?: MongoClientOptions;
    writeConcern?: WriteConcernSetting;
    /** How long batch claims are kept, in seconds (default 24 hours). */
    batchRetentionSeconds?: number;
  } = {},
): Promise<Store> {
  const writeConcern = options.writeConcern ?? { w: 'majority', journal: true };
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: 10_000,
    writeConcern: { w: writeConcern.w, journal: writeConcern.journal },
    ...options.client,
  });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } catch (error) {
    await client.close();
    throw new Error(`Cannot reach the database at ${redact(uri)}: ${(error as Error).message}`);
  }
  const db = client.db(dbName);
  await ensureIndexes(db, options.batchRetentionSeconds);
  return storeOf(client, db, options);
}

/** Hides the password of a connection string, for messages and logs. */
export function redact(uri: string): string {
  return uri.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}

/** The forms in which folds and compactions of `store` write their documents (`Store.rawReadings`, `Store.packedMinutes`). */
export const documentForms = (store: Pick<Store, 'rawReadings' | 'packedMinutes'>): DocumentForms => ({
  rawReadings: store.rawReadings,
  packedMinutes: store.packedMinutes,
});
