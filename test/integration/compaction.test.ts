/**
 * Compaction of series-day parts (docs/ingest-design.md, "Compaction"; `compactOnce` in
 * src/storage/fold.ts), checked end to end through GraphQL and on the stored documents,
 * against a real database. Every expected answer comes from a plain loop over the
 * readings the test sent, never from the code under test.
 *
 * What it proves:
 * 1. Many parts per series-day (one fold per batch) merged by one compaction: every
 *    answer (aggregate statistics, first/last, percentiles within the sketches' 1%,
 *    MINUTE/HOUR/DAY buckets, latest values, first and last reading times, latest
 *    readings) is the same and exact before the compaction, during its grace period
 *    (one visible document per series-day with `f` = the compaction's number, the
 *    replaced parts still stored, the record in `fold_state.compactions`) and after the
 *    replaced parts were deleted (record gone). A metric keeping fewer latest readings
 *    (3) than each part and each day holds checks that truncated lists merge right.
 * 2. A reader that read the view (`readView`) before the flip keeps reading the parts,
 *    and not the merged documents, while they are kept: old view and new view both see
 *    every reading exactly once.
 * 3. Crash completion: a compaction left `running` by a holder whose lease expired, with
 *    some of its merged documents inserted, is invisible to readers, and is completed
 *    by another holder's `foldOnce` (same document ids, the hand-inserted one skipped)
 *    before that holder folds what is waiting; the dead holder cannot act afterwards.
 * 4. Folds after a compaction add parts read together with the merged documents; a
 *    second compaction of a day (only the day that became due) replaces both the
 *    merged document and the new parts; a cleanup with no grace leaves only the newest
 *    documents.
 * 5. `deleteSeries` after a compaction, while its replaced parts are in grace: the
 *    series is gone from the answers and the documents, the other series stay exact,
 *    before and after the cleanup.
 * 6. Tiers: `compactOnce` with `tiered` merges the parts since a day's last compaction
 *    with the newest runs no larger than them (`tieredFrom`), keeps the older runs'
 *    documents, writes the day one `whole` summary composed from its summaries (checked
 *    against a plain loop), and merges the whole day once every run is taken in; the
 *    server's fold job (`foldJob`) compacts so: runs of one size merge like a binary
 *    counter.
 *
 * 7. Quiet days: a day of two folds or more that no fold wrote to for `quietMs` is
 *    compacted before `afterFolds` folds reach it, and only that day; with `quietMs` 0
 *    every such day is; without the rule, none.
 *
 * No folder runs in the background of a test app (test/helpers/app.ts): folds and
 * compactions happen only where a test calls them. Each `describe` has its own
 * database, so `fold_state` (fold numbers, `touched`, compactions) is its own.
 */
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldJob } from '../../src/jobs/fold-job.ts';
import { sketchKey } from '../../src/model/sketch.ts';
import { CollectionName } from '../../src/storage/store.ts';
import { foldOnce } from '../../src/storage/fold.ts';
import { expectedBuckets, expectPercentile, newestFirst, type Sent, spread as spreadFrom } from '../helpers/plain-loop.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { slotFormDocument } from '../../src/documents/encode.ts';
import { mergeParts } from '../../src/documents/merge.ts';
import type { DaySummary } from '../../src/documents/summaries.ts';
import { FOLDS_ID, foldState, readView, visibleIn, type FoldStateDocument, type ReadView } from '../../src/storage/fold-state.ts';
import { compactOnce, type CompactOutcome } from '../../src/storage/compaction.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Every reading of the file lies in the two UTC days from here. */
const START = Date.UTC(2024, 2, 1);
const DAY0 = START;
const DAY1 = START + DAY;
const FROM = new Date(START).toISOString();
const TO = new Date(START + 2 * DAY).toISOString();
/** A grace period no test outlives: replaced parts stay. */
const LONG_GRACE = 3_600_000;

// ---------------------------------------------------------------------------------
// Readings
// ---------------------------------------------------------------------------------

/** {@link spreadFrom} from this file's first day. */
const spread = (count: number, seed: number): Sent[] => spreadFrom(START, count, seed);

/**
 * Like {@link spread}, but every reading on the second day (minute (k x 7919) mod 1440),
 * half a second off the whole second, so its times never meet those of `spread`.
 */
function secondDayOnly(count: number, seed: number): Sent[] {
  return spread(count, seed).map((r, i) => ({
    ...r,
    time: DAY1 + (((seed + i) * 7919) % 1440) * MINUTE + ((seed + i) % 60) * 1000 + 500,
  }));
}

/** UTC midnight (ms) of a reading's day. */
const dayOf = (time: number) => Math.floor(time / DAY) * DAY;

/** Counts in `touched` (day ms -> folds) one more fold for every day `batch` has readings on, as a fold does. */
function countFold(touched: Map<number, number>, batch: readonly Sent[]): void {
  for (const day of new Set(batch.map((r) => dayOf(r.time)))) touched.set(day, (touched.get(day) ?? 0) + 1);
}

/** `touched` as `fold_state.touched` stores it (day ms as a string -> folds). */
const asStored = (touched: ReadonlyMap<number, number>) => Object.fromEntries([...touched].map(([day, folds]) => [String(day), folds]));

/** The distinct series-days of `readings`, as `host|day ms`. */
const seriesDays = (readings: readonly Sent[]) => new Set(readings.map((r) => `${r.host}|${dayOf(r.time)}`));

// ---------------------------------------------------------------------------------
// GraphQL
// ---------------------------------------------------------------------------------

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { recorded applied alreadyApplied }
}`;
const AGGREGATE = `query($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to) {
    count sum min max avg first { time value } last { time value } p50 p90
  }
}`;
const BUCKETS = `query($metric: String!, $granularity: Granularity!, $from: Time!, $to: Time!) {
  buckets(metric: $metric, field: "v", granularity: $granularity, from: $from, to: $to, fill: NONE) {
    buckets { start count sum min max first { time value } last { time value } p50 }
  }
}`;
const LATEST = `query($metric: String!) {
  all: latestValues(metric: $metric, field: "v") { latest { time value } }
  byHost: latestValues(metric: $metric, field: "v", groupBy: ["host"]) { tags { key value } latest { time value } }
  series(metric: $metric) {
    id firstReadingAt lastReadingAt
    latestValue(field: "v") { time value }
    latest5: latest(n: 5) { time value(field: "v") }
    latest3: latest(n: 3) { time value(field: "v") }
  }
}`;
const SET_STATISTICS = `mutation($metric: String!, $latestReadings: Int!) {
  setMetricStatistics(metric: $metric, latestReadings: $latestReadings, sketchLevels: [DAY, HOUR, MINUTE]) {
    statistics { latestReadings sketchLevels }
  }
}`;
const DELETE_SERIES = `mutation($id: ID!) { deleteSeries(id: $id) { documents series metrics } }`;

interface TimedValue {
  time: string;
  value: number;
}
interface BucketRow {
  start: string;
  count: number;
  sum: number;
}
/** A bucket as asked for: the plain loop's {@link BucketRow} plus what is checked against each bucket's own readings. */
interface BucketAnswer extends BucketRow {
  min: number;
  max: number;
  first: TimedValue;
  last: TimedValue;
  p50: number | null;
}
interface LatestAnswer {
  all: { latest: TimedValue | null }[];
  byHost: { tags: { key: string; value: string }[]; latest: TimedValue | null }[];
  series: {
    id: string;
    firstReadingAt: string | null;
    lastReadingAt: string | null;
    latestValue: TimedValue | null;
    latest5: TimedValue[];
    latest3: TimedValue[];
  }[];
}

/** Sends `query` to `app`, checks the answer has no errors, and returns its data. */
async function ask<T>(app: TestApp, query: string, variables: Record<string, unknown>): Promise<T> {
  const answer = await app.graphql<T>(query, variables);
  expect(answer.errors).toBeUndefined();
  return answer.data!;
}

/** Records `readings` under each of `metrics` (the same readings once per metric) as one batch `batchId`. */
async function record(app: TestApp, metrics: readonly string[], readings: readonly Sent[], batchId: string): Promise<void> {
  const input = metrics.flatMap((metric) =>
    readings.map((r) => ({
      metric,
      tags: [{ key: 'host', value: r.host }],
      time: new Date(r.time).toISOString(),
      fields: [{ name: 'v', value: r.value }],
    })),
  );
  const answer = await ask<{ recordReadings: { recorded: number; applied: number; alreadyApplied: number } }>(app, RECORD, {
    readings: input,
    batchId,
  });
  expect(answer.recordReadings).toEqual({ recorded: input.length, applied: input.length, alreadyApplied: 0 });
}

/** Records `readings` of `metrics` as batch `batchId` and folds that batch alone; returns the fold's number. */
async function recordAndFold(app: TestApp, metrics: readonly string[], readings: readonly Sent[], batchId: string): Promise<number> {
  await record(app, metrics, readings, batchId);
  const outcome = await foldOnce(app.store, app.store.holder, { maxReadings: 1 });
  expect(outcome).toMatchObject({ leased: true, entries: 1, readings: readings.length * metrics.length });
  return outcome.fold!;
}

// ---------------------------------------------------------------------------------
// Plain loops: the expected answers
// ---------------------------------------------------------------------------------

/** An ISO time and value of a reading, as the API answers them. */
const timed = (r: Sent): TimedValue => ({ time: new Date(r.time).toISOString(), value: r.value });

/** The earliest and the latest reading, by a plain loop (the tests send distinct times per series). */
function expectedEdges(readings: readonly Sent[]): { first: Sent; last: Sent } {
  let first = readings[0]!;
  let last = readings[0]!;
  for (const r of readings) {
    if (r.time < first.time || (r.time === first.time && r.value < first.value)) first = r;
    if (r.time > last.time || (r.time === last.time && r.value > last.value)) last = r;
  }
  return { first, last };
}

/** The readings of each bucket of `size` ms (UTC-aligned), by bucket start (ms). */
function bucketReadings(readings: readonly Sent[], size: number): Map<number, Sent[]> {
  const buckets = new Map<number, Sent[]>();
  for (const r of readings) {
    const start = Math.floor(r.time / size) * size;
    const bucket = buckets.get(start);
    if (bucket) bucket.push(r);
    else buckets.set(start, [r]);
  }
  return buckets;
}

/**
 * Checks every answer about `metric` against plain loops over `readings`: aggregate
 * (count, sum, min, max, avg, first, last exact; p50 and p90 within the sketch's
 * accuracy), MINUTE/HOUR/DAY buckets (count and sum), latest values overall and per
 * host, and per series its first and last reading times, latest value and latest
 * readings. `latest(n: 3)` must be the newest 3 exactly; `latest(n: 5)` too when the
 * metric keeps at least 5 latest readings (`kept`), otherwise a correct newest-first
 * prefix of at least `kept` readings (the schema allows fewer than `n` then). Each
 * bucket's min, max, first and last are checked against its own readings, and its p50
 * within the sketch's accuracy (at the minute level only when `minuteSketches`; the
 * default settings keep none there, and the answer is null).
 */
async function expectAnswers(app: TestApp, metric: string, readings: readonly Sent[], kept: number, minuteSketches = false): Promise<void> {
  const { aggregate } = await ask<{
    aggregate: {
      count: number;
      sum: number;
      min: number;
      max: number;
      avg: number;
      first: TimedValue;
      last: TimedValue;
      p50: number | null;
      p90: number | null;
    }[];
  }>(app, AGGREGATE, { metric, from: FROM, to: TO });
  expect(aggregate).toHaveLength(1);
  const row = aggregate[0]!;
  const values = readings.map((r) => r.value);
  const sum = values.reduce((a, b) => a + b, 0);
  expect({ count: row.count, sum: row.sum, min: row.min, max: row.max }).toEqual({
    count: readings.length,
    sum,
    min: Math.min(...values),
    max: Math.max(...values),
  });
  expect(row.avg).toBe(sum / readings.length);
  const edges = expectedEdges(readings);
  expect(row.first).toEqual(timed(edges.first));
  expect(row.last).toEqual(timed(edges.last));
  expectPercentile(row.p50, readings, 50);
  expectPercentile(row.p90, readings, 90);

  for (const [granularity, size] of [
    ['MINUTE', MINUTE],
    ['HOUR', HOUR],
    ['DAY', DAY],
  ] as const) {
    const { buckets } = await ask<{ buckets: { buckets: BucketAnswer[] }[] }>(app, BUCKETS, { metric, granularity, from: FROM, to: TO });
    const rows = buckets[0]?.buckets ?? [];
    expect(
      rows.map(({ start, count, sum }) => ({ start, count, sum })),
      `${metric} ${granularity}`,
    ).toEqual(expectedBuckets(readings, size));
    const own = bucketReadings(readings, size);
    for (const row of rows) {
      const inBucket = own.get(Date.parse(row.start))!;
      const bucketEdges = expectedEdges(inBucket);
      expect({ min: row.min, max: row.max, first: row.first, last: row.last }, `${metric} ${granularity} ${row.start}`).toEqual({
        min: Math.min(...inBucket.map((r) => r.value)),
        max: Math.max(...inBucket.map((r) => r.value)),
        first: timed(bucketEdges.first),
        last: timed(bucketEdges.last),
      });
      if (granularity !== 'MINUTE' || minuteSketches) expectPercentile(row.p50, inBucket, 50);
      else expect(row.p50).toBeNull();
    }
  }

  const latest = await ask<LatestAnswer>(app, LATEST, { metric });
  const hosts = [...new Set(readings.map((r) => r.host))].sort();
  expect(latest.all).toEqual([{ latest: timed(edges.last) }]);
  expect(latest.byHost).toEqual(
    hosts.map((host) => ({ tags: [{ key: 'host', value: host }], latest: timed(expectedEdges(newestFirst(readings, host)).last) })),
  );
  expect(latest.series.map((series) => series.id)).toEqual(hosts.map((host) => `${metric},host=${host}`));
  for (const [i, host] of hosts.entries()) {
    const series = latest.series[i]!;
    const own = newestFirst(readings, host);
    const ownEdges = expectedEdges(own);
    expect(series.firstReadingAt, series.id).toBe(timed(ownEdges.first).time);
    expect(series.lastReadingAt, series.id).toBe(timed(ownEdges.last).time);
    expect(series.latestValue, series.id).toEqual(timed(ownEdges.last));
    expect(series.latest3, series.id).toEqual(own.slice(0, 3).map(timed));
    if (kept >= 5) expect(series.latest5, series.id).toEqual(own.slice(0, 5).map(timed));
    else {
      expect(series.latest5.length, series.id).toBeGreaterThanOrEqual(Math.min(kept, own.length));
      expect(series.latest5, series.id).toEqual(own.slice(0, series.latest5.length).map(timed));
    }
  }
}

// ---------------------------------------------------------------------------------
// Stored state
// ---------------------------------------------------------------------------------

/** The fold state document of `app`'s database. */
const stateOf = async (app: TestApp): Promise<FoldStateDocument> => (await foldState(app.store.db).findOne({ _id: FOLDS_ID }))!;

/** The series-day documents of `metric` a reader with `view` reads (default: the view now). */
async function visibleDocs(app: TestApp, metric: string, view?: ReadView): Promise<SeriesDayDocument[]> {
  const filter = { metric, ...visibleIn(view ?? (await readView(app.store))) };
  return (await app.store.seriesDays.find(filter).toArray()) as SeriesDayDocument[];
}

/** A document's `f` (fold or compaction number; undefined for a document written before folds). */
const fOf = (doc: SeriesDayDocument) => (doc as SeriesDayDocument & { f?: number }).f;

/**
 * Checks that the documents of `metric` visible now are exactly one per series-day of
 * `readings`, each with `f` = `c` and `_id` `<series>:<day>:<c>`, holding the plain
 * loop's count of readings of that series-day and, as latest readings (or readings, in
 * the raw form), its newest min(`kept`, count) readings (times, oldest first).
 */
async function expectMerged(app: TestApp, metric: string, readings: readonly Sent[], c: number, kept: number): Promise<void> {
  const docs = await visibleDocs(app, metric);
  expect(docs.map((doc) => `${doc.tags.host}|${doc.date.getTime()}`).sort()).toEqual([...seriesDays(readings)].sort());
  for (const doc of docs) {
    const own = readings.filter((r) => r.host === doc.tags.host && dayOf(r.time) === doc.date.getTime()).sort((a, b) => a.time - b.time);
    expect(fOf(doc)).toBe(c);
    expect(String(doc._id)).toBe(`${doc.series}:${doc.date.getTime()}:${c}`);
    expect(doc.readings).toBe(own.length);
    expect(doc.fields.v!.n).toBe(own.length);
    // In the raw form (`r`), a document's readings are its latest readings.
    expect((doc.r ?? doc.recent ?? []).map((reading) => reading.t.getTime())).toEqual(own.slice(-kept).map((r) => r.time));
  }
}

/** Sum of `readings` over documents (the readings they count). */
const readingsIn = (docs: readonly SeriesDayDocument[]) => docs.reduce((total, doc) => total + (doc.readings ?? 0), 0);

/** A day's runs in a fold state as the fold numbers they span: `{from, folds}` (their documents and readings left out). */
const spansOf = (state: FoldStateDocument, day: number) => (state.runs?.[String(day)] ?? []).map(({ from, folds }) => ({ from, folds }));

/** Sum of field `v`'s values over documents' day totals. */
const sumIn = (docs: readonly SeriesDayDocument[]) => docs.reduce((total, doc) => total + (doc.fields.v?.sum ?? 0), 0);

/** A compaction's outcome where it merged `days` days and made compaction `c` visible. */
const compacted = (c: number, days: number, merged: number, documents: number, deleted = 0): CompactOutcome => ({
  leased: true,
  compaction: c,
  days,
  merged,
  documents,
  deleted,
});

// ---------------------------------------------------------------------------------
// 1 and 2. Many parts merged by one compaction
// ---------------------------------------------------------------------------------

describe('a compaction of many parts per series-day', () => {
  let t: TestApp;
  /** `full` keeps the default 50 latest readings; `k3` keeps 3 and sketches at every level. */
  const METRICS = ['full', 'k3'] as const;
  const KEPT = { full: 50, k3: 3 } as const;
  const BATCHES = 10;
  const SIZE = 36;
  const sent: Sent[] = [];
  /** Parts the folds wrote, by a plain loop: `<metric>|<host>|<day>|<fold>`. */
  const parts = new Set<string>();
  /** Folds that wrote to each day, by a plain loop. */
  const touched = new Map<number, number>();
  let lastFold = 0;

  beforeAll(async () => {
    t = await openTestApp('compact_many');
    const answer = await ask<{ setMetricStatistics: { statistics: unknown } }>(t, SET_STATISTICS, { metric: 'k3', latestReadings: 3 });
    expect(answer.setMetricStatistics.statistics).toEqual({ latestReadings: 3, sketchLevels: ['DAY', 'HOUR', 'MINUTE'] });
    for (let b = 0; b < BATCHES; b++) {
      const batch = spread(SIZE, b * SIZE);
      lastFold = await recordAndFold(t, METRICS, batch, `many-${b}`);
      expect(lastFold).toBe(b + 1);
      sent.push(...batch);
      for (const metric of METRICS) for (const r of batch) parts.add(`${metric}|${r.host}|${dayOf(r.time)}|${lastFold}`);
      countFold(touched, batch);
    }
  });
  afterAll(async () => t.close());

  /** Every answer of both metrics, exact. */
  const expectAll = async () => {
    for (const metric of METRICS) await expectAnswers(t, metric, sent, KEPT[metric], metric === 'k3');
  };

  it('keeps every answer exact before, during and after the grace period, and replaces the parts by one document per series-day', async () => {
    // Ten folds: many parts per series-day, each day touched by every fold that wrote to it.
    const stored = await t.store.seriesDays.find({}, { projection: { metric: 1, tags: 1, date: 1, f: 1 } }).toArray();
    expect(new Set(stored.map((doc) => `${doc.metric}|${doc.tags.host}|${doc.date.getTime()}|${fOf(doc)}`))).toEqual(parts);
    expect(stored).toHaveLength(parts.size);
    expect(parts.size).toBeGreaterThan(METRICS.length * seriesDays(sent).size * 5);
    const before = await stateOf(t);
    expect(before.visible).toBe(BATCHES);
    expect(before.touched).toEqual(asStored(touched));
    await expectAll();

    // A reader that reads the view now, before the flip.
    const oldView = await readView(t.store);
    const outcome = await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE });
    const c = lastFold + 1;
    expect(outcome).toEqual(compacted(c, 2, parts.size, METRICS.length * seriesDays(sent).size));
    const during = await stateOf(t);
    expect(during.visible).toBe(c);
    expect(during.running).toBeNull();
    expect(during.touched).toEqual({});
    expect(during.compactions).toHaveLength(1);
    expect(during.compactions![0]!.c).toBe(c);
    expect(during.compactions![0]!.days.map((day) => day.getTime())).toEqual([DAY0, DAY1]);
    expect(during.compactions![0]!.at).toBeInstanceOf(Date);

    // One visible document per series-day, the merge of its parts; the parts are kept.
    for (const metric of METRICS) await expectMerged(t, metric, sent, c, KEPT[metric]);
    expect(await t.store.seriesDays.countDocuments({ f: { $lt: c } })).toBe(parts.size);
    await expectAll();

    // The old reader still reads the parts, never the merged documents; the new one the
    // merged documents only: both see every reading once.
    for (const metric of METRICS) {
      const old = await visibleDocs(t, metric, oldView);
      expect(old.every((doc) => fOf(doc)! < c)).toBe(true);
      expect(old).toHaveLength([...parts].filter((part) => part.startsWith(`${metric}|`)).length);
      const now = await visibleDocs(t, metric);
      expect(now.every((doc) => fOf(doc) === c)).toBe(true);
      const total = sent.reduce((s, r) => s + r.value, 0);
      for (const docs of [old, now]) {
        expect(readingsIn(docs)).toBe(sent.length);
        expect(sumIn(docs)).toBe(total);
      }
    }

    // Nothing is due, and the grace period has not passed: nothing changes.
    expect(await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE })).toEqual({
      leased: true,
      compaction: null,
      days: 0,
      merged: 0,
      documents: 0,
      deleted: 0,
    });
    expect(await t.store.seriesDays.countDocuments({})).toBe(parts.size + METRICS.length * seriesDays(sent).size);

    // No grace: the replaced parts are deleted and the record dropped.
    const cleanup = await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: 0 });
    expect(cleanup).toEqual({ leased: true, compaction: null, days: 0, merged: 0, documents: 0, deleted: parts.size });
    const after = await stateOf(t);
    expect(after.compactions).toEqual([]);
    expect(after.visible).toBe(c);
    expect(await t.store.seriesDays.countDocuments({})).toBe(METRICS.length * seriesDays(sent).size);
    for (const metric of METRICS) await expectMerged(t, metric, sent, c, KEPT[metric]);
    await expectAll();
  });
});

// ---------------------------------------------------------------------------------
// 3. A compaction stopped by a crash
// ---------------------------------------------------------------------------------

describe('a compaction stopped by a crash', () => {
  let t: TestApp;
  const metric = 'crash';
  const sent: Sent[] = [];
  const touched = new Map<number, number>();
  /** Parts the folds wrote, by a plain loop: `<host>|<day>|<fold>`. */
  const parts = new Set<string>();
  beforeAll(async () => {
    t = await openTestApp('compact_crash');
    for (let b = 0; b < 4; b++) {
      const batch = spread(30, 100 + b * 30);
      expect(await recordAndFold(t, [metric], batch, `crash-${b}`)).toBe(b + 1);
      sent.push(...batch);
      countFold(touched, batch);
      for (const r of batch) parts.add(`${r.host}|${dayOf(r.time)}|${b + 1}`);
    }
  });
  afterAll(async () => t.close());

  it('is invisible while under way and completed by another holder before it folds', async () => {
    const before = await stateOf(t);
    expect(before.visible).toBe(4);
    expect(before.touched).toEqual(asStored(touched));
    expect(touched.get(DAY0)).toBeGreaterThanOrEqual(2);
    const seq = before.visible + 1;

    // What a compaction of DAY0 leaves when its holder stops after recording `running`
    // and inserting the merged document of one series-day, and its lease then runs out.
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { running: { seq, entries: [], compact: [DAY0] }, lease: { holder: 'dead', until: new Date(0) } } },
    );
    const h0 = (await t.store.series.findOne({ metric, key: `${metric},host=h0` }))!._id;
    const h0Parts = (await t.store.seriesDays.find({ series: h0, date: new Date(DAY0) }).toArray()) as SeriesDayDocument[];
    expect(h0Parts).toHaveLength([...parts].filter((part) => part.startsWith(`h0|${DAY0}|`)).length);
    expect(h0Parts.length).toBeGreaterThanOrEqual(2);
    const { write, version } = mergeParts(h0Parts, 50);
    await t.store.seriesDays.insertOne({
      _id: `${h0}:${DAY0}:${seq}`,
      ...slotFormDocument(write, version),
      f: seq,
    } as unknown as SeriesDayDocument);

    // Under way: readers see the parts and not the merged document; nothing else moved.
    await expectAnswers(t, metric, sent, 50);
    expect(await visibleDocs(t, metric)).toHaveLength(parts.size);

    // A batch waits in the log meanwhile: answered from the tail.
    const late = spread(24, 400);
    await record(t, [metric], late, 'crash-late');
    sent.push(...late);
    await expectAnswers(t, metric, sent, 50);

    // Another holder takes the expired lease: completes compaction `seq` (the merged
    // document already there is skipped), then folds the waiting batch as `seq + 1`.
    expect(await foldOnce(t.store, t.store.holder)).toMatchObject({ leased: true, fold: seq + 1, entries: 1, readings: late.length });
    const after = await stateOf(t);
    expect(after.visible).toBe(seq + 1);
    expect(after.running).toBeNull();
    expect(after.lease?.holder).toBe(t.store.holder);
    expect(after.compactions?.map((record) => ({ c: record.c, days: record.days.map((day) => day.getTime()) }))).toEqual([
      { c: seq, days: [DAY0] },
    ]);
    // DAY0's count started again (with the fold after the compaction); DAY1 was not compacted.
    touched.delete(DAY0);
    countFold(touched, late);
    expect(after.touched).toEqual(asStored(touched));

    // DAY0: one merged document per series (f = seq) plus the late fold's parts; DAY1: parts.
    const visible = await visibleDocs(t, metric);
    const day0 = visible.filter((doc) => doc.date.getTime() === DAY0);
    expect(day0.filter((doc) => fOf(doc) === seq)).toHaveLength(3);
    expect(day0.filter((doc) => fOf(doc) !== seq).every((doc) => fOf(doc) === seq + 1)).toBe(true);
    expect(await t.store.seriesDays.countDocuments({ date: new Date(DAY0), f: seq })).toBe(3);
    expect(readingsIn(visible)).toBe(sent.length);
    await expectAnswers(t, metric, sent, 50);

    // The dead holder comes back: its lease is gone, nothing moves.
    const count = await t.store.seriesDays.countDocuments({});
    expect(await compactOnce(t.store, 'dead', { afterFolds: 1, graceMs: 0 })).toMatchObject({
      leased: false,
      compaction: null,
      deleted: 0,
    });
    expect(await foldOnce(t.store, 'dead')).toMatchObject({ leased: false, fold: null });
    expect((await stateOf(t)).visible).toBe(seq + 1);
    expect(await t.store.seriesDays.countDocuments({})).toBe(count);
    await expectAnswers(t, metric, sent, 50);
  });
});

// ---------------------------------------------------------------------------------
// 4. Folds after a compaction, and a second compaction of the same day
// ---------------------------------------------------------------------------------

describe('folds after a compaction, and a second compaction', () => {
  let t: TestApp;
  const metric = 'again';
  const sent: Sent[] = [];
  const touched = new Map<number, number>();
  beforeAll(async () => {
    t = await openTestApp('compact_again');
  });
  afterAll(async () => t.close());

  it('reads new parts with the merged documents, and merges both again', async () => {
    for (let b = 0; b < 3; b++) {
      const batch = spread(30, 600 + b * 30);
      await recordAndFold(t, [metric], batch, `again-${b}`);
      sent.push(...batch);
    }
    const c1 = 4;
    expect(await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE })).toMatchObject({ compaction: c1, days: 2 });
    await expectMerged(t, metric, sent, c1, 50);
    await expectAnswers(t, metric, sent, 50);

    // Folds after it: two batches on DAY1 only, one on both days; their parts have a
    // larger f and are read together with the merged documents.
    const later = [secondDayOnly(21, 700), secondDayOnly(21, 721), spread(30, 742)];
    const folds: number[] = [];
    for (const [i, batch] of later.entries()) {
      folds.push(await recordAndFold(t, [metric], batch, `again-later-${i}`));
      sent.push(...batch);
      countFold(touched, batch);
      await expectAnswers(t, metric, sent, 50);
    }
    expect(folds).toEqual([c1 + 1, c1 + 2, c1 + 3]);
    const visible = await visibleDocs(t, metric);
    expect(new Set(visible.map(fOf))).toEqual(new Set([c1, ...folds]));
    expect(readingsIn(visible)).toBe(sent.length);

    // A batch left in the tail adds to both.
    const tail = spread(9, 800);
    await record(t, [metric], tail, 'again-tail');
    sent.push(...tail);
    await expectAnswers(t, metric, sent, 50);
    const tailFold = (await foldOnce(t.store, t.store.holder)).fold!;
    expect(tailFold).toBe(c1 + 4);
    countFold(touched, tail);
    expect((await stateOf(t)).touched).toEqual(asStored(touched));
    const touchedDay0 = touched.get(DAY0)!;
    expect(touchedDay0).toBeLessThan(touched.get(DAY1)!);

    // The second compaction takes only the day that became due (DAY0 has fewer folds),
    // merging DAY1's merged documents and its newer parts.
    const c2 = tailFold + 1;
    const day1Docs = await t.store.seriesDays.countDocuments({ metric, date: new Date(DAY1), ...visibleIn(await readView(t.store)) });
    expect(await compactOnce(t.store, t.store.holder, { afterFolds: touchedDay0 + 1, graceMs: LONG_GRACE })).toEqual(
      compacted(c2, 1, day1Docs, 3),
    );
    const state = await stateOf(t);
    expect(state.compactions?.map((record) => [record.c, record.days.map((day) => day.getTime())])).toEqual([
      [c1, [DAY0, DAY1]],
      [c2, [DAY1]],
    ]);
    touched.delete(DAY1);
    expect(state.touched).toEqual(asStored(touched));
    const now = await visibleDocs(t, metric);
    const day1 = now.filter((doc) => doc.date.getTime() === DAY1);
    expect(day1.map(fOf)).toEqual([c2, c2, c2]);
    const day1Sent = sent.filter((r) => dayOf(r.time) === DAY1);
    for (const doc of day1) expect(doc.readings).toBe(day1Sent.filter((r) => r.host === doc.tags.host).length);
    // DAY0 still reads its merged documents of c1 and the parts after them.
    const day0 = now.filter((doc) => doc.date.getTime() === DAY0);
    expect(day0.filter((doc) => fOf(doc) === c1)).toHaveLength(3);
    expect(day0.every((doc) => fOf(doc) === c1 || fOf(doc)! > c1)).toBe(true);
    expect(readingsIn(now)).toBe(sent.length);
    await expectAnswers(t, metric, sent, 50);

    // No grace: every document either compaction replaced goes.
    const stored = await t.store.seriesDays.countDocuments({});
    const cleanup = await compactOnce(t.store, t.store.holder, { afterFolds: 100, graceMs: 0 });
    expect(cleanup.compaction).toBeNull();
    expect(cleanup.deleted).toBe(stored - now.length);
    expect((await stateOf(t)).compactions).toEqual([]);
    expect(await t.store.seriesDays.countDocuments({})).toBe(now.length);
    expect(await t.store.seriesDays.countDocuments({ date: new Date(DAY1) })).toBe(3);
    expect(await t.store.seriesDays.countDocuments({ date: new Date(DAY0), f: { $lt: c1 } })).toBe(0);
    await expectAnswers(t, metric, sent, 50);
  });
});

describe('quiet days (COMPACT_QUIET_MS)', () => {
  let t: TestApp;
  const metric = 'quiet';
  const sent: Sent[] = [];
  beforeAll(async () => {
    t = await openTestApp('compact_quiet');
  });
  afterAll(async () => t.close());

  it('compacts a day of two folds or more once no fold wrote to it for quietMs, before afterFolds folds, and only that day', async () => {
    // Two folds on both days, then, 2.5 s later, one on DAY1 only: DAY0 is quiet for
    // 2.5 s, DAY1 was written just now.
    for (let b = 0; b < 2; b++) {
      const batch = spread(30, 900 + b * 30);
      await recordAndFold(t, [metric], batch, `quiet-${b}`);
      sent.push(...batch);
    }
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const late = secondDayOnly(21, 960);
    const lastFold = await recordAndFold(t, [metric], late, 'quiet-late');
    sent.push(...late);
    const before = await stateOf(t);
    expect(before.touched).toEqual({ [String(DAY0)]: 2, [String(DAY1)]: 3 });
    const written = (day: number) => new Date(before.written![String(day)]!).getTime();
    expect(written(DAY1) - written(DAY0)).toBeGreaterThanOrEqual(2_500);

    // Without the rule, or with a quiet time longer than either day's, nothing is due.
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 8, graceMs: LONG_GRACE })).compaction).toBeNull();
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 8, quietMs: 3_600_000, graceMs: LONG_GRACE })).compaction).toBeNull();

    // One second quiet: DAY0 only, merged into one document per series-day.
    const day0Parts = await t.store.seriesDays.countDocuments({ metric, date: new Date(DAY0) });
    const c = lastFold + 1;
    expect(await compactOnce(t.store, t.store.holder, { afterFolds: 8, quietMs: 1_000, graceMs: LONG_GRACE })).toEqual(
      compacted(c, 1, day0Parts, 3),
    );
    const after = await stateOf(t);
    expect(after.touched).toEqual({ [String(DAY1)]: 3 });
    expect(Object.keys(after.written ?? {})).toEqual([String(DAY1)]);
    const visible = await visibleDocs(t, metric);
    const day0 = visible.filter((doc) => doc.date.getTime() === DAY0);
    expect(day0.map(fOf)).toEqual([c, c, c]);
    expect(visible.filter((doc) => doc.date.getTime() === DAY1).every((doc) => fOf(doc)! < c)).toBe(true);
    expect(readingsIn(visible)).toBe(sent.length);
    await expectAnswers(t, metric, sent, 50);

    // With no quiet time, DAY1 (three folds) is due at once.
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 8, quietMs: 0, graceMs: LONG_GRACE })).compaction).toBe(c + 1);
    const merged = await visibleDocs(t, metric);
    expect(merged.filter((doc) => doc.date.getTime() === DAY1).map(fOf)).toEqual([c + 1, c + 1, c + 1]);
    expect((await stateOf(t)).touched).toEqual({});
    await expectAnswers(t, metric, sent, 50);
  });
});

// ---------------------------------------------------------------------------------
// 5. Deleting a series while replaced parts are in grace
// ---------------------------------------------------------------------------------

describe('deleting a series after a compaction', () => {
  let t: TestApp;
  const metric = 'del';
  const sent: Sent[] = [];
  beforeAll(async () => {
    t = await openTestApp('compact_delete');
  });
  afterAll(async () => t.close());

  it('removes the series from answers and documents, and leaves the others exact', async () => {
    for (let b = 0; b < 3; b++) {
      const batch = spread(30, 900 + b * 30);
      await recordAndFold(t, [metric], batch, `del-${b}`);
      sent.push(...batch);
    }
    expect(await compactOnce(t.store, t.store.holder, { afterFolds: 2, graceMs: LONG_GRACE })).toMatchObject({ compaction: 4, days: 2 });
    // A fold after the compaction, and a batch left in the log.
    const after = spread(30, 990);
    await recordAndFold(t, [metric], after, 'del-after');
    const pending = spread(12, 1020);
    await record(t, [metric], pending, 'del-pending');
    sent.push(...after, ...pending);
    await expectAnswers(t, metric, sent, 50);

    const h1 = (await t.store.series.findOne({ metric, key: `${metric},host=h1` }))!._id;
    const stored = await t.store.seriesDays.countDocuments({ series: h1 });
    const { deleteSeries } = await ask<{ deleteSeries: { documents: number; series: number; metrics: number } }>(t, DELETE_SERIES, {
      id: `${metric},host=h1`,
    });
    // The pending batch is folded first (`foldPending`): its part of h1 is deleted too.
    const pendingDays = new Set(pending.filter((r) => r.host === 'h1').map((r) => dayOf(r.time))).size;
    expect(deleteSeries).toEqual({ documents: stored + pendingDays, series: 1, metrics: 0 });
    expect(await t.store.seriesDays.countDocuments({ series: h1 })).toBe(0);
    const kept = sent.filter((r) => r.host !== 'h1');
    await expectAnswers(t, metric, kept, 50);
    expect(readingsIn(await visibleDocs(t, metric))).toBe(kept.length);

    // The cleanup deletes the other series' replaced parts; the answers stay.
    expect((await stateOf(t)).compactions).toHaveLength(1);
    const replaced = await t.store.seriesDays.countDocuments({ f: { $lt: 4 } });
    expect(replaced).toBeGreaterThan(0);
    const cleanup = await compactOnce(t.store, t.store.holder, { afterFolds: 100, graceMs: 0 });
    expect(cleanup.deleted).toBe(replaced);
    expect(await t.store.seriesDays.countDocuments({ f: { $lt: 4 } })).toBe(0);
    expect((await stateOf(t)).compactions).toEqual([]);
    await expectAnswers(t, metric, kept, 50);
    expect(await t.store.seriesDays.countDocuments({ series: h1 })).toBe(0);
  });
});

describe('compactions in tiers', () => {
  let t: TestApp;
  const metric = 'tiers';
  const sent: Sent[] = [];
  beforeAll(async () => {
    t = await openTestApp('compact_tiers');
  });
  afterAll(async () => t.close());

  /** Records and folds `batches` batches of 20 readings each from `seed`, separately. */
  async function foldBatches(batches: number, seed: number): Promise<void> {
    for (let b = 0; b < batches; b++) {
      const batch = spread(20, seed + b * 20);
      await recordAndFold(t, [metric], batch, `tiers-${seed}-${b}`);
      sent.push(...batch);
    }
  }

  /**
   * Checks the stored day summaries of `metric`: per day of the readings sent, exactly
   * one `whole` summary, numbered `c`, and none older, whose total and per-host counts
   * and sums are the plain loop's over the readings of that day; and that an aggregate
   * grouped by host reads both days from them and answers the plain loop's counts and sums.
   */
  async function expectWholeSummaries(c: number): Promise<void> {
    const stored = await t.store.db.collection<DaySummary>(CollectionName.summaries).find({ metric }).toArray();
    const sketches = await t.store.db.collection<Document>(CollectionName.sketches).find({ metric }).toArray();
    for (const day of [DAY0, DAY1]) {
      const own = sent.filter((r) => dayOf(r.time) === day);
      const ofDay = stored.filter((summary) => summary.date.getTime() === day);
      expect(ofDay.map((summary) => [summary.f, summary.kind])).toEqual([[c, 'whole']]);
      const summary = ofDay[0]!;
      // Its day sketches, alone of the day's: each host's and the day's bins count every reading.
      const sketchesOfDay = sketches.filter((doc) => (doc.date as Date).getTime() === day);
      expect(sketchesOfDay.map((doc) => doc._id)).toEqual([summary._id]);
      const binsOf = (readings: readonly Sent[]) => {
        const bins: Record<string, number> = {};
        for (const r of readings) bins[sketchKey(r.value)] = (bins[sketchKey(r.value)] ?? 0) + 1;
        return bins;
      };
      expect(sketchesOfDay[0]!.total.v).toEqual(binsOf(own));
      const values = sketchesOfDay[0]!.values as { k: string; v: string; q: Record<string, Record<string, number>> }[];
      expect(values.map((value) => value.v).sort()).toEqual([...new Set(own.map((r) => r.host))].sort());
      for (const value of values) expect(value.q.v, `${value.k}=${value.v}`).toEqual(binsOf(own.filter((r) => r.host === value.v)));
      expect(summary.total.v!.n).toBe(own.length);
      expect(summary.total.v!.sum).toBeCloseTo(
        own.reduce((total, r) => total + r.value, 0),
        9,
      );
      const hosts = [...new Set(own.map((r) => r.host))].sort();
      expect(
        summary.values
          .filter((value) => value.k === 'host')
          .map((value) => value.v)
          .sort(),
      ).toEqual(hosts);
      for (const value of summary.values) {
        const ofHost = own.filter((r) => r.host === value.v);
        expect(value.s.v!.n).toBe(ofHost.length);
        expect(value.s.v!.sum).toBeCloseTo(
          ofHost.reduce((total, r) => total + r.value, 0),
          9,
        );
      }
    }
    // A query grouped by host reads both days from them, exactly.
    const answer = await t.graphql<{ aggregate: { tags: { key: string; value: string }[]; count: number; sum: number }[] }>(
      `query($metric: String!, $from: Time!, $to: Time!) {
        aggregate(metric: $metric, field: "v", from: $from, to: $to, groupBy: ["host"]) { tags { key value } count sum }
      }`,
      { metric, from: FROM, to: TO },
    );
    expect(answer.errors).toBeUndefined();
    expect((answer as { extensions?: { reads?: { summaryDays?: number }[] } }).extensions?.reads?.[0]?.summaryDays).toBe(2);
    const hosts = [...new Set(sent.map((r) => r.host))].sort();
    expect(answer.data!.aggregate.map((group) => group.tags[0]!.value).sort()).toEqual(hosts);
    for (const group of answer.data!.aggregate) {
      const ofHost = sent.filter((r) => r.host === group.tags[0]!.value);
      expect(group.count).toBe(ofHost.length);
      expect(group.sum).toBeCloseTo(
        ofHost.reduce((total, r) => total + r.value, 0),
        9,
      );
    }
  }

  it('merges the parts since the last compaction with the runs no larger, the whole day once every run is taken in', async () => {
    const options = { afterFolds: 2, graceMs: 0, tiered: true };
    // Three folds, then the first compaction of the day: whole, one run of 3 folds.
    await foldBatches(3, 900);
    const first = await compactOnce(t.store, t.store.holder, options);
    expect(first.compaction).not.toBeNull();
    await expectMerged(t, metric, sent, first.compaction!, 50);
    await expectAnswers(t, metric, sent, 50);
    expect(spansOf(await stateOf(t), DAY0)).toEqual([{ from: 0, folds: 3 }]);

    // Two folds: a run of 2 does not take in the run of 3, so the first compaction's documents stay.
    await foldBatches(2, 1000);
    const second = await compactOnce(t.store, t.store.holder, options);
    expect(second.compaction).not.toBeNull();
    const state = await stateOf(t);
    const record = state.compactions?.find((entry) => entry.c === second.compaction);
    expect(record?.from).toEqual(record?.days.map(() => first.compaction! + 1));
    expect(spansOf(state, DAY0)).toEqual([
      { from: 0, folds: 3 },
      { from: first.compaction! + 1, folds: 2 },
    ]);
    const afterSecond = await visibleDocs(t, metric);
    expect(new Set(afterSecond.map(fOf))).toEqual(new Set([first.compaction, second.compaction]));
    expect(readingsIn(afterSecond)).toBe(sent.length);
    await expectAnswers(t, metric, sent, 50);
    // Past the grace period the merged parts are deleted, and the documents of the first
    // stay; the day's summaries are one, composed from the summaries before.
    await compactOnce(t.store, t.store.holder, options);
    const stored = (await t.store.seriesDays.find({ metric }).toArray()) as SeriesDayDocument[];
    expect(new Set(stored.map(fOf))).toEqual(new Set([first.compaction, second.compaction]));
    expect(readingsIn(stored)).toBe(sent.length);
    await expectAnswers(t, metric, sent, 50);
    await expectWholeSummaries(second.compaction!);

    // Two folds more: their run takes in the run of 2 (4 folds), then the run of 3: whole again.
    await foldBatches(2, 1100);
    const third = await compactOnce(t.store, t.store.holder, options);
    expect(third.compaction).not.toBeNull();
    expect(spansOf(await stateOf(t), DAY0)).toEqual([{ from: 0, folds: 7 }]);
    await expectMerged(t, metric, sent, third.compaction!, 50);
    await expectAnswers(t, metric, sent, 50);
    await compactOnce(t.store, t.store.holder, options);
    const last = (await t.store.seriesDays.find({ metric }).toArray()) as SeriesDayDocument[];
    expect(new Set(last.map(fOf))).toEqual(new Set([third.compaction]));
    expect(readingsIn(last)).toBe(sent.length);
    await expectWholeSummaries(third.compaction!);
  });
});

/**
 * The fold job as these tests run it: folds of up to 20,000 readings, a day compacted
 * once 2 folds wrote to it, replaced parts kept for {@link LONG_GRACE}; `options`
 * override or add to these.
 */
const compactingJob = (app: TestApp, options: Partial<Parameters<typeof foldJob>[1]> = {}) =>
  foldJob(app.store, { intervalMs: 1_000, maxReadings: 20_000, compactAfterFolds: 2, compactGraceMs: LONG_GRACE, ...options });

/**
 * For each fold number of `folds`, records `spread(20, 21,000 + fold x 20)` (the readings
 * `keep` keeps; all by default) of `metric` as batch `<metric>-<fold>`, then runs `job`.
 * @returns the readings recorded, in order.
 */
async function foldEach(
  app: TestApp,
  job: ReturnType<typeof foldJob>,
  metric: string,
  folds: readonly number[],
  keep: (reading: Sent) => boolean = () => true,
): Promise<Sent[]> {
  const signal = new AbortController().signal;
  const sent: Sent[] = [];
  for (const fold of folds) {
    const batch = spread(20, 21_000 + fold * 20).filter(keep);
    await record(app, [metric], batch, `${metric}-${fold}`);
    sent.push(...batch);
    await job.run(signal);
  }
  return sent;
}

/**
 * Five rounds of two batches over both days, each followed by a run of `job`
 * (`compactAfterFolds: 2`: one compaction a round).
 * @returns the readings sent and the fold state after each round.
 */
async function compactFiveTimes(
  app: TestApp,
  job: ReturnType<typeof foldJob>,
  metric: string,
  prefix: string,
  seed: number,
): Promise<{ sent: Sent[]; states: FoldStateDocument[] }> {
  const signal = new AbortController().signal;
  const sent: Sent[] = [];
  const states: FoldStateDocument[] = [];
  for (let compaction = 0; compaction < 5; compaction++) {
    for (let fold = 0; fold < 2; fold++) {
      const batch = spread(20, seed + (compaction * 2 + fold) * 20);
      expect(new Set(batch.map((r) => dayOf(r.time)))).toEqual(new Set([DAY0, DAY1]));
      await record(app, [metric], batch, `${prefix}-${compaction}-${fold}`);
      sent.push(...batch);
      await job.run(signal);
    }
    states.push(await stateOf(app));
  }
  return { sent, states };
}

/** The sizes in folds of each day's runs (DAY0, DAY1) in a fold state. */
const runSizes = (state: FoldStateDocument): number[][] =>
  [DAY0, DAY1].map((day) => (state.runs?.[String(day)] ?? []).map((run) => run.folds));

describe('the fold job', () => {
  let t: TestApp;
  const metric = 'job_tiers';
  beforeAll(async () => {
    t = await openTestApp('compact_job');
  });
  afterAll(async () => t.close());

  it('compacts in tiers: a day whole at its 1st, 2nd and 4th compaction of runs of one size, its recent parts only at the 3rd and 5th', async () => {
    const job = compactingJob(t);
    const { sent, states } = await compactFiveTimes(t, job, metric, 'job-tiers', 3_000);
    for (const state of states) {
      expect(state.touched?.[String(DAY0)] ?? 0).toBe(0);
      expect([DAY0, DAY1].map((day) => state.runs?.[String(day)]?.[0]?.from)).toEqual([0, 0]);
    }
    const runs = states.map(runSizes);
    // One run after a whole-day compaction (it began at 0), two after one of the recent parts.
    expect(runs).toEqual([
      [[2], [2]],
      [[4], [4]],
      [
        [4, 2],
        [4, 2],
      ],
      [[8], [8]],
      [
        [8, 2],
        [8, 2],
      ],
    ]);
    await expectAnswers(t, metric, sent, 50);
  });

  it('takes the rate a refused writer waits by from its folds at least half full', async () => {
    const seen: { readings: number; seconds: number }[] = [];
    const job = foldJob(t.store, {
      intervalMs: 1_000,
      maxReadings: 40,
      compactAfterFolds: 100,
      compactGraceMs: LONG_GRACE,
      onFold: (outcome, seconds) => seen.push({ readings: outcome.readings, seconds }),
    });
    const signal = new AbortController().signal;
    expect(t.store.ingest.foldRate).toBe(20_000);
    // 30 readings: at least half of the 40 a fold takes, so the rate is that fold's.
    await record(t, ['job_rate'], spread(30, 9_000), 'job-rate-1');
    await job.run(signal);
    expect(seen.map((fold) => fold.readings)).toEqual([30]);
    expect(t.store.ingest.foldRate).toBe(30 / seen[0]!.seconds);
    // 10 readings: a small fold, mostly its fixed round trips, leaves the rate as it was.
    await record(t, ['job_rate'], spread(10, 9_100), 'job-rate-2');
    await job.run(signal);
    expect(seen.map((fold) => fold.readings)).toEqual([30, 10]);
    expect(t.store.ingest.foldRate).toBe(30 / seen[0]!.seconds);
  });
});

describe('an idle folder', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('compact_idle');
  });
  afterAll(async () => t.close());

  it('takes the lease once and writes the fold state again only when half of it has run out', async () => {
    const writes: string[] = [];
    const listener = (event: { commandName: string; databaseName: string; command: Document }) => {
      if (event.databaseName === t.store.db.databaseName && ['findAndModify', 'update'].includes(event.commandName)) {
        if (event.command[event.commandName] === 'fold_state') writes.push(event.commandName);
      }
    };
    t.store.client.on('commandStarted', listener);
    try {
      // Nothing folded, nothing to compact: the first look takes the free lease, the next nine write nothing.
      for (let look = 0; look < 10; look += 1)
        expect(await compactOnce(t.store, t.store.holder)).toMatchObject({ compaction: null, deleted: 0 });
      expect(writes).toEqual(['findAndModify']);
      const held = (await foldState(t.store.db).findOne({ _id: FOLDS_ID }))!.lease!;
      expect(held.holder).toBe(t.store.holder);
      // With less than half of the lease left, the next look renews it.
      const renewAt = new Date(Date.now() + t.store.foldLeaseMs / 2 - 1_000);
      await foldState(t.store.db).updateOne({ _id: FOLDS_ID }, { $set: { 'lease.until': renewAt } });
      writes.splice(0);
      await compactOnce(t.store, t.store.holder);
      expect(writes).toEqual(['findAndModify']);
      expect((await foldState(t.store.db).findOne({ _id: FOLDS_ID }))!.lease!.until.getTime()).toBeGreaterThan(renewAt.getTime());
      // Another holder's look while this one holds the lease writes nothing either.
      writes.splice(0);
      expect(await compactOnce(t.store, 'another')).toMatchObject({ leased: false, compaction: null });
      expect(writes).toEqual([]);
    } finally {
      t.store.client.off('commandStarted', listener);
    }
  });
});

describe('the fold job with a fan-in of 4 (COMPACT_FAN_IN)', () => {
  let t: TestApp;
  const metric = 'job_fan_in';
  beforeAll(async () => {
    t = await openTestApp('compact_job_fan_in');
  });
  afterAll(async () => t.close());

  it('merges a day whole at its 1st and 4th compaction of runs of one size, keeping up to three runs of a size between', async () => {
    const job = compactingJob(t, { compactFanIn: 4 });
    const { sent, states } = await compactFiveTimes(t, job, metric, 'job-fan-in', 9_000);
    const runs = states.map(runSizes);
    // Base 4: 2, then 2+2, 2+2+2, then the whole day (8), then 8+2.
    expect(runs).toEqual([
      [[2], [2]],
      [
        [2, 2],
        [2, 2],
      ],
      [
        [2, 2, 2],
        [2, 2, 2],
      ],
      [[8], [8]],
      [
        [8, 2],
        [8, 2],
      ],
    ]);
    await expectAnswers(t, metric, sent, 50);
  });
});

describe('the fold job with sealed runs (COMPACT_SEAL_READINGS)', () => {
  let t: TestApp;
  const metric = 'job_seal';
  beforeAll(async () => {
    t = await openTestApp('compact_job_seal');
  });
  afterAll(async () => t.close());

  it('stops merging a run once its documents hold the sealing readings on average, and merges only the runs after it', async () => {
    // Each batch puts about 3.3 readings on each of the 3 hosts' series-days of each day:
    // a run of 2 folds holds about 7 per document (open), one of 4 about 13 (sealed at 10).
    const job = compactingJob(t, { compactSealReadings: 10 });
    const { sent, states } = await compactFiveTimes(t, job, metric, 'job-seal', 15_000);
    // Without sealing: 2, 4, 4+2, 8, 8+2 (the first test of 'the fold job'). Sealed at
    // the 2nd compaction, the first 4 folds stay one run; the 4th merges only the 2 runs after it.
    expect(states.map(runSizes)).toEqual([
      [[2], [2]],
      [[4], [4]],
      [
        [4, 2],
        [4, 2],
      ],
      [
        [4, 4],
        [4, 4],
      ],
      [
        [4, 4, 2],
        [4, 4, 2],
      ],
    ]);
    // Each run records its documents (one per host) and their readings, as a plain loop
    // over the batches of its folds counts them (batches of 20, in order).
    const batchesOf = [
      [0, 4],
      [4, 8],
      [8, 10],
    ];
    for (const day of [DAY0, DAY1]) {
      const runs = states.at(-1)!.runs?.[String(day)] ?? [];
      expect(runs.map((run) => ({ documents: run.documents, readings: run.readings }))).toEqual(
        batchesOf.map(([from, to]) => ({
          documents: 3,
          readings: sent.slice(from! * 20, to! * 20).filter((r) => dayOf(r.time) === day).length,
        })),
      );
      expect(runs.slice(0, 2).every((run) => run.readings! >= 10 * run.documents!)).toBe(true);
    }
    // The sealed run of the first 4 folds is the same documents from the 2nd compaction on.
    const sealedFrom = states[1]!.runs?.[String(DAY0)]?.[0];
    expect(states.slice(2).map((state) => state.runs?.[String(DAY0)]?.[0])).toEqual([sealedFrom, sealedFrom, sealedFrom]);
    // Three visible documents per series-day (one per run), holding every reading, and exact answers.
    const visible = await visibleDocs(t, metric);
    expect(visible.length).toBe(3 * 3 * 2);
    expect(readingsIn(visible)).toBe(sent.length);
    await expectAnswers(t, metric, sent, 50);
  });
});

describe('sealed runs after a stopped holder and after a deletion', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('compact_job_seal_crash');
  });
  afterAll(async () => t.close());

  it('records the same run when another holder completes a compaction after its holder stopped, and merges a day whole again after a deletion', async () => {
    const crashMetric = 'job_seal_crash';
    const job = compactingJob(t, { compactSealReadings: 10 });
    // Four folds and two compactions: the run of the first 4 folds is sealed (as in the test before).
    const sent = await foldEach(t, job, crashMetric, [0, 1, 2, 3]);
    // Two folds more, folded without compacting (a fold job that compacts only after 100).
    const late = await foldEach(t, compactingJob(t, { compactAfterFolds: 100 }), crashMetric, [4, 5]);
    sent.push(...late);
    const before = await stateOf(t);
    const sealed = [DAY0, DAY1].map((day) => before.runs?.[String(day)]?.at(-1));
    expect(sealed.map((run) => run?.folds)).toEqual([4, 4]);
    // A holder recorded the compaction of both days' two newest folds (`from` just after
    // their last compaction, as `tieredFrom` gives with the runs sealed), then stopped.
    const seq = before.visible + 1;
    const from = [DAY0, DAY1].map((day) => before.compacted![String(day)]! + 1);
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { running: { seq, entries: [], compact: [DAY0, DAY1], from }, lease: { holder: 'dead', until: new Date(0) } } },
    );
    // This holder completes it as recorded (no settings of its own: `finishRunning` does the same).
    expect(await compactOnce(t.store, t.store.holder, { graceMs: LONG_GRACE })).toMatchObject({ compaction: seq, days: 2 });
    const after = await stateOf(t);
    [DAY0, DAY1].forEach((day, i) => {
      expect(after.runs?.[String(day)]).toEqual([
        sealed[i],
        { from: from[i], folds: 2, documents: 3, readings: late.filter((r) => dayOf(r.time) === day).length },
      ]);
    });
    await expectAnswers(t, crashMetric, sent, 50);

    // Deleting a series voids the days' summaries: the next compaction of a day merges
    // it whole, sealed run included, and every answer stays exact without the series.
    const { deleteSeries } = await ask<{ deleteSeries: { series: number } }>(t, DELETE_SERIES, { id: `${crashMetric},host=h1` });
    expect(deleteSeries.series).toBe(1);
    const kept = sent.filter((r) => r.host !== 'h1');
    kept.push(...(await foldEach(t, job, crashMetric, [6, 7], (r) => r.host !== 'h1')));
    const merged = await stateOf(t);
    expect([DAY0, DAY1].map((day) => spansOf(merged, day))).toEqual([[{ from: 0, folds: 8 }], [{ from: 0, folds: 8 }]]);
    const visible = await visibleDocs(t, crashMetric);
    // One document per remaining series-day (two hosts, two days).
    expect(visible).toHaveLength(4);
    expect(readingsIn(visible)).toBe(kept.length);
    await expectAnswers(t, crashMetric, kept, 50);
  });
});
