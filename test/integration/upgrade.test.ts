/**
 * Upgrading a database written by the write path before the ingest log
 * (docs/ingest-design.md, "Existing databases"; docs/operations.md, "Upgrading"). The
 * old database is written by test/helpers/legacy-writer.ts, the old `recordBatch`'s
 * driver calls over the planners it used, checked here against the old code's own
 * documents (test/fixtures/legacy-documents.json). Every expected answer comes from a
 * plain loop over the readings sent (test/helpers/plain-loop.ts), never from the code
 * under test.
 *
 * What it proves:
 * 1. The helper writes byte for byte what the old code wrote for the fixture's batches.
 * 2. The server (`src/server/main.ts`) starts on the old database, answers from it and
 *    warns that claims are left for `npm run migrate`. Start-up drops the old unique `{series,
 *    date}` index of `buckets` and of the rollup collection, and every read answers
 *    exactly from the old documents (no `f`, ObjectId `_id`, batch marks): aggregates per
 *    series with first and last, MINUTE/HOUR/DAY buckets, latest values and readings,
 *    first/last reading times, `GET /export`, and a `preallocated` metric; the rollup
 *    answers what the old path wrote into it (without the readings of a batch it
 *    stopped in the middle of).
 * 3. New batches fold into parts next to the old documents (a second rollup part of a
 *    group-day included), and everything stays exact.
 * 4. A dry run (`npm run migrate -- --dry-run`) lists the claims and decides the ones in
 *    progress without writing; `npm run migrate` carries the claims into the ingest log, marks
 *    the rollup days of a partly applied batch dirty, removes the batch marks and
 *    reports it; a second run does nothing.
 * 5. Exactly once across the upgrade: a resend of a batch the old path applied answers
 *    `alreadyApplied`; one with other readings is BATCH_ID_REUSED and writes nothing; a
 *    resend of a batch the old path stopped in the middle of stores exactly the readings
 *    of the documents it had not reached; one it had not started is stored whole.
 * 6. Retention deletes old documents like parts.
 * 7. Compaction of the days holding old documents and parts rewrites them into one
 *    document per series-day with the compaction's number, and after the grace period
 *    no old document (ObjectId, no `f`, marks) is left; answers stay exact.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchMark } from '../../src/model/batch.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { ingestLog } from '../../src/storage/ingest-log.ts';
import { migrateLayout, pendingMigration } from '../../src/storage/migrate.ts';
import { setRetention, applyRetention } from '../../src/storage/expire.ts';
import { findRollups, rebuildDirtyDays } from '../../src/storage/rollups.ts';
import type { Store } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDatabase, testMongoUri } from '../helpers/db.ts';
import {
  defineLegacyRollup,
  dumpLegacyDatabase,
  LEGACY_FIXTURE_BATCHES,
  LEGACY_FIXTURE_METRIC,
  legacyDays,
  openLegacyStore,
  writeLegacyBatch,
} from '../helpers/legacy-writer.ts';
import { expectedBuckets, newestFirst, type Sent, spread } from '../helpers/plain-loop.ts';
import { startServer } from '../helpers/server-process.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** What the old code itself wrote for `LEGACY_FIXTURE_BATCHES` (see test/helpers/legacy-writer.ts). */
const fixture = JSON.parse(readFileSync(new URL('../fixtures/legacy-documents.json', import.meta.url), 'utf8'));

/** Runs `tsx scripts/migrate.ts ...args` on database `dbName` of the test server. */
function migrateCli(dbName: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      `${root}node_modules/.bin/tsx`,
      ['scripts/migrate.ts', ...args],
      { cwd: root, env: { ...process.env, MONGODB_URI: testMongoUri(), MONGODB_DB: dbName } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const START = Date.UTC(2024, 6, 1);
const FROM = new Date(START).toISOString();
const TO = new Date(START + 2 * DAY).toISOString();
const HOSTS = ['h0', 'h1', 'h2'];

/** Readings as the GraphQL input and as validated readings. */
const inputOf = (metric: string, readings: readonly Sent[]): ReadingInput[] =>
  readings.map((r) => ({
    metric,
    tags: [{ key: 'host', value: r.host }],
    time: new Date(r.time).toISOString() as unknown as Date,
    fields: [{ name: 'v', value: r.value }],
  }));
const validated = (metric: string, readings: readonly Sent[], receivedAt: number) =>
  validateReadings(
    readings.map((r) => ({
      metric,
      tags: [{ key: 'host', value: r.host }],
      time: new Date(r.time),
      fields: [{ name: 'v', value: r.value }],
    })),
    { maxBatchSize: 10_000, receivedAt },
  );

/** UTC midnight (ms) of a reading's day. */
const dayOf = (time: number) => Math.floor(time / DAY) * DAY;

// The batches the old path wrote, by batch id (undefined: sent without one).
const OLD = [
  { id: 'old-1', readings: spread(START, 60, 0) },
  { id: 'old-2', readings: spread(START, 60, 60) },
  { id: 'old-3', readings: spread(START, 60, 120) },
  { id: 'old-4', readings: spread(START, 60, 180) },
  { id: undefined, readings: spread(START, 40, 240) },
];
/** Stopped after its first two series-day documents: its claim stays `applying`. */
const PARTIAL = { id: 'old-partial', readings: spread(START, 30, 300) };
/** Stopped before its first series-day document: `applying`, no document applied it. */
const UNSTARTED = { id: 'old-unstarted', readings: spread(START, 20, 330) };
/** A `preallocated` metric the old path wrote (one host, two days). */
const PRE = { id: 'pre-1', readings: spread(START, 12, 400).map((r) => ({ ...r, host: 'h0' })) };
/** A metric that retention trims to its last day. */
const GONE = { id: 'gone-1', readings: spread(START, 18, 500) };
/** Written through the new server after the upgrade. */
const NEW = spread(START, 45, 600);

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { recorded applied alreadyApplied }
}`;
const PER_HOST = `query($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to, groupBy: ["host"]) {
    tags { key value } count sum min max first { time value } last { time value }
  }
}`;
const TOTALS = `query($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to) { count sum min max }
}`;
const BUCKETS = `query($metric: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $groupBy: [String!]) {
  buckets(metric: $metric, field: "v", granularity: $granularity, from: $from, to: $to, fill: NONE, groupBy: $groupBy) {
    tags { key value } buckets { start count sum }
  }
}`;
const SERIES = `query($metric: String!) {
  series(metric: $metric) {
    tags { key value } firstReadingAt lastReadingAt
    latestValue(field: "v") { time value }
    latest(n: 3) { time value(field: "v") }
  }
}`;

interface Totals {
  count: number;
  sum: number;
  min: number;
  max: number;
}
interface TimedValue {
  time: string;
  value: number;
}
interface Reads {
  extensions?: { reads?: { rollup: string | null }[] };
}

/** Count, sum, min and max of `readings`, by a plain loop. */
function totalsOf(readings: readonly Sent[]): Totals {
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const r of readings) {
    count += 1;
    sum += r.value;
    min = Math.min(min, r.value);
    max = Math.max(max, r.value);
  }
  return { count, sum, min, max };
}

/** The earliest and the latest reading of `readings` (distinct times here), by a plain loop. */
function edges(readings: readonly Sent[]): { first: TimedValue; last: TimedValue } {
  let first = readings[0]!;
  let last = readings[0]!;
  for (const r of readings) {
    if (r.time < first.time) first = r;
    if (r.time > last.time) last = r;
  }
  const pair = (r: Sent) => ({ time: new Date(r.time).toISOString(), value: r.value });
  return { first: pair(first), last: pair(last) };
}

const hostTag = (host: string) => [{ key: 'host', value: host }];

describe('the legacy writer', () => {
  it('writes byte for byte the documents the old code wrote for the fixture batches', async () => {
    const db = await openTestDatabase('upgrade_fixture');
    const store = await openLegacyStore(testMongoUri(), db.db.databaseName);
    // The fixture's claims arrived in 2024: the TTL index of claims would remove them.
    await store.batches.dropIndex('createdAt_ttl');
    try {
      await store.metrics.insertOne({ ...LEGACY_FIXTURE_METRIC, statistics: store.defaultStatistics });
      await defineLegacyRollup(store, 'cpu', 'bydc', ['dc']);
      for (const batch of LEGACY_FIXTURE_BATCHES) {
        const readings = validateReadings(batch.readings, { maxBatchSize: 100, receivedAt: batch.receivedAt });
        await writeLegacyBatch(store, readings, { batchId: batch.batchId, receivedAt: batch.receivedAt });
      }
      expect(await dumpLegacyDatabase(store.db)).toEqual(fixture);
    } finally {
      await store.client.close();
      await db.drop();
    }
  });
});

describe('npm run migrate with more claims than one chunk', () => {
  it('carries every applied claim, drops those in progress that nothing applied, leaves ids the log holds, and removes every claim', async () => {
    const db = await openTestDatabase('upgrade_chunks');
    const store = await openLegacyStore(testMongoUri(), db.db.databaseName);
    try {
      const now = new Date(Date.now() - 60_000);
      const claim = (i: number, state: 'applied' | 'applying') => ({
        _id: `c-${String(i).padStart(5, '0')}`,
        fingerprint: `fp-${i}`,
        readings: i + 1,
        receivedAt: now,
        createdAt: now,
        state,
        ...(state === 'applied' ? { appliedAt: now } : {}),
      });
      // 2,500 claims; every 1,000th still applying (no document carries their marks).
      const claims = Array.from({ length: 2_500 }, (_, i) => claim(i, i % 1_000 === 999 ? 'applying' : 'applied'));
      await store.batches.insertMany(claims);
      // Two ids the log holds already: a resend reached a server of the ingest log first.
      const inLog = ['c-00010', 'c-01500'];
      await store.db
        .collection('ingest_log')
        .insertMany(inLog.map((_id) => ({ _id, fingerprint: 'other', receivedAt: now, readings: 1 }) as never));
      await store.client.close();
      const t = await openTestApp('upgrade_chunks', { database: db.db.databaseName });
      try {
        const report = await migrateLayout(t.store, { batchSize: 1_000 });
        expect(report.claims).toMatchObject({ carriedApplied: 2_496, carriedPartial: 0, dropped: 2, inLog: 2, claimsRemoved: 2_500 });
        expect(report.claims.inProgress.map((c) => [c.id, c.decision])).toEqual([
          ['c-00999', 'dropped'],
          ['c-01999', 'dropped'],
        ]);
        expect(await t.store.batches.countDocuments({})).toBe(0);
        const entries = await ingestLog(t.store)
          .find({}, { projection: { _id: 1, fingerprint: 1, readings: 1 } })
          .sort({ _id: 1 })
          .toArray();
        const expected = claims
          .filter((c) => c.state === 'applied' && !inLog.includes(c._id))
          .map((c) => ({ _id: c._id, fingerprint: c.fingerprint, readings: c.readings }));
        for (const _id of inLog) expected.push({ _id, fingerprint: 'other', readings: 1 });
        expect(entries).toEqual(expected.sort((a, b) => (a._id < b._id ? -1 : 1)));
      } finally {
        await t.close();
      }
    } finally {
      await db.drop().catch(() => undefined);
    }
  });
});

describe('upgrading a database of the write path before the ingest log', { timeout: 300_000 }, () => {
  let legacy: Store;
  let t: TestApp;
  let dbName = '';
  /** Readings of `cpu` stored, by a plain account of what each write applied. */
  const cpu: Sent[] = [];
  /** Of them, those the old path wrote into the rollup (all but the stopped batch's). */
  const inRollup: Sent[] = [];
  /** The series-day documents (`host|day ms`) the stopped batch had applied. */
  let partialDocuments = new Set<string>();
  /** The readings of {@link PARTIAL} in those documents. */
  let partialApplied: Sent[] = [];
  let claimsCreatedAt = new Map<string, number>();

  beforeAll(async () => {
    const db = await openTestDatabase('upgrade');
    dbName = db.db.databaseName;
    await db.client.close();
    legacy = await openLegacyStore(testMongoUri(), dbName);
    await defineLegacyRollup(legacy, 'cpu', 'all', []);
    // Claims are kept a day from their arrival (a TTL index): batches of the last minute.
    let receivedAt = Date.now() - 60_000;
    for (const batch of OLD) {
      receivedAt += 1000;
      const outcome = await writeLegacyBatch(legacy, validated('cpu', batch.readings, receivedAt), { batchId: batch.id, receivedAt });
      expect(outcome).toEqual({ applied: batch.readings.length, alreadyApplied: 0 });
      cpu.push(...batch.readings);
      inRollup.push(...batch.readings);
    }
    await writeLegacyBatch(legacy, validated('cpu', PARTIAL.readings, receivedAt + 1000), {
      batchId: PARTIAL.id,
      receivedAt: receivedAt + 1000,
      stopAfterDocuments: 2,
    });
    await writeLegacyBatch(legacy, validated('cpu', UNSTARTED.readings, receivedAt + 2000), {
      batchId: UNSTARTED.id,
      receivedAt: receivedAt + 2000,
      stopAfterDocuments: 0,
    });
    await writeLegacyBatch(legacy, validated('pre', PRE.readings, receivedAt + 3000), {
      batchId: PRE.id,
      receivedAt: receivedAt + 3000,
      layout: 'preallocated',
    });
    await writeLegacyBatch(legacy, validated('gone', GONE.readings, receivedAt + 4000), {
      batchId: GONE.id,
      receivedAt: receivedAt + 4000,
    });
    // Which documents the stopped batch reached: those carrying its mark.
    const marked = await legacyDays(legacy)
      .find({ batches: batchMark(PARTIAL.id) })
      .toArray();
    partialDocuments = new Set(marked.map((doc) => `${doc.tags.host}|${doc.date.getTime()}`));
    partialApplied = PARTIAL.readings.filter((r) => partialDocuments.has(`${r.host}|${dayOf(r.time)}`));
    cpu.push(...partialApplied);
    claimsCreatedAt = new Map((await legacy.batches.find({}).toArray()).map((claim) => [claim._id, claim.createdAt.getTime()]));
  });
  afterAll(async () => {
    await legacy?.client.close();
    await t?.close();
  });

  const ask = async <T>(query: string, variables: Record<string, unknown>): Promise<T & Reads> => {
    const answer = await t.graphql<T>(query, variables);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    return { ...(answer.data as T), extensions: (answer as Reads).extensions };
  };

  /**
   * Every answer read from the series-day documents (per host, minutes), against the
   * plain loop over `sent`, over the two days (or from `from`, ISO).
   */
  const expectSeriesAnswers = async (metric: string, sent: readonly Sent[], from = FROM) => {
    const hosts = HOSTS.filter((host) => sent.some((r) => r.host === host));
    const perHost = await ask<{ aggregate: unknown[] }>(PER_HOST, { metric, from, to: TO });
    expect(perHost.aggregate).toEqual(
      hosts.map((host) => {
        const mine = sent.filter((r) => r.host === host);
        return { tags: hostTag(host), ...totalsOf(mine), ...edges(mine) };
      }),
    );
    const minutes = await ask<{ buckets: { buckets: unknown[] }[] }>(BUCKETS, { metric, granularity: 'MINUTE', from, to: TO });
    expect(minutes.buckets.map((group) => group.buckets)).toEqual([expectedBuckets(sent, MINUTE)]);
    for (const [granularity, size] of [
      ['HOUR', HOUR],
      ['DAY', DAY],
    ] as const) {
      const grouped = await ask<{ buckets: unknown[] }>(BUCKETS, { metric, granularity, from, to: TO, groupBy: ['host'] });
      expect(grouped.buckets, granularity).toEqual(
        hosts.map((host) => ({
          tags: hostTag(host),
          buckets: expectedBuckets(
            sent.filter((r) => r.host === host),
            size,
          ),
        })),
      );
    }
    const series = await ask<{ series: { tags: unknown; latest: unknown }[] }>(SERIES, { metric });
    expect(series.series).toEqual(
      hosts.map((host) => {
        const newest = newestFirst(sent, host);
        const { first, last } = edges(sent.filter((r) => r.host === host));
        return {
          tags: hostTag(host),
          firstReadingAt: first.time,
          lastReadingAt: last.time,
          latestValue: last,
          latest: newest.slice(0, 3).map((r) => ({ time: new Date(r.time).toISOString(), value: r.value })),
        };
      }),
    );
  };

  /** The metric-wide total and HOUR buckets, and whether the rollup `all` answered them. */
  const rollupAnswers = async () => {
    const totals = await ask<{ aggregate: Totals[] }>(TOTALS, { metric: 'cpu', from: FROM, to: TO });
    const days = await ask<{ buckets: { buckets: unknown[] }[] }>(BUCKETS, { metric: 'cpu', granularity: 'HOUR', from: FROM, to: TO });
    return {
      totals: totals.aggregate,
      hours: days.buckets[0]?.buckets,
      sources: [totals.extensions?.reads?.[0]?.rollup ?? null, days.extensions?.reads?.[0]?.rollup ?? null],
    };
  };

  /** `GET /export` of the DAY buckets per host as CSV: `host,start,count,sum` rows. */
  const exportRows = async () => {
    const query = `{ buckets(metric: "cpu", field: "v", granularity: DAY, from: "${FROM}", to: "${TO}", groupBy: ["host"]) {
      tags { key value } buckets { start count sum } } }`;
    const response = await t.app.fetch(`http://yoga/export?${new URLSearchParams({ query, format: 'csv' })}`);
    expect(response.status).toBe(200);
    return (await response.text()).trim().split('\n');
  };
  const expectedExport = (sent: readonly Sent[]) =>
    HOSTS.flatMap((host) =>
      expectedBuckets(
        sent.filter((r) => r.host === host),
        DAY,
      ).map((bucket) => `${host},${bucket.start.replace('.000Z', '+00:00')},${bucket.count},${bucket.sum}`),
    );

  it('the old path left documents without f, with ObjectId ids and batch marks, claims applied and in progress, and the old unique index', async () => {
    const docs = await legacyDays(legacy).find({}).toArray();
    expect(docs.length).toBeGreaterThan(0);
    expect(docs.every((doc) => doc._id instanceof ObjectId && !('f' in doc))).toBe(true);
    const cpuDays = new Set(cpu.map((r) => `${r.host}|${dayOf(r.time)}`));
    expect(docs.filter((doc) => doc.metric === 'cpu').length).toBe(cpuDays.size);
    expect(docs.filter((doc) => doc.metric === 'pre').length).toBe(2);
    expect(docs.filter((doc) => doc.metric === 'pre').every((doc) => Object.keys(doc.hours).length === 24)).toBe(true);
    const claims = await legacy.batches.find({}).sort({ _id: 1 }).toArray();
    expect(claims.map((claim) => [claim._id, claim.state])).toEqual([
      ['gone-1', 'applied'],
      ['old-1', 'applied'],
      ['old-2', 'applied'],
      ['old-3', 'applied'],
      ['old-4', 'applied'],
      ['old-partial', 'applying'],
      ['old-unstarted', 'applying'],
      ['pre-1', 'applied'],
    ]);
    expect(partialDocuments.size).toBe(2);
    expect(partialApplied.length).toBeGreaterThan(0);
    expect(partialApplied.length).toBeLessThan(PARTIAL.readings.length);
    expect(await legacyDays(legacy).countDocuments({ batches: batchMark(UNSTARTED.id) })).toBe(0);
    const indexes = await legacyDays(legacy).listIndexes().toArray();
    expect(indexes.find((index) => index.name === 'series_date')).toMatchObject({ key: { series: 1, date: 1 }, unique: true });
  });

  it('the server starts on the old database, answers from it, and warns that claims are left for npm run migrate', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tsgraph-upgrade-'));
    // Background jobs off: the test folds and compacts where it says so.
    const server = await startServer({
      dataDir,
      env: { MONGODB_URI: testMongoUri(), MONGODB_DB: dbName, FOLD_INTERVAL_MS: '0', ROLLUP_REBUILD_SECONDS: '0', RETENTION_SECONDS: '0' },
    });
    try {
      const warning = await server.waitForLog((line) => line.level === 40 && line.msg.includes('batch claims'));
      expect(warning.msg).toContain('The database holds 8 batch claims of the write path before the ingest log: run `npm run migrate`');
      const answer = await server.graphql<{ aggregate: Totals[] }>(TOTALS, { metric: 'pre', from: FROM, to: TO });
      expect(answer.body.data?.aggregate).toEqual([totalsOf(PRE.readings)]);
    } finally {
      expect((await server.stop()).code).toBe(0);
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('start-up renames buckets to series_days, drops the old unique index of it and of the rollup collection, and creates the parts index', async () => {
    t = await openTestApp('upgrade', { database: dbName });
    const [rollup] = await findRollups(t.store, ['cpu']);
    const names = (await t.store.db.listCollections().toArray()).map((collection) => collection.name);
    expect(names).toContain('series_days');
    expect(names).not.toContain('buckets');
    for (const name of ['series_days', rollup!.collection]) {
      const indexes = await t.store.db.collection(name).listIndexes().toArray();
      expect(
        indexes.some((index) => JSON.stringify(index.key) === JSON.stringify({ series: 1, date: 1 })),
        name,
      ).toBe(false);
      expect(
        indexes.find((index) => index.name === 'series_date_f'),
        name,
      ).toMatchObject({ key: { series: 1, date: 1, f: 1 } });
      expect(
        indexes.filter((index) => index.unique === true).map((index) => index.name),
        name,
      ).toEqual([]);
    }
  });

  it('every read answers exactly from the old documents', async () => {
    await expectSeriesAnswers('cpu', cpu);
    await expectSeriesAnswers('pre', PRE.readings);
    expect(await exportRows()).toEqual(['host,start,count,sum', ...expectedExport(cpu)]);
    // The rollup holds what the old path wrote into it: not the stopped batch.
    expect(await rollupAnswers()).toEqual({
      totals: [totalsOf(inRollup)],
      hours: expectedBuckets(inRollup, HOUR),
      sources: ['all', 'all'],
    });
  });

  it('new batches fold into parts next to the old documents, a second rollup part of a group-day included', async () => {
    const answer = await ask<{ recordReadings: unknown }>(RECORD, { readings: inputOf('cpu', NEW), batchId: 'new-1' });
    expect(answer.recordReadings).toEqual({ recorded: NEW.length, applied: NEW.length, alreadyApplied: 0 });
    cpu.push(...NEW);
    inRollup.push(...NEW);
    // From the log's tail first, then folded.
    await expectSeriesAnswers('cpu', cpu);
    expect(await t.settle()).toBe(NEW.length);
    const parts = await t.store.seriesDays.countDocuments({ metric: 'cpu', f: { $exists: true } });
    expect(parts).toBe(new Set(NEW.map((r) => `${r.host}|${dayOf(r.time)}`)).size);
    const [rollup] = await findRollups(t.store, ['cpu']);
    const rollupDocs = await t.store.db.collection(rollup!.collection).find({}).toArray();
    const byDay = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]!;
    expect(rollupDocs.map((doc) => [doc.date.getTime(), 'f' in doc ? doc.f : 0]).sort(byDay)).toEqual([
      [START, 0],
      [START, 1],
      [START + DAY, 0],
      [START + DAY, 1],
    ]);
    await expectSeriesAnswers('cpu', cpu);
    expect(await rollupAnswers()).toEqual({
      totals: [totalsOf(inRollup)],
      hours: expectedBuckets(inRollup, HOUR),
      sources: ['all', 'all'],
    });
  });

  let markedDocuments = 0;

  it('npm run migrate -- --dry-run lists the claims and decides those in progress, and writes nothing', async () => {
    markedDocuments = await t.store.seriesDays.countDocuments({ batches: { $exists: true } });
    // Every old document of a batch with an id: all but those only the batch without an id wrote to.
    const withId = [...OLD.filter((batch) => batch.id !== undefined).flatMap((batch) => batch.readings)];
    const expectedMarked =
      new Set([...withId.map((r) => `cpu|${r.host}|${dayOf(r.time)}`), ...[...partialDocuments].map((key) => `cpu|${key}`)]).size +
      new Set(PRE.readings.map((r) => `pre|${r.host}|${dayOf(r.time)}`)).size +
      new Set(GONE.readings.map((r) => `gone|${r.host}|${dayOf(r.time)}`)).size;
    expect(markedDocuments).toBe(expectedMarked);
    const pending = await pendingMigration(t.store);
    expect(pending.claims).toEqual({
      claims: 8,
      applied: 6,
      inLog: 0,
      inProgress: [
        { id: PARTIAL.id, receivedAt: expect.any(Date), readings: PARTIAL.readings.length, documents: 2, decision: 'partial' },
        { id: UNSTARTED.id, receivedAt: expect.any(Date), readings: UNSTARTED.readings.length, documents: 0, decision: 'dropped' },
      ],
      markedDocuments,
    });
    expect(await t.store.batches.countDocuments({})).toBe(8);
    expect(await t.store.seriesDays.countDocuments({ batches: { $exists: true } })).toBe(markedDocuments);
    expect(await ingestLog(t.store).countDocuments({})).toBe(1);
    const text = await migrateCli(dbName, ['--dry-run']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Batch claims of the write path before the ingest log: 8; a migration would carry 6 of applied batches');
    expect(text.stdout).toContain(`${PARTIAL.id} (received`);
    expect(text.stdout).toContain('carried as partly applied');
    expect(text.stdout).toContain(`${UNSTARTED.id} (received`);
    expect(text.stdout).toContain('no document applied it');
  });

  it('npm run migrate carries the claims into the ingest log, marks the rollup days dirty, removes the marks and reports it', async () => {
    const run = await migrateCli(dbName, ['--json', '--batch', '4']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    const partialDays = new Set([...partialDocuments].map((key) => Number(key.split('|')[1])));
    expect(report.claims).toMatchObject({
      carriedApplied: 6,
      carriedPartial: 1,
      dropped: 1,
      inLog: 0,
      claimsRemoved: 8,
      rollupDaysMarkedDirty: partialDays.size,
    });
    expect(report.marksRemoved).toBe(markedDocuments);
    expect(run.stderr).toContain(`migrate: ${markedDocuments}/${markedDocuments} documents cleaned of batch marks`);
    expect(await t.store.batches.countDocuments({})).toBe(0);
    expect(await t.store.seriesDays.countDocuments({ batches: { $exists: true } })).toBe(0);
    const carried = await ingestLog(t.store)
      .find({ claim: { $exists: true } })
      .sort({ _id: 1 })
      .toArray();
    expect(carried.map((entry) => [entry._id, entry.claim?.state, entry.fold, entry.readings, entry.t?.length])).toEqual([
      ['gone-1', 'applied', 0, GONE.readings.length, 0],
      ['old-1', 'applied', 0, 60, 0],
      ['old-2', 'applied', 0, 60, 0],
      ['old-3', 'applied', 0, 60, 0],
      ['old-4', 'applied', 0, 60, 0],
      ['old-partial', 'partial', 0, PARTIAL.readings.length, 0],
      ['pre-1', 'applied', 0, PRE.readings.length, 0],
    ]);
    // They expire when the claims would have.
    for (const entry of carried) expect(entry.foldedAt?.getTime(), String(entry._id)).toBe(claimsCreatedAt.get(String(entry._id)));
    const [rollup] = await findRollups(t.store, ['cpu']);
    expect(Object.keys(rollup!.dirty ?? {}).length).toBe(partialDays.size);
    // Dirty days are read from the series-day documents, which hold the stopped batch's readings.
    await expectSeriesAnswers('cpu', cpu);
    expect((await rollupAnswers()).totals).toEqual([totalsOf(cpu)]);
    expect(await exportRows()).toEqual(['host,start,count,sum', ...expectedExport(cpu)]);

    const again = await migrateLayout(t.store);
    expect(again).toMatchObject({
      claims: { carriedApplied: 0, carriedPartial: 0, dropped: 0, inLog: 0, inProgress: [], claimsRemoved: 0, rollupDaysMarkedDirty: 0 },
      marksRemoved: 0,
    });
  });

  it('resends keep the meaning of the old claims: already applied, reused, completed, stored whole', async () => {
    const log = ingestLog(t.store);
    const send = (readings: readonly Sent[], batchId: string, metric = 'cpu') =>
      t.graphql<{ recordReadings: unknown }>(RECORD, { readings: inputOf(metric, readings), batchId });

    const applied = await send(OLD[0]!.readings, 'old-1');
    expect(applied.data?.recordReadings).toEqual({ recorded: 60, applied: 0, alreadyApplied: 60 });
    const pre = await send(PRE.readings, 'pre-1', 'pre');
    expect(pre.data?.recordReadings).toEqual({ recorded: PRE.readings.length, applied: 0, alreadyApplied: PRE.readings.length });

    const entries = await log.countDocuments({});
    const other = OLD[1]!.readings.map((r, i) => (i === 0 ? { ...r, value: r.value + 1 } : r));
    const reused = await send(other, 'old-2');
    expect(reused.errors?.[0]?.extensions?.code).toBe('BATCH_ID_REUSED');
    expect(await log.countDocuments({})).toBe(entries);

    const completed = await send(PARTIAL.readings, PARTIAL.id);
    const rest = PARTIAL.readings.filter((r) => !partialDocuments.has(`${r.host}|${dayOf(r.time)}`));
    expect(completed.data?.recordReadings).toEqual({
      recorded: PARTIAL.readings.length,
      applied: rest.length,
      alreadyApplied: partialApplied.length,
    });
    cpu.push(...rest);
    const twice = await send(PARTIAL.readings, PARTIAL.id);
    expect(twice.data?.recordReadings).toEqual({ recorded: PARTIAL.readings.length, applied: 0, alreadyApplied: PARTIAL.readings.length });

    const whole = await send(UNSTARTED.readings, UNSTARTED.id);
    expect(whole.data?.recordReadings).toEqual({
      recorded: UNSTARTED.readings.length,
      applied: UNSTARTED.readings.length,
      alreadyApplied: 0,
    });
    cpu.push(...UNSTARTED.readings);

    // From the tail, then folded; the rebuild of the dirty days makes the rollup exact again.
    await expectSeriesAnswers('cpu', cpu);
    expect(await t.settle()).toBe(rest.length + UNSTARTED.readings.length);
    await expectSeriesAnswers('cpu', cpu);
    await expectSeriesAnswers('pre', PRE.readings);
    expect(await rebuildDirtyDays(t.store, 0)).toMatchObject({ dirty: 0 });
    expect(await rollupAnswers()).toEqual({ totals: [totalsOf(cpu)], hours: expectedBuckets(cpu, HOUR), sources: ['all', 'all'] });
  });

  it('retention deletes old documents like parts', async () => {
    await setRetention(t.store, 'gone', { minutes: null, hours: null, days: 1 }, new Date(START + 2 * DAY + HOUR));
    await applyRetention(t.store, START + 2 * DAY + HOUR, { metric: 'gone' });
    expect(await t.store.seriesDays.countDocuments({ metric: 'gone', date: new Date(START) })).toBe(0);
    await expectSeriesAnswers(
      'gone',
      GONE.readings.filter((r) => r.time >= START + DAY),
      new Date(START + DAY).toISOString(),
    );
  });

  it('compaction rewrites the days of old documents and parts into the new layout, and no old document is left after the grace period', async () => {
    const before = await t.store.seriesDays.find({ metric: { $in: ['cpu', 'pre'] } }).toArray();
    expect(before.some((doc) => doc._id instanceof ObjectId)).toBe(true);
    const compactions: number[] = [];
    for (;;) {
      const outcome = await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 3_600_000 });
      if (outcome.compaction === null) break;
      compactions.push(outcome.compaction);
    }
    expect(compactions.length).toBeGreaterThan(0);
    // During the grace period: old documents still stored, every answer exact.
    expect(await t.store.seriesDays.countDocuments({ _id: { $type: 'objectId' } } as never)).toBeGreaterThan(0);
    await expectSeriesAnswers('cpu', cpu);
    await expectSeriesAnswers('pre', PRE.readings);
    expect(await rollupAnswers()).toEqual({ totals: [totalsOf(cpu)], hours: expectedBuckets(cpu, HOUR), sources: ['all', 'all'] });

    // After it: only the merged documents, one per series-day (and rollup group-day).
    await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    const [rollup] = await findRollups(t.store, ['cpu']);
    for (const name of ['series_days', rollup!.collection]) {
      const docs = await t.store.db.collection(name).find({}).toArray();
      expect(
        docs.filter((doc) => typeof doc._id !== 'string' || typeof doc.f !== 'number' || 'batches' in doc).map((doc) => doc._id),
        name,
      ).toEqual([]);
      const keys = docs.map((doc) => `${doc.series}|${doc.date.getTime()}`);
      expect(new Set(keys).size, name).toBe(keys.length);
    }
    const cpuDocs = await t.store.seriesDays.find({ metric: 'cpu' }).toArray();
    expect(cpuDocs.length).toBe(new Set(cpu.map((r) => `${r.host}|${dayOf(r.time)}`)).size);
    expect(cpuDocs.every((doc) => compactions.includes((doc as { f?: number }).f!) && doc.v === 2)).toBe(true);
    await expectSeriesAnswers('cpu', cpu);
    await expectSeriesAnswers('pre', PRE.readings);
    expect(await rollupAnswers()).toEqual({ totals: [totalsOf(cpu)], hours: expectedBuckets(cpu, HOUR), sources: ['all', 'all'] });
    expect(await exportRows()).toEqual(['host,start,count,sum', ...expectedExport(cpu)]);
  });
});
