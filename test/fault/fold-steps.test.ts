/**
 * Fault tests at each step of a fold and a compaction (docs/ingest-design.md, "Why a
 * fold is applied exactly once"), with real server processes and the fault points of
 * `src/storage/fault-points.ts` (`TEST_FAULT_POINTS`): the server is stopped exactly
 * at a step, and then either the server or its embedded database is killed with
 * SIGKILL there. Steps: a batch's log entry written and its answer not sent
 * (`record:after-log`); half of a fold's parts written (`fold:mid-parts`); all of them,
 * before the flip (`fold:after-parts`); after the flip, before the entries are marked
 * folded (`fold:after-flip`); half of a compaction's merged documents written, none
 * visible and nothing it replaces deleted (`compact:mid-merge`).
 *
 * Two chains run the steps in order, one per kind of kill: servers on the run's test
 * database, which outlives them, each started again after its kill; and one server
 * with the embedded database on its own data directory, which the server restarts
 * after each kill. A client writes batches with batch ids throughout and sends every
 * batch until it is acknowledged, with the same id. Before the steps, a rollup by
 * region is defined and built. Then, for each step in turn:
 * 1. the step is armed (SIGUSR2) and batches are written until the server reports it
 *    stopped there; one more batch is acknowledged while it is stopped, so the kill
 *    also finds acknowledged entries that no fold took;
 * 2. while it is stopped, a read counts exactly the readings of every acknowledged
 *    batch plus some of the batches still unanswered (never half a fold);
 * 3. the server is killed and started again, or the database is killed and the server
 *    released: it carries on against a database that is down and then back;
 * 4. once every batch is acknowledged and every log entry folded, every answer equals a
 *    plain loop over the readings sent: MINUTE/HOUR/DAY buckets and the aggregate
 *    (count, sum, min, max, mean, first, last; p50/p90 within the sketches' 1%), latest
 *    values and readings per series, first and last reading times of the metric and of
 *    each series, the rollup's aggregate and hourly buckets per region; in the
 *    database, the sketches of every visible document, series and rollup alike, count
 *    as many values as its slot, and per day and hour exactly the readings sent; no
 *    document of a fold above the visible fold number is left.
 * Each step starts from the state the one before checked; the chain ends with a check
 * that every log entry is marked folded once another fold ran.
 *
 * A third test runs two servers on one database, both writing: the one holding the fold
 * lease is killed in the middle of a fold, and the other takes the lease over, completes
 * that fold and folds the rest; the answers are exact.
 *
 * Settings keep it quick: a fold every 200 ms (without waiting for the writes to
 * pause, so the steps come within a few hundred batches: `spread` repeats a series'
 * times after 2,880 readings), a 2 s lease, a compaction once two folds
 * wrote to a day, rollup rebuilds every second after 1 s of rest.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Db, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEmbeddedState } from '../../src/embedded/state.ts';
import { FAULT_POINTS, type FaultPoint } from '../../src/storage/fault-points.ts';
import { testMongoUri } from '../helpers/db.ts';
import { expectedBuckets, expectPercentile, newestFirst, type Sent, spread } from '../helpers/plain-loop.ts';
import { graphqlWhenAvailable, isAlive, startServer, stopAllServers, waitUntil, type ServerProcess } from '../helpers/server-process.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { FOLDS_ID, foldState, readView, visibleIn } from '../../src/storage/fold-state.ts';

const METRIC = 'steps';
const ROLLUP = 'by_region';
const FIELD = 'v';
const PER_BATCH = 12;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Every reading lies in the two UTC days from here. */
const START = Date.UTC(2024, 6, 1);
const RANGE = { from: new Date(START).toISOString(), to: new Date(START + 2 * DAY).toISOString() };

/** The settings of every server of this file (see the module comment). */
const SETTINGS = {
  FOLD_INTERVAL_MS: '200',
  // A fold at every look, also while the client keeps writing (it always does here).
  FOLD_QUIET_MS: '0',
  FOLD_LEASE_MS: '2000',
  COMPACT_AFTER_FOLDS: '2',
  ROLLUP_REBUILD_SECONDS: '1',
  ROLLUP_REBUILD_GRACE_MS: '1000',
  RETENTION_SECONDS: '0',
  EMBEDDED_RESTART_DELAY_MS: '200',
};

// ---------------------------------------------------------------------------------
// Readings and the plain loop
// ---------------------------------------------------------------------------------

/** Region of a host: h0 and h1 in `east`, h2 in `west` (the rollup's groups). */
const regionOf = (host: string) => (host === 'h2' ? 'west' : 'east');

/** The readings of batch `b`: {@link spread} over three hosts and two days, numbered from `b` x PER_BATCH (distinct times). */
const batchReadings = (b: number): Sent[] => spread(START, PER_BATCH, b * PER_BATCH);

const batchInput = (b: number) =>
  batchReadings(b).map((r) => ({
    metric: METRIC,
    tags: [
      { key: 'host', value: r.host },
      { key: 'region', value: regionOf(r.host) },
    ],
    time: new Date(r.time).toISOString(),
    fields: [{ name: FIELD, value: r.value }],
  }));

interface TimedValue {
  time: string;
  value: number;
}
const timed = (r: Sent): TimedValue => ({ time: new Date(r.time).toISOString(), value: r.value });

/** count, sum, min, max, mean, first and last of `readings`, by a plain loop (times are distinct). */
function statistics(readings: readonly Sent[]) {
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let first = readings[0]!;
  let last = readings[0]!;
  for (const r of readings) {
    sum += r.value;
    min = Math.min(min, r.value);
    max = Math.max(max, r.value);
    if (r.time < first.time) first = r;
    if (r.time > last.time) last = r;
  }
  return { count: readings.length, sum, min, max, avg: sum / readings.length, first: timed(first), last: timed(last) };
}

/** `readings` grouped by `key`, groups in key order. */
function groupBy<K extends string | number>(readings: readonly Sent[], key: (r: Sent) => K): [K, Sent[]][] {
  const groups = new Map<K, Sent[]>();
  for (const r of readings) {
    const group = groups.get(key(r));
    if (group) group.push(r);
    else groups.set(key(r), [r]);
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

// ---------------------------------------------------------------------------------
// The client: batches with batch ids, each sent until acknowledged
// ---------------------------------------------------------------------------------

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { recorded applied alreadyApplied }
}`;

/**
 * Writes batches 0, 1, 2, ... with ids `<prefix>-<b>`; each is sent until acknowledged,
 * every 100 ms, with the same id, to the server `target` names for that attempt. Keeps,
 * per batch, when it was first sent and when it was first acknowledged (ms, test clock).
 */
class Writer {
  next = 0;
  readonly sentAt = new Map<number, number>();
  readonly ackedAt = new Map<number, number>();
  attempts = 0;
  failures = 0;
  /** Readings that answers said an earlier attempt had stored. */
  alreadyApplied = 0;
  /** Batches whose acknowledgement said an earlier attempt had stored them. */
  readonly foundStored = new Set<number>();

  constructor(
    private readonly prefix: string,
    private readonly target: (worker: number, attempt: number) => ServerProcess,
  ) {}

  /** Sends batch `b` until acknowledged (at most 60 s), as worker `worker`. */
  async send(b: number, worker = 0): Promise<void> {
    this.sentAt.set(b, performance.now());
    const deadline = Date.now() + 60_000;
    for (let attempt = 0; ; attempt++) {
      if (Date.now() > deadline) throw new Error(`batch ${b} was never acknowledged`);
      this.attempts += 1;
      try {
        const answer = await this.target(worker, attempt).graphql<{
          recordReadings: { recorded: number; applied: number; alreadyApplied: number };
        }>(RECORD, { readings: batchInput(b), batchId: `${this.prefix}-${b}` });
        const outcome = answer.body.data?.recordReadings;
        if (answer.status === 200 && outcome && !answer.body.errors) {
          expect(outcome.recorded).toBe(PER_BATCH);
          expect(outcome.applied + outcome.alreadyApplied).toBe(PER_BATCH);
          this.alreadyApplied += outcome.alreadyApplied;
          if (outcome.alreadyApplied > 0) this.foundStored.add(b);
          this.ackedAt.set(b, performance.now());
          return;
        }
        // Only "try again" answers are expected while a server or its database is down.
        for (const error of answer.body.errors ?? []) expect(['UNAVAILABLE', 'INTERNAL_SERVER_ERROR']).toContain(error.extensions?.code);
      } catch (error) {
        if ((error as Error).name === 'AssertionError') throw error;
      }
      this.failures += 1;
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /** Two workers send new batches, 50 ms apart each, until `stop()`; resolves once every batch they began is acknowledged. */
  async run(stop: () => boolean): Promise<void> {
    const worker = async (w: number) => {
      while (!stop()) {
        await this.send(this.next++, w);
        await new Promise((done) => setTimeout(done, 50));
      }
    };
    await Promise.all([worker(0), worker(1)]);
  }

  /** Every reading of every batch sent so far. */
  readings(): Sent[] {
    return [...this.sentAt.keys()].sort((a, b) => a - b).flatMap(batchReadings);
  }
}

// ---------------------------------------------------------------------------------
// Reads and checks
// ---------------------------------------------------------------------------------

interface Answer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
  extensions?: { reads?: { rollup: string | null }[] };
}

/** Sends a GraphQL request (again while UNAVAILABLE, see `graphqlWhenAvailable`) and fails on errors; returns the data and which rollup answered its first read (null: the series). */
async function ask<T>(server: ServerProcess, query: string, variables: Record<string, unknown> = {}) {
  const response = await graphqlWhenAvailable<T>(server, query, variables);
  const body = response.body as Answer<T>;
  if (response.status !== 200 || body.errors?.length || !body.data) {
    const warnings = server.logs.filter((line) => line.level >= 40).slice(-10);
    throw new Error(
      `${server.url} answered ${response.status}: ${JSON.stringify(body)}\nits last warnings:\n${warnings.map((line) => JSON.stringify(line)).join('\n')}`,
    );
  }
  return { data: body.data, rollup: body.extensions?.reads?.[0]?.rollup };
}

const STATISTICS = 'count sum min max avg first { time value } last { time value }';
const AGGREGATE = `query($from: Time!, $to: Time!) {
  aggregate(metric: "${METRIC}", field: "${FIELD}", from: $from, to: $to) { ${STATISTICS} p50 p90 }
}`;
const BUCKETS = `query($granularity: Granularity!, $from: Time!, $to: Time!) {
  buckets(metric: "${METRIC}", field: "${FIELD}", granularity: $granularity, from: $from, to: $to, fill: NONE) {
    buckets { start ${STATISTICS} }
  }
}`;
const LATEST = `{
  metric(name: "${METRIC}") { firstReadingAt lastReadingAt }
  byHost: latestValues(metric: "${METRIC}", field: "${FIELD}", groupBy: ["host"]) { tags { key value } latest { time value } }
  series(metric: "${METRIC}") {
    id firstReadingAt lastReadingAt latestValue(field: "${FIELD}") { time value } latest(n: 5) { time value(field: "${FIELD}") }
  }
}`;
const BY_REGION = `query($from: Time!, $to: Time!) {
  aggregate(metric: "${METRIC}", field: "${FIELD}", from: $from, to: $to, groupBy: ["region"]) { tags { key value } ${STATISTICS} }
}`;
const REGION_HOURS = `query($from: Time!, $to: Time!) {
  buckets(metric: "${METRIC}", field: "${FIELD}", granularity: HOUR, from: $from, to: $to, groupBy: ["region"], fill: NONE) {
    tags { key value } buckets { start count sum min max }
  }
}`;
const ROLLUPS = `{ metric(name: "${METRIC}") { rollups { name state dirtyDays } } }`;

type Statistics = ReturnType<typeof statistics>;

/**
 * Checks every answer of `server` about the metric against plain loops over `readings`
 * (see the module comment, step 4); with `rollup`, the rollup's answers too.
 */
async function expectExact(server: ServerProcess, readings: readonly Sent[], rollup: boolean): Promise<void> {
  const { data } = await ask<{ aggregate: (Statistics & { p50: number; p90: number })[] }>(server, AGGREGATE, RANGE);
  const { p50, p90, ...row } = data.aggregate[0]!;
  expect(row).toEqual(statistics(readings));
  expectPercentile(p50, readings, 50);
  expectPercentile(p90, readings, 90);

  for (const [granularity, size] of [
    ['MINUTE', MINUTE],
    ['HOUR', HOUR],
    ['DAY', DAY],
  ] as const) {
    const answer = await ask<{ buckets: { buckets: (Statistics & { start: string })[] }[] }>(server, BUCKETS, { granularity, ...RANGE });
    const rows = answer.data.buckets[0]!.buckets;
    expect(
      rows.map(({ start, count, sum }) => ({ start, count, sum })),
      granularity,
    ).toEqual(expectedBuckets(readings, size));
    const expected = groupBy(readings, (r) => Math.floor(r.time / size) * size).map(([start, own]) => ({
      start: new Date(start).toISOString(),
      ...statistics(own),
    }));
    expect(rows, granularity).toEqual(expected);
  }

  const latest = await ask<{
    metric: { firstReadingAt: string; lastReadingAt: string };
    byHost: { tags: { key: string; value: string }[]; latest: TimedValue }[];
    series: { id: string; firstReadingAt: string; lastReadingAt: string; latestValue: TimedValue; latest: TimedValue[] }[];
  }>(server, LATEST);
  const all = statistics(readings);
  expect(latest.data.metric).toEqual({ firstReadingAt: all.first.time, lastReadingAt: all.last.time });
  const hosts = groupBy(readings, (r) => r.host);
  expect(latest.data.byHost).toEqual(hosts.map(([host, own]) => ({ tags: [{ key: 'host', value: host }], latest: statistics(own).last })));
  expect(latest.data.series).toEqual(
    hosts.map(([host, own]) => ({
      id: `${METRIC},host=${host},region=${regionOf(host)}`,
      firstReadingAt: statistics(own).first.time,
      lastReadingAt: statistics(own).last.time,
      latestValue: timed(newestFirst(readings, host)[0]!),
      latest: newestFirst(readings, host).slice(0, 5).map(timed),
    })),
  );

  if (!rollup) return;
  const regions = groupBy(readings, (r) => regionOf(r.host));
  const byRegion = await ask<{ aggregate: (Statistics & { tags: { key: string; value: string }[] })[] }>(server, BY_REGION, RANGE);
  expect(byRegion.rollup).toBe(ROLLUP);
  expect(byRegion.data.aggregate).toEqual(
    regions.map(([region, own]) => ({ tags: [{ key: 'region', value: region }], ...statistics(own) })),
  );
  const hours = await ask<{ buckets: { tags: { value: string }[]; buckets: { start: string }[] }[] }>(server, REGION_HOURS, RANGE);
  expect(hours.rollup).toBe(ROLLUP);
  expect(hours.data.buckets.map((group) => [group.tags[0]!.value, group.buckets])).toEqual(
    regions.map(([region, own]) => [
      region,
      groupBy(own, (r) => Math.floor(r.time / HOUR) * HOUR).map(([start, inHour]) => {
        const { count, sum, min, max } = statistics(inHour);
        return { start: new Date(start).toISOString(), count, sum, min, max };
      }),
    ]),
  );
}

/** The values a sketch (bin key -> count) counts. */
const sketchTotal = (bins: Record<string, number> | undefined) => Object.values(bins ?? {}).reduce((a, b) => a + b, 0);

/**
 * In the database: every series-day and rollup document a reader sees has sketches that
 * count as many values as its day and hour slots (in the raw form: sketch bins on as
 * many readings as its day totals count), and together they count, per day and
 * per hour, the readings of the plain loop; no document of a fold above the visible
 * fold number is left, no fold or compaction is under way, and every log entry is
 * folded and visible.
 */
async function expectStored(db: Db, readings: readonly Sent[], rollup: boolean): Promise<void> {
  const state = (await foldState(db).findOne({ _id: FOLDS_ID }))!;
  expect(state.running).toBeNull();
  expect(await db.collection('ingest_log').countDocuments({ $or: [{ fold: null }, { fold: { $gt: state.visible } }] })).toBe(0);
  const perDay = new Map(groupBy(readings, (r) => Math.floor(r.time / DAY) * DAY).map(([day, own]) => [day, own.length]));
  const perHour = new Map(groupBy(readings, (r) => Math.floor(r.time / HOUR) * HOUR).map(([hour, own]) => [hour, own.length]));
  const collections = ['series_days'];
  if (rollup) collections.push((await db.collection<{ collection: string }>('rollups').findOne({}))!.collection);
  const view = await readView({ db });
  for (const name of collections) {
    expect(await db.collection(name).countDocuments({ f: { $gt: state.visible } }), name).toBe(0);
    const days = new Map<number, number>();
    const hours = new Map<number, number>();
    for (const doc of await db
      .collection<SeriesDayDocument>(name)
      .find({ metric: METRIC, ...visibleIn(view) })
      .toArray()) {
      const day = doc.date.getTime();
      if (Array.isArray(doc.r)) {
        // The raw form: each reading carries its sketch bin, and counts in its own hour.
        const binned = doc.r.filter((reading) => typeof reading.k?.[FIELD] === 'string');
        expect(binned.length, `${name} ${doc.series} ${doc.date.toISOString()} (raw)`).toBe(doc.fields[FIELD]!.n);
        days.set(day, (days.get(day) ?? 0) + binned.length);
        for (const reading of binned) {
          const at = Math.floor(reading.t.getTime() / HOUR) * HOUR;
          hours.set(at, (hours.get(at) ?? 0) + 1);
        }
        continue;
      }
      const sketched = sketchTotal(doc.q?.fields?.[FIELD]);
      expect(sketched, `${name} ${doc.series} ${doc.date.toISOString()}`).toBe(doc.fields[FIELD]!.n);
      days.set(day, (days.get(day) ?? 0) + sketched);
      for (const [hour, slot] of Object.entries(doc.hours)) {
        const hourSketch = sketchTotal(doc.q?.hours?.[hour]?.fields?.[FIELD]);
        expect(hourSketch, `${name} ${doc.series} ${doc.date.toISOString()} hour ${hour}`).toBe(slot.fields[FIELD]!.n);
        const at = day + Number(hour) * HOUR;
        hours.set(at, (hours.get(at) ?? 0) + hourSketch);
      }
    }
    expect(new Map([...days].sort(([a], [b]) => a - b)), name).toEqual(perDay);
    expect(new Map([...hours].sort(([a], [b]) => a - b)), name).toEqual(perHour);
  }
}

/**
 * Checks an answer read while a step is stopped: the aggregate's count, sum, min and max
 * are those of the acknowledged batches plus some of the batches sent but not yet
 * acknowledged (each whole, never part of one, none twice).
 */
async function expectWholeBatches(server: ServerProcess, writer: Writer): Promise<void> {
  const sentBefore = performance.now();
  const acked = [...writer.ackedAt].filter(([, at]) => at < sentBefore).map(([b]) => b);
  const { data } = await ask<{ aggregate: Statistics[] }>(server, AGGREGATE, RANGE);
  const open = [...writer.sentAt.keys()].filter((b) => !acked.includes(b));
  const answer = data.aggregate[0]!;
  const candidates = Array.from({ length: 2 ** open.length }, (_, mask) => {
    const batches = [...acked, ...open.filter((_, i) => mask & (1 << i))];
    const { count, sum, min, max } = statistics(batches.flatMap(batchReadings));
    return { count, sum, min, max };
  });
  const { count, sum, min, max } = answer;
  expect(candidates, `open batches ${open.join(', ')}`).toContainEqual({ count, sum, min, max });
}

// ---------------------------------------------------------------------------------
// The database of a server
// ---------------------------------------------------------------------------------

/** Connections to databases by URI, closed at the end. */
const clients = new Map<string, MongoClient>();
async function databaseAt(uri: string, name: string): Promise<Db> {
  let client = clients.get(uri);
  if (client === undefined) {
    client = new MongoClient(uri, { serverSelectionTimeoutMS: 30_000 });
    clients.set(uri, client);
    await client.connect();
  }
  return client.db(name);
}
/** The fold that took the log entry of batch id `id` (null: none yet). */
async function foldOf(db: Db, id: string): Promise<number | null> {
  const entry = await db.collection<{ _id: string; fold?: number | null }>('ingest_log').findOne({ _id: id });
  expect(entry, id).not.toBeNull();
  return entry!.fold ?? null;
}

/** Waits until every log entry is folded and visible and nothing is under way. */
async function untilFolded(db: Db): Promise<void> {
  await waitUntil(
    async () => {
      const state = await foldState(db).findOne({ _id: FOLDS_ID });
      if (state === null || state.running !== null) return false;
      return (await db.collection('ingest_log').countDocuments({ $or: [{ fold: null }, { fold: { $gt: state.visible } }] })) === 0;
    },
    60_000,
    'the log was not folded',
    100,
  );
}

/** Waits for the log line `Fault point <point> <what>` (armed, reached) of `server`. */
const untilPoint = (server: ServerProcess, point: FaultPoint, what: 'armed' | 'reached') =>
  server.waitForLog((line) => line.msg.startsWith(`Fault point ${point} ${what}`), 30_000);

/** Defines the rollup through `server` and waits until it is built and clean. */
async function defineRollup(server: ServerProcess): Promise<void> {
  await ask(server, `mutation { defineRollup(metric: "${METRIC}", name: "${ROLLUP}", tagKeys: ["region"]) { state } }`);
  await waitUntil(
    async () => {
      const { data } = await ask<{ metric: { rollups: { state: string; dirtyDays: string[] }[] } }>(server, ROLLUPS);
      return data.metric.rollups.every((rollup) => rollup.state === 'READY' && rollup.dirtyDays.length === 0);
    },
    30_000,
    'the rollup was not built',
    200,
  );
}

// ---------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------

/** What is killed at each step: the server (then started again) or its embedded database (then restarted by the server). */
type Kill = 'server' | 'database';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tsgraph-fold-steps-'));
});
afterAll(async () => {
  await stopAllServers();
  for (const dbName of dropAtEnd) await (await databaseAt(testMongoUri(), dbName)).dropDatabase();
  await Promise.all([...clients.values()].map((client) => client.close()));
  await rm(root, { recursive: true, force: true });
});

/** Databases of the run's test database server this file used. */
const dropAtEnd: string[] = [];
/** A fresh database name on the run's test database server, dropped at the end. */
function testDatabaseName(label: string): string {
  const name = `test_${label}_${randomBytes(4).toString('hex')}`;
  dropAtEnd.push(name);
  return name;
}

// The chains and the lease test run at the same time (each mostly waits for its own
// processes); the steps of a chain run in order.
describe.concurrent('fold steps', () => {
  describe.each<{ kill: Kill }>([{ kill: 'server' }, { kill: 'database' }])('SIGKILL of the $kill at each step', ({ kill }) => {
    let server: ServerProcess;
    const writer = new Writer(kill, () => server);
    /**
     * Killing the server: the servers use the run's test database, which outlives them,
     * and each start lists the one step it stops at next. Killing the database: one
     * server runs the embedded database on its own data directory and lists every step.
     */
    const dbName = kill === 'server' ? testDatabaseName('fold_steps') : 'tsgraph';
    const start = (points: readonly FaultPoint[]) =>
      startServer({
        bundled: true,
        dataDir: join(root, kill),
        env: {
          ...SETTINGS,
          ...(kill === 'server' ? { MONGODB_URI: testMongoUri(), MONGODB_DB: dbName } : {}),
          TEST_FAULT_POINTS: points.join(','),
        },
      });
    const database = async () => {
      if (kill === 'server') return databaseAt(testMongoUri(), dbName);
      const state = (await readEmbeddedState(server.dataDir))!;
      return databaseAt(`mongodb://127.0.0.1:${state.port}/?directConnection=true`, dbName);
    };
    /** Times the server logged that its database is back. */
    const restarts = () => server.logs.filter((line) => line.msg.startsWith('The embedded database is back')).length;

    beforeAll(async () => {
      server = await start(kill === 'server' ? FAULT_POINTS.slice(0, 1) : FAULT_POINTS);
      await writer.send(writer.next++);
      await defineRollup(server);
      await untilFolded(await database());
    });

    it.sequential.each(FAULT_POINTS.map((point, i) => ({ point, i })))('stopped at $point: exact after the kill', async ({ point, i }) => {
      server.kill('SIGUSR2');
      await untilPoint(server, point, 'armed');
      let reached = false;
      const writing = writer.run(() => reached);
      await untilPoint(server, point, 'reached');
      reached = true;
      // One batch more, acknowledged while the step is stopped: no fold takes it before
      // the kill (the folder is the one stopped, unless the step is the log write's).
      const late = writer.next++;
      await writer.send(late, 1);
      if (point !== 'record:after-log') expect(await foldOf(await database(), `${kill}-${late}`)).toBeNull();
      await expectWholeBatches(server, writer);
      const before = { restarts: restarts() };
      const unanswered = [...writer.sentAt.keys()].filter((b) => !writer.ackedAt.has(b));

      if (kill === 'server') {
        server.kill('SIGKILL');
        await server.exited;
        server = await start(FAULT_POINTS.slice(i + 1, i + 2));
      } else {
        process.kill((await server.dbPid())!, 'SIGKILL');
        // Let the stopped step carry on against a database that is down, then back.
        server.kill('SIGUSR2');
        await waitUntil(() => restarts() > before.restarts, 60_000, 'the embedded database was not restarted');
      }
      await writing;
      if (kill === 'server' && point === 'record:after-log') {
        // The batch held after its log write was never answered: its retry found it stored.
        expect(unanswered.filter((b) => writer.foundStored.has(b)).length, `unanswered ${unanswered.join(', ')}`).toBeGreaterThan(0);
      }
      const db = await database();
      await untilFolded(db);
      const readings = writer.readings();
      await expectExact(server, readings, true);
      await expectStored(db, readings, true);
    });

    it.sequential('marks every entry folded once a fold follows', async () => {
      await writer.send(writer.next++);
      const db = await database();
      await untilFolded(db);
      // A fold stamps its entries right after its flip, and those a fold stopped after
      // its flip left unstamped before it chooses its own.
      await waitUntil(
        async () => (await db.collection('ingest_log').countDocuments({ foldedAt: null })) === 0,
        10_000,
        'entries left unmarked',
      );
      expect(await db.collection('ingest_log').countDocuments({})).toBe(writer.sentAt.size);
      console.info(
        `fold steps, SIGKILL of the ${kill}: ${writer.sentAt.size} batches of ${PER_BATCH} readings, ${writer.attempts} attempts, ` +
          `${writer.failures} failed and retried, ${writer.alreadyApplied} readings found stored by a retry`,
      );
    });
  });

  describe('two servers on one database, the folding one killed mid-fold', () => {
    const dbName = testDatabaseName('fold_lease');
    const env = { ...SETTINGS, MONGODB_URI: testMongoUri(), MONGODB_DB: dbName };
    const servers: ServerProcess[] = [];
    /** The live servers; worker w sends attempt n to the (w + n)-th of them. */
    const writer = new Writer('lease', (worker, attempt) => {
      const live = servers.filter((server) => isAlive(server.pid));
      return live[(worker + attempt) % live.length]!;
    });

    it.sequential('hands the lease over, completes the fold and answers exactly', async () => {
      const db = await databaseAt(testMongoUri(), dbName);
      // The first server takes the lease at its start and keeps renewing it; the second
      // starts after it, so the first one folds.
      servers.push(
        await startServer({
          bundled: true,
          dataDir: join(root, 'lease-0'),
          env: { ...env, TEST_FAULT_POINTS: 'fold:mid-parts' },
        }),
      );
      await waitUntil(async () => (await foldState(db).findOne({ _id: FOLDS_ID }))?.lease != null, 10_000, 'no lease taken');
      const first = (await foldState(db).findOne({ _id: FOLDS_ID }))!.lease!.holder;
      servers.push(
        await startServer({
          bundled: true,
          dataDir: join(root, 'lease-1'),
          env,
        }),
      );
      const [folder, other] = servers as [ServerProcess, ServerProcess];

      // Both write; the folder stops halfway through writing a fold's parts.
      folder.kill('SIGUSR2');
      await untilPoint(folder, 'fold:mid-parts', 'armed');
      let reached = false;
      const writing = writer.run(() => reached);
      await untilPoint(folder, 'fold:mid-parts', 'reached');
      reached = true;
      const late = writer.next++;
      await writer.send(late, 1);
      expect(await foldOf(db, `lease-${late}`)).toBeNull();
      const stopped = (await foldState(db).findOne({ _id: FOLDS_ID }))!;
      expect(stopped.lease?.holder).toBe(first);
      const seq = stopped.running!.seq;
      const parts = await db.collection('series_days').countDocuments({ f: seq });
      expect(parts).toBeGreaterThan(0);
      await expectWholeBatches(other, writer);

      folder.kill('SIGKILL');
      const killedAt = performance.now();
      await folder.exited;
      // The other server takes the lease once it expires and completes the fold.
      await waitUntil(
        async () => {
          const state = await foldState(db).findOne({ _id: FOLDS_ID });
          return state !== null && state.visible >= seq && state.lease !== null && state.lease.holder !== first;
        },
        30_000,
        'the lease did not move',
        100,
      );
      const tookOver = performance.now() - killedAt;
      expect(await db.collection('series_days').countDocuments({ f: seq })).toBeGreaterThan(parts);

      await writing;
      await writer.send(writer.next++, 0);
      await untilFolded(db);
      const readings = writer.readings();
      await expectExact(other, readings, false);
      await expectStored(db, readings, false);
      console.info(
        `lease: fold ${seq} stopped with ${parts} parts written; the other server completed it ${Math.round(tookOver)} ms after the kill ` +
          `(lease ${SETTINGS.FOLD_LEASE_MS} ms); ${writer.sentAt.size} batches, ${writer.failures} attempts failed and retried`,
      );
    });
  });
}, 180_000);
