/**
 * A database as the write path before the ingest log wrote it: what
 * test/integration/upgrade.test.ts upgrades. That write path is `recordBatch` of
 * src/engine/record-batch.ts at commit bdb47aa (the parent of "Acknowledge a batch with one
 * journaled insert into the ingest log"), with src/storage/registration.ts, batches.ts,
 * rollups.ts and store.ts of that commit. Per batch it:
 * 1. reads the metrics' registry entries and rollups, plans the batch (`planContents`);
 * 2. with a `batchId`, claims it in `batches` with one upsert (`$setOnInsert` of
 *    `{fingerprint, readings, receivedAt, createdAt, state: 'applying'}`), answering a
 *    retry of an applied claim at once and refusing a reuse (BATCH_ID_REUSED);
 * 3. registers metrics and series, inserts skeletons of `preallocated` documents, and
 *    applies one upsert per series-day document on `{series, date}` with the batch's
 *    mark (`dayOperations`: refused by a document carrying the mark, `$push` of the mark
 *    with `$slice: -64` otherwise), then widens the metrics' first/last times;
 * 4. writes the rollups (`applyRollupWrites`: one upsert per group-day, no mark) or marks
 *    their days dirty (`planRollups`);
 * 5. sets the claim `applied` with `appliedAt` (then `trimLateDetail`, which writes
 *    nothing without retention horizons, and is left out here).
 * The pure planners it used (`planWrites`, now `planContents` of
 * src/documents/from-readings.ts, `planRollups`, `batchFingerprint`, `batchMark`) were
 * unchanged from that commit until they moved into src/documents/ and were renamed
 * (`git diff bdb47aa 5e534e9 -- src/record/plan.ts src/record/rollup-plan.ts src/model`
 * adds functions only; since, rollups keep quarter hours, which this file takes out of
 * the old path's rollup writes), so this file calls them and repeats only the driver calls of the
 * storage code that was removed; `dayOperations` and `applyRollupWrites`, which the
 * server no longer has, are kept at the end of this file as they were.
 *
 * Checked against the old code itself once: the commit's `src` was extracted (outside
 * the repository, beside a link to its `node_modules`), the same batches were written
 * with its `recordBatch` into one database and with this file into another on the same
 * embedded server (two metrics, one `preallocated`; a rollup over a tag; batch ids and a
 * batch without one; a retry arriving later, a reuse of an id for other readings, and a
 * reading without a time), the answers were the same, and every document of `buckets`
 * and of the rollup collection (less its ObjectId `_id`) was byte for byte the same BSON,
 * every document of `batches`, `series`, `metrics` and `rollups` the same Extended JSON
 * (less the times taken from the clock: `createdAt` of rollups, `appliedAt`, the `at` of
 * dirty days), and so were the indexes. A batch stopped in the middle
 * (`stopAfterDocuments`) is the same calls cut short, as a crash of the old server left
 * it. test/integration/upgrade.test.ts compares what this file writes for two small
 * batches with test/fixtures/legacy-documents.json, the old code's own documents for
 * them (written then by the old code through {@link dumpLegacyDatabase}), so a later
 * change of the planners shows.
 */
import { type AnyBulkWriteOperation, BSON, Double, type Db, type Filter, MongoClient, type UpdateFilter } from 'mongodb';
import { ErrorCode, InputError } from '../../src/errors.ts';
import { BATCH_MARKS_KEPT, batchFingerprint, batchMark } from '../../src/model/batch.ts';
import type { Stats, TimedValue } from '../../src/model/stats.ts';
import type { TagMap } from '../../src/model/series.ts';
import { rollupCollectionName, type RollupDefinition } from '../../src/model/rollup.ts';
import type { StatisticsSettings } from '../../src/model/statistics-settings.ts';
import { withServerTime, type Reading } from '../../src/record/validate.ts';
import { bulkWriteDuplicates, checkMetricLimits, duplicateKeyIndexes, registerBatch } from '../../src/storage/registration.ts';
import { findRollups, markDirty, ROLLUPS_COLLECTION, rollupWriteWindow } from '../../src/storage/rollups.ts';
import { isTimeLimitError } from '../../src/storage/failures.ts';
import { CollectionName, DEFAULT_BATCH_RETENTION_SECONDS, storeOf, type MetricDocument, type Store } from '../../src/storage/store.ts';
import { type SeriesDayDocument, DOCUMENT_VERSION, sketchPath } from '../../src/documents/series-day.ts';
import { batchMetrics, planContents } from '../../src/documents/from-readings.ts';
import type { DayContent, ContentPlan } from '../../src/documents/content.ts';
import { planRollups } from '../../src/documents/rollup.ts';

/**
 * The collection of series-day documents as the write path before the ingest log named
 * it; this version renames it `series_days` at start-up (`ensureIndexes`).
 */
export const LEGACY_DAYS = 'buckets';

/** The old path's collection of series-day documents in `store`'s database. */
export const legacyDays = (store: Pick<Store, 'db'>) => store.db.collection<SeriesDayDocument>(LEGACY_DAYS);

/** The indexes the write path before the ingest log created on a series-day or rollup collection. */
async function legacyDayIndexes(db: Db, collection: string): Promise<void> {
  await db.collection(collection).createIndexes([
    { key: { series: 1, date: 1 }, name: 'series_date', unique: true },
    { key: { metric: 1, date: 1 }, name: 'metric_date' },
    { key: { metric: 1, tagPairs: 1, date: 1 }, name: 'metric_tagPairs_date' },
  ]);
}

/**
 * A {@link Store} on database `dbName` with the indexes the old `openStore` created
 * (`buckets {series, date}` unique, `{metric, date}`, `{metric, tagPairs, date}`; `series`
 * `{metric, key}`, `{metric, tagPairs}`; the TTL index of `batches`), and none of the
 * ingest log's: what the old server left (`storeOf`, the log's bounds off: nothing here
 * appends to the log or folds).
 */
export async function openLegacyStore(uri: string, dbName: string): Promise<Store> {
  const client = new MongoClient(uri, { writeConcern: { w: 'majority', journal: true } });
  await client.connect();
  const db = client.db(dbName);
  await legacyDayIndexes(db, LEGACY_DAYS);
  await db.collection(CollectionName.series).createIndexes([
    { key: { metric: 1, key: 1 }, name: 'metric_key' },
    { key: { metric: 1, tagPairs: 1 }, name: 'metric_tagPairs' },
  ]);
  await db
    .collection(CollectionName.batches)
    .createIndexes([{ key: { createdAt: 1 }, name: 'createdAt_ttl', expireAfterSeconds: DEFAULT_BATCH_RETENTION_SECONDS }]);
  return storeOf(client, db, {
    defaultStatistics: LEGACY_DEFAULT_STATISTICS,
    ingest: { maxTailReadings: 0, maxTailSeconds: 0 },
  });
}

/**
 * The optional statistics the old path gave new metrics: sketches of days and hours (no
 * quarter hours yet), 50 latest readings.
 */
export const LEGACY_DEFAULT_STATISTICS: StatisticsSettings = { sketchLevels: ['day', 'hour'], sketchFields: null, latestReadings: 50 };

/**
 * Defines a rollup as the old `createRollup` followed by `backfillRollup` on a metric
 * without documents left it: the definition `ready` with no dirty day, and its
 * collection with the old indexes (`{series, date}` unique).
 */
export async function defineLegacyRollup(store: Store, metric: string, name: string, tagKeys: string[]): Promise<RollupDefinition> {
  const sorted = [...tagKeys].sort();
  const rollup: RollupDefinition = {
    _id: `${metric}/${name}`,
    metric,
    name,
    tagKeys: sorted,
    collection: rollupCollectionName(metric, sorted),
    state: 'ready',
    createdAt: new Date(),
    dirty: {},
  };
  await legacyDayIndexes(store.db, rollup.collection);
  await store.db.collection<RollupDefinition>(ROLLUPS_COLLECTION).insertOne(rollup);
  return rollup;
}

/** How the old path laid out a metric's series-day documents: created by their first reading, or as zeroed skeletons first. */
export type LegacyLayout = 'sparse' | 'preallocated';

/** What {@link writeLegacyBatch} answered, as the old `recordBatch` did. */
export interface LegacyOutcome {
  applied: number;
  alreadyApplied: number;
}

/**
 * Writes a validated batch as the old `recordBatch` did (see the file comment).
 * @param options.receivedAt the arrival time (ms since epoch, UTC), as validation set it.
 * @param options.layout the layout the old path gave a metric this batch creates
 *   (`sparse` by default; `preallocated` inserted zeroed skeletons of its documents first).
 * @param options.stopAfterDocuments stop as a crash would after this many series-day
 * documents were written (in plan order): the claim stays `applying`, no rollup is written
 * and no metric span widened (the old path did those after every document).
 * @throws InputError BATCH_ID_REUSED as the old path did.
 */
export async function writeLegacyBatch(
  store: Store,
  readings: readonly Reading[],
  options: { batchId?: string; receivedAt: number; stopAfterDocuments?: number; layout?: LegacyLayout },
): Promise<LegacyOutcome> {
  const metrics = batchMetrics(readings);
  const rollupDeadline = Date.now() + rollupWriteWindow(store.rollupGraceMs);
  const [registered, rollups] = await Promise.all([
    checkMetricLimits(store, metrics),
    findRollups(
      store,
      metrics.map((metric) => metric.name),
    ),
  ]);
  const settingsOf = (metric: string) => registered.get(metric)?.statistics ?? store.defaultStatistics;
  let plan = planContents(readings, settingsOf);
  let retry = false;
  if (options.batchId !== undefined) {
    const fingerprint = batchFingerprint(readings.map((reading) => ({ ...reading, time: reading.timeFromServer ? null : reading.time })));
    const now = new Date(options.receivedAt);
    const before = await store.batches.findOneAndUpdate(
      { _id: options.batchId },
      { $setOnInsert: { fingerprint, readings: plan.readings, receivedAt: now, createdAt: now, state: 'applying' } },
      { upsert: true, returnDocument: 'before' },
    );
    if (before !== null) {
      if (before.fingerprint !== fingerprint) {
        throw new InputError(
          ErrorCode.BATCH_ID_REUSED,
          `batchId "${options.batchId}" was used on ${before.receivedAt.toISOString()} for ${before.readings} other readings; a retry must send exactly the same readings, new readings need a new batchId`,
          'batchId',
        );
      }
      if (before.state === 'applied') return { applied: 0, alreadyApplied: plan.readings };
      retry = true;
      if (before.receivedAt.getTime() !== options.receivedAt && readings.some((reading) => reading.timeFromServer)) {
        plan = planContents(withServerTime(readings, before.receivedAt.getTime()), settingsOf);
      }
    }
  }
  const rollupPlan = planRollups(plan, rollups, { retry });
  // The old path's rollups kept day and hour slots only: no quarter hours, of statistics or sketches.
  for (const { writes } of rollupPlan.writes) {
    for (const write of writes) {
      for (const path of [...write.slots.keys()]) if (path.includes('.quarters.')) write.slots.delete(path);
      write.quarters.clear();
    }
  }
  if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
  const mark = options.batchId === undefined ? undefined : batchMark(options.batchId);

  // The old applyWritePlan: registries, skeletons, one upsert per series-day document, spans.
  const outcome: LegacyOutcome = { applied: 0, alreadyApplied: 0 };
  if (plan.days.length === 0) return outcome;
  await registerBatch(store, plan, registered);
  // The old registry entry kept its layout, set when the metric was created.
  const names = plan.metrics.map((m) => m.name);
  await store.metrics.updateMany({ _id: { $in: names }, layout: { $exists: false } }, { $set: { layout: options.layout ?? 'sparse' } });
  const entries = new Map(
    (await store.metrics.find({ _id: { $in: names } }).toArray()).map((m) => [m._id, m as MetricDocument & { layout?: LegacyLayout }]),
  );
  const operations = dayOperations(plan, mark).slice(0, options.stopAfterDocuments);
  // Every skeleton before the first update, as the old path did, even when it stops early.
  const preallocated = plan.days.filter((write) => entries.get(write.metric)?.layout === 'preallocated');
  if (preallocated.length > 0) await insertSkeletons(store, preallocated, entries);
  const failed =
    operations.length === 0
      ? []
      : await bulkWriteDuplicates(
          legacyDays(store),
          operations.map((operation) => ({ updateOne: { filter: operation.filter, update: operation.upsert, upsert: true } })),
        );
  const retried = new Set(failed);
  operations.forEach(({ write }, index) => {
    if (!retried.has(index)) outcome.applied += write.readings;
  });
  for (const index of failed) {
    const { write, filter, update } = operations[index]!;
    if ((await legacyDays(store).updateOne(filter, update)).matchedCount === 1) outcome.applied += write.readings;
    else outcome.alreadyApplied += write.readings;
  }
  if (options.stopAfterDocuments !== undefined) return outcome;
  for (const write of plan.metrics) {
    const entry = entries.get(write.name);
    const first = entry?.first?.getTime();
    const last = entry?.last?.getTime();
    if (first !== undefined && last !== undefined && first <= write.first && last >= write.last) continue;
    await store.metrics.updateOne({ _id: write.name }, { $min: { first: new Date(write.first) }, $max: { last: new Date(write.last) } });
  }

  if (rollupPlan.dirty.length > 0) await markDirty(store, rollupPlan.dirty);
  for (const { rollup, writes } of rollupPlan.writes) {
    if ((await applyRollupWrites(store, rollup, writes, rollupDeadline)) === 'late') {
      await markDirty(store, [{ rollup, days: [...new Set(writes.map((write) => write.date.getTime()))] }]);
    }
  }
  if (options.batchId !== undefined) {
    await store.batches.updateOne({ _id: options.batchId }, { $set: { state: 'applied', appliedAt: new Date() } });
  }
  return outcome;
}

/**
 * The old `insertSkeletons` of the `preallocated` layout: zeroed skeletons (`daySkeleton`)
 * for the series-day documents that do not exist yet, duplicates skipped.
 */
async function insertSkeletons(store: Store, writes: readonly DayContent[], metrics: ReadonlyMap<string, MetricDocument>): Promise<void> {
  const days = [...new Set(writes.map((write) => write.date.getTime()))].map((ms) => new Date(ms));
  const existing = await legacyDays(store)
    .find(
      { series: { $in: [...new Set(writes.map((write) => write.series))] }, date: { $in: days } },
      { projection: { _id: 0, series: 1, date: 1 } },
    )
    .toArray();
  const found = new Set(existing.map((doc) => `${doc.series}:${doc.date.getTime()}`));
  const missing = writes.filter((write) => !found.has(`${write.series}:${write.date.getTime()}`));
  if (missing.length === 0) return;
  const skeletons = missing.map((write) =>
    daySkeleton({ series: write.series, metric: write.metric, tags: write.tags, tagPairs: write.tagPairs, date: write.date }, [
      ...new Set([...(metrics.get(write.metric)?.fields ?? []), ...write.fields]),
    ]),
  );
  try {
    await legacyDays(store).insertMany(skeletons as unknown as SeriesDayDocument[], { ordered: false });
  } catch (error) {
    duplicateKeyIndexes(error);
  }
}

/** The registry entry of the fixture's metric, as a first batch of the old path left it (less `statistics`, the store's default). */
export const LEGACY_FIXTURE_METRIC = {
  _id: 'cpu',
  fields: ['u'],
  tagKeys: ['dc', 'host'],
  layout: 'sparse' as const,
  createdAt: new Date(0),
};

const FIXTURE_DAY = Date.UTC(2024, 4, 6);
const fixtureReading = (host: string, dc: string, time: number, fields: Record<string, number>) => ({
  metric: 'cpu',
  tags: [
    { key: 'host', value: host },
    { key: 'dc', value: dc },
  ],
  time: new Date(time),
  fields: Object.entries(fields).map(([name, value]) => ({ name, value })),
});

/**
 * The batches of test/fixtures/legacy-documents.json, written after
 * {@link LEGACY_FIXTURE_METRIC} and a rollup `cpu/bydc` over `dc` (defined and
 * backfilled on no documents): two batches with ids into the same series-day documents
 * over two days, two fields, and two readings in one minute.
 */
export const LEGACY_FIXTURE_BATCHES = [
  {
    batchId: 'golden-1',
    receivedAt: FIXTURE_DAY + 2 * 86_400_000,
    readings: [
      fixtureReading('h1', 'x', FIXTURE_DAY + 3_600_000 + 5_000, { u: 1.5, s: 2 }),
      fixtureReading('h1', 'x', FIXTURE_DAY + 3_600_000 + 35_000, { u: 0.25 }),
      fixtureReading('h2', 'x', FIXTURE_DAY + 3_600_000 + 65_000, { u: 2.25 }),
      fixtureReading('h1', 'x', FIXTURE_DAY + 86_400_000 + 7_200_000, { u: -3, s: 4 }),
      fixtureReading('h3', 'y', FIXTURE_DAY + 12 * 3_600_000, { u: 10 }),
    ],
  },
  {
    batchId: 'golden-2',
    receivedAt: FIXTURE_DAY + 2 * 86_400_000 + 1_000,
    readings: [
      fixtureReading('h1', 'x', FIXTURE_DAY + 23 * 3_600_000 + 59 * 60_000, { u: 7, s: 1 }),
      fixtureReading('h3', 'y', FIXTURE_DAY + 12 * 3_600_000 + 1_000, { u: -0.5 }),
    ],
  },
];

/** One stored document of {@link dumpLegacyDatabase}. */
export interface DumpedDocument {
  /** `<series>:<date ms>` for series-day and rollup documents, else the `_id`. */
  key: string;
  /** Series-day and rollup documents: the exact BSON bytes less the `_id` element (an ObjectId), base64. */
  bson?: string;
  /** The document as canonical Extended JSON (types kept: `$numberDouble`, `$date`), clock times set to 0. */
  document: unknown;
}

/** The document `raw` without its `_id` element, every other byte as it was. */
function withoutId(raw: Buffer): Buffer {
  const elements = [...BSON.onDemand.parseToElements(raw)];
  const id = elements.find(([, nameOffset, nameLength]) => raw.toString('utf8', nameOffset, nameOffset + nameLength) === '_id');
  if (id === undefined) return raw;
  const [, nameOffset, , valueOffset, valueLength] = id;
  const bytes = Buffer.concat([raw.subarray(0, nameOffset - 1), raw.subarray(valueOffset + valueLength)]);
  bytes.writeInt32LE(bytes.length, 0);
  return bytes;
}

/**
 * Every document of `buckets`, the rollup collections, `batches`, `series`, `metrics`
 * and `rollups` of `db`, by collection, sorted by key: what the fixture holds. Times read
 * from the clock when written (`createdAt` of rollups, `appliedAt` of claims, the `at` of
 * dirty days) are set to 0.
 */
export async function dumpLegacyDatabase(db: Db): Promise<Record<string, DumpedDocument[]>> {
  const names = (await db.listCollections().toArray()).map((collection) => collection.name).sort();
  const dump: Record<string, DumpedDocument[]> = {};
  for (const name of names) {
    const day = name === LEGACY_DAYS || name.startsWith('rollup_');
    if (!day && !['batches', 'series', 'metrics', 'rollups'].includes(name)) continue;
    const raws = (await db.collection(name).find({}, { raw: true }).toArray()) as unknown as Buffer[];
    const docs = raws.map((raw): DumpedDocument => {
      const doc = BSON.deserialize(raw);
      if (day) {
        delete doc._id;
        return { key: `${doc.series}:${doc.date.getTime()}`, bson: withoutId(Buffer.from(raw)).toString('base64'), document: toEjson(doc) };
      }
      if (name === 'rollups') doc.createdAt = new Date(0);
      // The series count is kept by the registration this writer shares with the current
      // code (`registerBatch`); the old code had none.
      if (name === 'metrics') delete doc.seriesCount;
      if ('appliedAt' in doc) doc.appliedAt = new Date(0);
      for (const mark of Object.values((doc.dirty ?? {}) as Record<string, { at?: Date }>)) if (mark.at) mark.at = new Date(0);
      return { key: String(doc._id), document: toEjson(doc) };
    });
    dump[name.startsWith('rollup_') ? 'rollup' : name] = docs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
  return dump;
}

const toEjson = (doc: unknown): unknown => JSON.parse(BSON.EJSON.stringify(doc, { relaxed: false }));

// The old write path's pure update builders and its `preallocated` skeletons, as they
// were when that path was removed from src/ (no server writes either any more): what
// this file needs to write a database as that path did.

/**
 * The filter that selects a {@link DayContent}'s document: its series and day, and, for a
 * batch with an id, only while the document does not carry the batch's mark yet
 * (`batches: {$ne: mark}`). A document that already applied the batch then matches
 * nothing: an upsert of it fails on the unique `{series, date}` index (error 11000) and
 * a plain update matches 0 documents, which is how a retry is recognised.
 */
function dayFilter(write: DayContent, mark?: string): Filter<SeriesDayDocument> {
  return mark === undefined
    ? { series: write.series, date: write.date }
    : { series: write.series, date: write.date, batches: { $ne: mark } };
}

/** A first/last pair as stored: `{t: date, v: double}` (the double keeps a pre-allocated pair's size). */
const storedPair = (pair: TimedValue) => ({ t: new Date(pair.t), v: new Double(pair.v) });

/**
 * The single atomic update that applies a {@link DayContent} to its document, at the day,
 * hour and minute levels at once:
 * - `$inc` of count, sum and sum of squares, `$min`/`$max` of min, max and the
 *   document's first/last reading time; numbers as BSON doubles so a pre-allocated slot
 *   keeps its size; `$inc` of the document's number of readings;
 * - `$min` of each slot's first `{t, v}` pair and `$max` of its last: BSON compares
 *   embedded documents field by field ("Comparison/Sort Order", MongoDB manual), so the
 *   earliest and the latest reading win, ties going to the smaller and the larger value;
 * - `$inc` of each sketched slot's bins (`q.<slot path>.<bin key>`, integer counts), and
 *   of the quarter-hour sketches' (`q.hours.7.quarters.2.delay.<bin key>`);
 * - `$push` of the latest readings with `$sort` by time and `$slice` to the metric's
 *   `latestReadings`, so the list holds the day's newest readings whatever order they
 *   arrive in.
 * With `upsert`, `$setOnInsert` fills the identity and the layout version of a document
 * created by this write (`series` and `date` come from the filter). With a batch `mark`,
 * the same update appends the mark to the document's `batches` list, keeping the last
 * `BATCH_MARKS_KEPT` (`$push` with `$slice`), so applying the batch and remembering it
 * are one atomic write. A counter slot's `inc` is not written: `$inc` cannot add the
 * delta between the stored readings and a batch's (rollups, the update's users, keep no
 * counter increases).
 */
export function dayUpdate(write: DayContent, upsert: boolean, mark?: string): UpdateFilter<SeriesDayDocument> {
  const inc: Record<string, Double | number> = {};
  const min: Record<string, unknown> = { first: new Date(write.first) };
  const max: Record<string, unknown> = { last: new Date(write.last) };
  for (const [path, { stats, first, last, sketch }] of write.slots) {
    inc[`${path}.n`] = new Double(stats.n);
    inc[`${path}.sum`] = new Double(stats.sum);
    inc[`${path}.sq`] = new Double(stats.sq);
    min[`${path}.min`] = new Double(stats.min);
    max[`${path}.max`] = new Double(stats.max);
    min[`${path}.first`] = storedPair(first);
    max[`${path}.last`] = storedPair(last);
    if (sketch !== null) for (const [key, count] of sketch) inc[`${sketchPath(path)}.${key}`] = count;
  }
  for (const [path, bins] of write.quarters) for (const [key, count] of bins) inc[`${sketchPath(path)}.${key}`] = count;
  inc.readings = write.readings;
  const update: Record<string, unknown> = { $inc: inc, $min: min, $max: max };
  const push: Record<string, unknown> = {};
  if (mark !== undefined) push.batches = { $each: [mark], $slice: -BATCH_MARKS_KEPT };
  if (write.recent.length > 0) {
    push.recent = {
      $each: write.recent.map((reading) => ({ t: new Date(reading.t), f: reading.f })),
      $sort: { t: 1 },
      $slice: -write.recentKept,
    };
  }
  if (Object.keys(push).length > 0) update.$push = push;
  if (upsert) update.$setOnInsert = { metric: write.metric, tags: write.tags, tagPairs: write.tagPairs, v: DOCUMENT_VERSION };
  return update as UpdateFilter<SeriesDayDocument>;
}

/**
 * One series-day document's write as the storage layer applies it: the filter that
 * selects it (refusing a document that carries the batch's mark), the upsert that
 * creates or updates it, and the same update without `$setOnInsert` for a retry.
 */
interface DayOperation {
  write: DayContent;
  filter: Filter<SeriesDayDocument>;
  upsert: UpdateFilter<SeriesDayDocument>;
  update: UpdateFilter<SeriesDayDocument>;
}

/** The operations of a planned batch, one per series-day document (see {@link dayFilter}, {@link dayUpdate}). Pure. */
export function dayOperations(plan: ContentPlan, mark?: string): DayOperation[] {
  return plan.days.map((write) => ({
    write,
    filter: dayFilter(write, mark),
    upsert: dayUpdate(write, true, mark),
    update: dayUpdate(write, false, mark),
  }));
}

/**
 * Applies merged rollup writes (see `rollupContents`): one upsert per rollup document,
 * the same update as a series-day document's (`dayUpdate`) without batch marks, in one
 * unordered `bulkWrite` with a server-side time limit (`maxTimeMS`) that ends at
 * `deadline`. An upsert that lost a first-insert race (11000) is applied again as a plain
 * update.
 * @param deadline local time (ms since epoch) after which no write may start or run (see {@link rollupWriteWindow}).
 * @returns `late` when the deadline passed before or during the writes (the server
 * stopped them: code 50, MaxTimeMSExpired); some may have been applied, and the caller
 * marks the days dirty then. `written` otherwise.
 * @throws driver errors unchanged (the caller marks the batch's days dirty then).
 */
export async function applyRollupWrites(
  store: Store,
  rollup: Pick<RollupDefinition, 'collection'>,
  writes: readonly DayContent[],
  deadline: number,
): Promise<'written' | 'late'> {
  if (writes.length === 0) return 'written';
  const collection = store.db.collection<SeriesDayDocument>(rollup.collection);
  const left = () => deadline - Date.now();
  if (left() <= 0) return 'late';
  const operations: AnyBulkWriteOperation<SeriesDayDocument>[] = writes.map((write) => ({
    updateOne: { filter: { series: write.series, date: write.date }, update: dayUpdate(write, true), upsert: true },
  }));
  try {
    for (const index of await bulkWriteDuplicates(collection, operations, { maxTimeMS: left() })) {
      const write = writes[index]!;
      if (left() <= 0) return 'late';
      await collection.updateOne({ series: write.series, date: write.date }, dayUpdate(write, false), { maxTimeMS: left() });
    }
  } catch (error) {
    if (isTimeLimitError(error)) return 'late';
    throw error;
  }
  return 'written';
}

/**
 * Placeholders of the first and last reading in an empty pre-allocated slot: a time
 * after every reading (9999-01-01) and one before every reading (1969-12-31T23:59:59.999Z),
 * so the first real reading wins `$min` and `$max` and the pair keeps its size.
 */
const FIRST_PLACEHOLDER_MS = Date.UTC(9999, 0, 1);
const LAST_PLACEHOLDER_MS = Date.UTC(1970, 0, 1) - 1;

type EmptySlot = Record<keyof Stats, Double> & { first: { t: Date; v: Double }; last: { t: Date; v: Double } };

/**
 * An empty slot as stored in a skeleton: doubles throughout (a later `$inc` must not
 * change the type and so the size), min +Infinity and max -Infinity so
 * `$min`/`$max` need no special case, and the first/last placeholders.
 */
function emptySlot(): EmptySlot {
  const zero = new Double(0);
  return {
    n: zero,
    sum: zero,
    min: new Double(Infinity),
    max: new Double(-Infinity),
    sq: zero,
    first: { t: new Date(FIRST_PLACEHOLDER_MS), v: zero },
    last: { t: new Date(LAST_PLACEHOLDER_MS), v: zero },
  };
}

function emptyFieldStats(fields: readonly string[]): Record<string, EmptySlot> {
  const stats: Record<string, EmptySlot> = {};
  for (const field of fields) stats[field] = emptySlot();
  return stats;
}

/**
 * The zeroed skeleton of a `preallocated` series-day document of the current layout
 * version: all 24 hours and 1,440 minutes, each with an empty slot for every field in
 * `fields`. Sketches and the latest readings are not pre-allocated (their size depends
 * on the values).
 */
function daySkeleton(
  identity: { series: string; metric: string; tags: TagMap; tagPairs: string[]; date: Date },
  fields: readonly string[],
): Record<string, unknown> {
  const hours: Record<string, unknown> = {};
  for (let hour = 0; hour < 24; hour++) {
    const minutes: Record<string, unknown> = {};
    for (let minute = 0; minute < 60; minute++) minutes[minute] = emptyFieldStats(fields);
    hours[hour] = { fields: emptyFieldStats(fields), minutes };
  }
  return { ...identity, v: DOCUMENT_VERSION, readings: 0, fields: emptyFieldStats(fields), hours };
}
