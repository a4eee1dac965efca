/**
 * `npm run migrate`: series-day documents in the layout of version 1 (no `v`, aggregates
 * only), written directly in that shape (one of them then updated in place as the record
 * path of version 2, before folds, did), and documents of version 2 written through the
 * record path (folded parts, `f`). The migration stamps the old ones `v: 1` and changes
 * no other byte of any document, gives metrics without statistics settings the default,
 * reports exact counts, changes nothing when run again or with `--dry-run`, and queries
 * over the migrated days answer exact counts and sums with null first, last and
 * percentiles.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BSON, Double, type Collection, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { seriesId, seriesKey } from '../../src/model/series.ts';
import { DEFAULT_STATISTICS, type StatisticsSettings } from '../../src/model/statistics-settings.ts';
import { dayOperations } from '../helpers/legacy-writer.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { foldAll } from '../../src/storage/fold.ts';
import { layoutVersions, migrateLayout, pendingMigration } from '../../src/storage/migrate.ts';
import { setMetricStatistics } from '../../src/storage/registry.ts';
import type { MetricDocument } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDatabase, type TestDatabase, testMongoUri } from '../helpers/db.ts';
import { planContents } from '../../src/documents/from-readings.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `tsx scripts/migrate.ts ...args` on database `dbName` of the test server, with extra environment variables. */
function cli(dbName: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      `${root}node_modules/.bin/tsx`,
      ['scripts/migrate.ts', ...args],
      { cwd: root, env: { ...process.env, MONGODB_URI: testMongoUri(), MONGODB_DB: dbName, ...env } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2024, 2, 1);
const HOSTS = ['a', 'b'];
const DAYS = 6;

interface Reading {
  time: number;
  value: number;
}

/** Readings of host `h` on day `d` (since {@link FIRST_DAY}): several per hour and minute, multiples of 1/4 so every sum is exact. */
function legacyReadings(d: number, h: number): Reading[] {
  const at = [
    [3, 5, 0],
    [10, 15, 10],
    [10, 45, 0],
    [10, 45, 30],
    [11, 0, 0],
    [17, 59, 59],
  ] as const;
  return at.map(([hour, minute, second], i) => ({
    time: FIRST_DAY + d * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000,
    value: (((d * 7 + h * 3 + i * 5) % 17) - 4) * 0.25,
  }));
}

interface Acc {
  n: number;
  sum: number;
  min: number;
  max: number;
  sq: number;
}
const stored = (acc: Acc) => ({
  n: new Double(acc.n),
  sum: new Double(acc.sum),
  min: new Double(acc.min),
  max: new Double(acc.max),
  sq: new Double(acc.sq),
});

/** A series-day document as version 1 wrote it: no `v`, `{n, sum, min, max, sq}` per slot, first/last dates of the document only. */
function legacyDocument(metric: string, host: string, day: number, readings: readonly Reading[]): Document {
  const accs = new Map<string, Acc>();
  const add = (path: string, value: number) => {
    const acc = accs.get(path) ?? { n: 0, sum: 0, min: Infinity, max: -Infinity, sq: 0 };
    acc.n += 1;
    acc.sum += value;
    acc.min = Math.min(acc.min, value);
    acc.max = Math.max(acc.max, value);
    acc.sq += value * value;
    accs.set(path, acc);
  };
  for (const { time, value } of readings) {
    const date = new Date(time);
    add('day', value);
    add(`${date.getUTCHours()}`, value);
    add(`${date.getUTCHours()}.${date.getUTCMinutes()}`, value);
  }
  const hours: Record<string, { fields: Document; minutes: Record<string, Document> }> = {};
  for (const [path, acc] of accs) {
    if (path === 'day') continue;
    const [hour, minute] = path.split('.') as [string, string | undefined];
    hours[hour] ??= { fields: {}, minutes: {} };
    if (minute === undefined) hours[hour].fields = { temp: stored(acc) };
    else hours[hour].minutes[minute] = { temp: stored(acc) };
  }
  const times = readings.map((reading) => reading.time);
  return {
    series: seriesId(seriesKey({ metric, tags: [{ key: 'host', value: host }] })),
    metric,
    tags: { host },
    tagPairs: [`host=${host}`],
    date: new Date(FIRST_DAY + day * DAY_MS),
    first: new Date(Math.min(...times)),
    last: new Date(Math.max(...times)),
    fields: { temp: stored(accs.get('day')!) },
    hours,
  };
}

/** Every document of `collection` as its exact BSON bytes, keyed by `_id`. */
async function snapshot(collection: Collection<Document>): Promise<Map<string, Buffer>> {
  const raws = (await collection.find({}, { raw: true, sort: { _id: 1 } }).toArray()) as unknown as Buffer[];
  return new Map(raws.map((raw) => [String(BSON.deserialize(raw)._id), Buffer.from(raw)]));
}

/**
 * The document `raw` with its top-level `v` element cut out of the bytes, every other
 * byte as it was (a decode and re-encode would reorder keys such as `"12"` and `"-3"`,
 * which JavaScript objects list in numeric order).
 */
function withoutVersion(raw: Buffer): Buffer {
  // Each element: [type, name offset, name length, value offset, value length].
  const elements = [...BSON.onDemand.parseToElements(raw)];
  const v = elements.find(([, nameOffset, nameLength]) => raw.toString('utf8', nameOffset, nameOffset + nameLength) === 'v');
  if (v === undefined) return raw;
  const [, nameOffset, , valueOffset, valueLength] = v;
  const bytes = Buffer.concat([raw.subarray(0, nameOffset - 1), raw.subarray(valueOffset + valueLength)]);
  bytes.writeInt32LE(bytes.length, 0);
  return bytes;
}

const CUSTOM: StatisticsSettings = { sketchLevels: ['minute'], sketchFields: ['x'], latestReadings: 3 };

const validReadings = (metric: string, readings: { host: string; time: number; value: number }[]) =>
  validateReadings(
    readings.map(({ host, time, value }) => ({
      metric,
      tags: [{ key: 'host', value: host }],
      time: new Date(time),
      fields: [{ name: 'temp', value }],
    })),
    { maxBatchSize: 100, receivedAt: 0 },
  );

/** Records readings through the record path and folds them: whole parts of layout version 2 (with `f`). */
async function record(t: TestApp, metric: string, readings: { host: string; time: number; value: number }[]) {
  await recordBatch(t.store, validReadings(metric, readings), { receivedAt: 0 });
  await foldAll(t.store, t.store.holder);
}

/**
 * Writes readings as the record path of version 2 before folds did: one atomic upsert per
 * series-day document on `{series, date}` (`dayOperations`, without a batch mark), which
 * updates an existing document in place and sets `v` only on a document it creates.
 */
async function recordInPlace(t: TestApp, metric: string, readings: { host: string; time: number; value: number }[]) {
  const operations = dayOperations(planContents(validReadings(metric, readings), () => t.store.defaultStatistics));
  await t.store.seriesDays.bulkWrite(operations.map(({ filter, upsert }) => ({ updateOne: { filter, update: upsert, upsert: true } })));
}

let t: TestApp;
let legacyIds: Set<string>;
let legacyMetricBefore: Document;
/** The legacy readings of each (day, host) document, plus the one recorded through the record path. */
const legacy = new Map<string, Reading[]>();
const TOUCH = { host: 'a', time: FIRST_DAY + 12 * 3_600_000 + 30 * 60_000, value: 2.5 };
/** A reading recorded (and folded) today into the version-1 day 1 of host b: a part of version 2 next to the old document. */
const LATE = { host: 'b', time: FIRST_DAY + DAY_MS + 14 * 3_600_000 + 7 * 60_000, value: -1.75 };

beforeAll(async () => {
  t = await openTestApp('migrate');
  const createdAt = new Date(Date.UTC(2023, 11, 1));
  // Version 1: registry entries without statistics settings, series-day documents without v.
  const docs: Document[] = [];
  for (let d = 0; d < DAYS; d++) {
    for (const [h, host] of HOSTS.entries()) {
      const readings = legacyReadings(d, h);
      legacy.set(`${d}/${host}`, readings);
      docs.push(legacyDocument('legacy', host, d, readings));
    }
  }
  const inserted = await t.store.db.collection('series_days').insertMany(docs);
  legacyIds = new Set(Object.values(inserted.insertedIds).map(String));
  await t.store.series.insertMany(
    HOSTS.map((host) => {
      const key = seriesKey({ metric: 'legacy', tags: [{ key: 'host', value: host }] });
      return {
        _id: seriesId(key),
        key,
        metric: 'legacy',
        tags: { host },
        tagPairs: [`host=${host}`],
        fields: ['temp'],
      };
    }),
  );
  await t.store.metrics.insertMany([
    {
      _id: 'legacy',
      fields: ['temp'],
      tagKeys: ['host'],
      createdAt,
      first: new Date(FIRST_DAY),
      last: new Date(FIRST_DAY + DAYS * DAY_MS),
    },
    { _id: 'empty', fields: [], tagKeys: [], createdAt },
  ]);
  // A version-1 document that received a reading through the record path before folds
  // (updated in place) stayed version 1.
  await recordInPlace(t, 'legacy', [TOUCH]);
  legacy.get('0/a')!.push({ time: TOUCH.time, value: TOUCH.value });
  // Today's record path leaves the old document alone and adds a version-2 part to its day.
  await record(t, 'legacy', [LATE]);
  legacy.get('1/b')!.push({ time: LATE.time, value: LATE.value });
  // Version 2 through the record path (the metric gets the default statistics), and a metric with its own settings.
  await record(t, 'fresh', [
    { host: 'a', time: FIRST_DAY + 3_600_000, value: 4 },
    { host: 'a', time: FIRST_DAY + 5 * 3_600_000, value: 1 },
    { host: 'a', time: FIRST_DAY + 9 * 3_600_000, value: 2 },
    { host: 'b', time: FIRST_DAY + 2 * 3_600_000, value: 3 },
    { host: 'a', time: FIRST_DAY + DAY_MS + 60_000, value: 5 },
  ]);
  await setMetricStatistics(t.store, 'custom', CUSTOM);
  legacyMetricBefore = (await t.store.metrics.findOne({ _id: 'legacy' }))!;
});
afterAll(async () => t?.close());

describe('npm run migrate', () => {
  let buckets0: Map<string, Buffer>;
  let metrics0: Map<string, Buffer>;

  it('starts from 12 version-1 documents without v (one of them written to since) and 4 of version 2', async () => {
    const docs = await t.store.seriesDays.find({}).toArray();
    expect(docs).toHaveLength(16);
    const old = docs.filter((doc) => legacyIds.has(String(doc._id)));
    expect(old).toHaveLength(12);
    expect(old.every((doc) => !('v' in doc) && !('f' in doc))).toBe(true);
    // The record path before folds wrote into the old document of day 0, host a, and left it without v.
    const touched = old.find((doc) => doc.tags.host === 'a' && doc.date.getTime() === FIRST_DAY)!;
    expect(touched.fields.temp!.n).toBe(7);
    expect(touched.readings).toBe(1);
    // Today's record path left the old document of day 1, host b, as it was, and folded its reading into a part of its own.
    const day1b = docs.filter((doc) => doc.tags.host === 'b' && doc.metric === 'legacy' && doc.date.getTime() === FIRST_DAY + DAY_MS);
    expect(day1b.map((doc) => [legacyIds.has(String(doc._id)), doc.v, doc.fields.temp!.n]).sort()).toEqual([
      [false, 2, 1],
      [true, undefined, 6],
    ]);
    const fresh = docs.filter((doc) => !legacyIds.has(String(doc._id)));
    expect(fresh.map((doc) => doc.v)).toEqual([2, 2, 2, 2]);
    expect(fresh.every((doc) => typeof (doc as { f?: unknown }).f === 'number')).toBe(true);
    expect(await layoutVersions(t.store)).toEqual({ 1: 12, 2: 4 });
    buckets0 = await snapshot(t.store.db.collection('series_days'));
    metrics0 = await snapshot(t.store.db.collection('metrics'));
    expect(metrics0.size).toBe(4);
  });

  it('--dry-run through the script reports the versions and what would change, and changes nothing', async () => {
    const run = await cli(t.store.db.databaseName, ['--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    // No batch claims or marks here: those are test/integration/upgrade.test.ts's.
    const noClaims = { claims: 0, applied: 0, inLog: 0, inProgress: [], markedDocuments: 0 };
    expect(JSON.parse(run.stdout)).toEqual({
      dryRun: true,
      versions: { 1: 12, 2: 4 },
      unstamped: 12,
      metricsWithoutStatistics: 2,
      claims: noClaims,
    });
    expect(await snapshot(t.store.db.collection('series_days'))).toEqual(buckets0);
    expect(await snapshot(t.store.db.collection('metrics'))).toEqual(metrics0);
    expect(await pendingMigration(t.store)).toEqual({
      versions: { 1: 12, 2: 4 },
      unstamped: 12,
      metricsWithoutStatistics: 2,
      claims: noClaims,
    });
  });

  it('stamps the old documents v: 1 in batches, changing no other byte, and reports exact counts', async () => {
    const progress: [number, number][] = [];
    const started = performance.now();
    const report = await migrateLayout(t.store, { batchSize: 5, onProgress: (done, total) => progress.push([done, total]) });
    const wall = performance.now() - started;
    expect(report).toMatchObject({ before: { 1: 12, 2: 4 }, after: { 1: 12, 2: 4 }, stamped: 12, metricsGivenStatistics: 2 });
    expect(Number.isInteger(report.elapsedMs) && report.elapsedMs > 0 && report.elapsedMs <= Math.ceil(wall)).toBe(true);
    expect(progress).toEqual([
      [0, 12],
      [5, 12],
      [10, 12],
      [12, 12],
    ]);

    const after = await snapshot(t.store.db.collection('series_days'));
    expect([...after.keys()]).toEqual([...buckets0.keys()]);
    for (const [id, raw] of after) {
      const before = buckets0.get(id)!;
      if (legacyIds.has(id)) {
        expect(BSON.deserialize(raw).v).toBe(1);
        expect(withoutVersion(raw).equals(before), `document ${id} changed beyond v`).toBe(true);
      } else {
        expect(raw.equals(before), `version-2 document ${id} changed`).toBe(true);
      }
    }
    expect(await t.store.seriesDays.countDocuments({ v: { $exists: false } })).toBe(0);
  });

  it('gives metrics without statistics settings the default and leaves the others as they were', async () => {
    const metrics = new Map((await t.store.metrics.find({}).toArray()).map((doc) => [doc._id, doc]));
    expect(metrics.get('legacy')).toEqual({ ...legacyMetricBefore, statistics: DEFAULT_STATISTICS });
    expect(metrics.get('empty')?.statistics).toEqual(DEFAULT_STATISTICS);
    expect(metrics.get('custom')?.statistics).toEqual(CUSTOM);
    const after = await snapshot(t.store.db.collection('metrics'));
    expect(after.get('fresh')!.equals(metrics0.get('fresh')!)).toBe(true);
    expect(after.get('custom')!.equals(metrics0.get('custom')!)).toBe(true);
  });

  it('a second run stamps nothing and changes nothing', async () => {
    const buckets1 = await snapshot(t.store.db.collection('series_days'));
    const metrics1 = await snapshot(t.store.db.collection('metrics'));
    const progress: [number, number][] = [];
    const report = await migrateLayout(t.store, { batchSize: 5, onProgress: (done, total) => progress.push([done, total]) });
    expect(report).toMatchObject({ before: { 1: 12, 2: 4 }, after: { 1: 12, 2: 4 }, stamped: 0, metricsGivenStatistics: 0 });
    expect(progress).toEqual([[0, 0]]);
    expect(await snapshot(t.store.db.collection('series_days'))).toEqual(buckets1);
    expect(await snapshot(t.store.db.collection('metrics'))).toEqual(metrics1);
  });

  it('queries over migrated version-1 days answer exact count and sum, and null first, last and p50', async () => {
    const query = `query($metric: String!, $host: String!, $from: Time!, $to: Time!) {
      aggregate(metric: $metric, field: "temp", from: $from, to: $to, where: [{key: "host", in: [$host]}]) {
        count sum min max first { time value } last { time value } p50
      }
    }`;
    const aggregate = async (metric: string, host: string, from: number, to: number) => {
      const response = await t.graphql<{ aggregate: Record<string, unknown>[] }>(query, {
        metric,
        host,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
      });
      expect(response.errors).toBeUndefined();
      expect(response.data?.aggregate).toHaveLength(1);
      return response.data!.aggregate[0]!;
    };
    const expected = (readings: readonly Reading[], from: number, to: number) => {
      const values = readings.filter((r) => r.time >= from && r.time < to).map((r) => r.value);
      return { count: values.length, sum: values.reduce((a, b) => a + b, 0), min: Math.min(...values), max: Math.max(...values) };
    };
    const nulls = { first: null, last: null, p50: null };

    // A whole untouched day (day totals), and a range with a ragged edge (minute slots of hour 10, hour slots 11 to 17).
    const day2 = FIRST_DAY + 2 * DAY_MS;
    expect(await aggregate('legacy', 'b', day2, day2 + DAY_MS)).toEqual({ ...expected(legacy.get('2/b')!, day2, day2 + DAY_MS), ...nulls });
    const from = day2 + 10.5 * 3_600_000;
    const to = day2 + 18 * 3_600_000;
    expect(expected(legacy.get('2/a')!, from, to).count).toBe(4);
    expect(await aggregate('legacy', 'a', from, to)).toEqual({ ...expected(legacy.get('2/a')!, from, to), ...nulls });
    // The version-1 document written to by the record path: still null first, last and p50.
    expect(await aggregate('legacy', 'a', FIRST_DAY, FIRST_DAY + DAY_MS)).toEqual({
      ...expected(legacy.get('0/a')!, FIRST_DAY, FIRST_DAY + DAY_MS),
      ...nulls,
    });
    // A version-1 day with a version-2 part: counted together, still null first, last and p50.
    const day1 = FIRST_DAY + DAY_MS;
    expect(expected(legacy.get('1/b')!, day1, day1 + DAY_MS).count).toBe(7);
    expect(await aggregate('legacy', 'b', day1, day1 + DAY_MS)).toEqual({ ...expected(legacy.get('1/b')!, day1, day1 + DAY_MS), ...nulls });

    // The same query over a version-2 day answers them.
    const fresh = await aggregate('fresh', 'a', FIRST_DAY, FIRST_DAY + DAY_MS);
    expect(fresh).toMatchObject({
      count: 3,
      sum: 7,
      first: { time: new Date(FIRST_DAY + 3_600_000).toISOString(), value: 4 },
      last: { time: new Date(FIRST_DAY + 9 * 3_600_000).toISOString(), value: 2 },
    });
    expect(fresh.p50).toBeCloseTo(2, 1);
  });
});

describe('npm run migrate (the script)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('migrate_cli');
    await db.db.collection('buckets').insertMany([0, 1, 2].map((d) => legacyDocument('old', 'a', d, legacyReadings(d, 0))));
    await db.db
      .collection<MetricDocument>('metrics')
      .insertOne({ _id: 'old', fields: ['temp'], tagKeys: ['host'], createdAt: new Date(0) });
  });
  afterAll(async () => db?.drop());

  it('migrates in batches with progress lines and prints the report; metrics get the configured statistics', async () => {
    const run = await cli(db.db.databaseName, ['--batch', '2', '--json'], { SKETCH_LEVELS: 'minute', LATEST_READINGS: '7' });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ before: { 1: 3 }, after: { 1: 3 }, stamped: 3, metricsGivenStatistics: 1 });
    expect(run.stderr).toContain('migrate: 0/3 documents stamped');
    expect(run.stderr).toContain('migrate: 3/3 documents stamped');
    const docs = await db.db.collection('series_days').find({}).toArray();
    expect(docs.map((doc) => doc.v)).toEqual([1, 1, 1]);
    expect((await db.db.collection<MetricDocument>('metrics').findOne({ _id: 'old' }))?.statistics).toEqual({
      sketchLevels: ['minute'],
      sketchFields: null,
      latestReadings: 7,
    });
  });

  it('refuses a batch size that is not a positive integer, before reaching the database', async () => {
    const run = await cli(db.db.databaseName, ['--batch', '0']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/expected a positive integer/);
  });
});
