/**
 * Scaling out: three server processes on one database (the test database, through
 * `MONGODB_URI`). A rollup over one tag key is defined through one instance and built by
 * the instances' rebuild schedules while writers on every instance send batches with
 * batch ids, some sent twice to two instances, one after the other or at the same time
 * (wave 1); then, the rollup ready, more batches update it directly (wave 2). Readers
 * query every instance throughout. Every read counts at least every reading
 * acknowledged before it was sent and at most every reading sent before it was
 * answered; at the end every instance answers exactly what a plain loop over the
 * distinct batches gives (count, sum, min, max per group), from the series-day
 * documents and from the rollup.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, waitUntil, type ServerProcess } from '../helpers/server-process.ts';
import { testMongoUri } from '../helpers/db.ts';

const METRIC = 'fleet';
const ROLLUP = 'by_region';
const INSTANCES = 3;
const WRITERS_PER_INSTANCE = 2;
const READINGS_PER_BATCH = 24;
/** Batches recorded before the rollup is defined (the backfill has to find them). */
const SEED_BATCHES = 6;
/** Batches of each of the two waves of writers (while the rollup is built, and once it is ready). */
const WAVE_BATCHES = 18;
/** Pause of each reader between two reads, in ms (the embedded database is one process, shared by all). */
const READ_PAUSE_MS = 300;
const HOSTS = 6;
/**
 * How long a dirty rollup day rests before a rebuild (`ROLLUP_REBUILD_GRACE_MS`): it must
 * exceed the longest batch (see `rebuildRollupDay`), and batches take seconds here, on one
 * shared embedded database; the slowest is reported with every failure.
 */
const GRACE_MS = 10_000;
const START = Date.UTC(2024, 5, 1);
const DAY_MS = 86_400_000;
const RANGE = { from: new Date(START).toISOString(), to: new Date(START + 2 * DAY_MS).toISOString() };

/**
 * Reading `i` of batch `b`: one of 6 hosts in 3 regions, on the batch's UTC day (even
 * batches the first day, odd ones the second), an integer value from -60 to 140 (exact sums).
 */
function readingAt(b: number, i: number) {
  const k = b * READINGS_PER_BATCH + i;
  const host = (k * 7) % HOSTS;
  return {
    host: `h${host}`,
    region: `r${host % 3}`,
    time: START + (b % 2) * DAY_MS + ((k * 7919) % 1440) * 60_000 + (k % 60) * 1000,
    value: ((k * 37) % 201) - 60,
  };
}
const batchReadings = (b: number) => Array.from({ length: READINGS_PER_BATCH }, (_, i) => readingAt(b, i));
const batchInput = (b: number) =>
  batchReadings(b).map((r) => ({
    metric: METRIC,
    tags: [
      { key: 'host', value: r.host },
      { key: 'region', value: r.region },
    ],
    time: new Date(r.time).toISOString(),
    fields: [{ name: 'v', value: r.value }],
  }));

interface Totals {
  count: number;
  sum: number;
  min: number;
  max: number;
}
type GroupKey = 'host' | 'region';

/** `totals` (a new entry when undefined) with one more value. */
function addTo(totals: Totals | undefined, value: number): Totals {
  const into = totals ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
  into.count += 1;
  into.sum += value;
  into.min = Math.min(into.min, value);
  into.max = Math.max(into.max, value);
  return into;
}

/** count, sum, min and max of `v` per value of `key`, by a plain loop over the readings of `batches`. */
function expectedTotals(batches: Iterable<number>, key: GroupKey): Map<string, Totals> {
  const groups = new Map<string, Totals>();
  for (const b of batches) for (const r of batchReadings(b)) groups.set(r[key], addTo(groups.get(r[key]), r.value));
  return groups;
}

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { recorded applied alreadyApplied }
}`;
// With the first reading asked for, day summaries (which keep none) cannot answer the
// two whole days: a read by region comes from the rollup, a read by host from the series
// (the same for BUCKETS below).
const AGGREGATE = `query($groupBy: [String!], $from: Time!, $to: Time!) {
  aggregate(metric: "${METRIC}", field: "v", from: $from, to: $to, groupBy: $groupBy) { tags { key value } count sum min max first { time } }
}`;
const BUCKETS = `query($from: Time!, $to: Time!, $granularity: Granularity!, $where: [TagFilter!]) {
  buckets(metric: "${METRIC}", field: "v", granularity: $granularity, from: $from, to: $to, where: $where, groupBy: ["region"], fill: NONE) {
    tags { key value } buckets { start count sum min max first { time } }
  }
}`;
const ROLLUPS = `{ metric(name: "${METRIC}") { rollups { name tagKeys state dirtyDays } } }`;

interface Answer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
  extensions?: { reads?: { rollup: string | null }[] };
}
type AggregateRow = Totals & { tags: { key: string; value: string }[]; first: { time: string } | null };

/** Sends a GraphQL request and fails on errors; returns the data and which rollup answered (null: the series). */
async function ask<T>(server: ServerProcess, query: string, variables?: Record<string, unknown>) {
  const response = await server.graphql<T>(query, variables);
  const body = response.body as Answer<T>;
  if (response.status !== 200 || body.errors?.length || !body.data) {
    throw new Error(`${server.url} answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { data: body.data, rollup: body.extensions?.reads?.[0]?.rollup, ms: response.ms };
}

/** The aggregate of `v` over the two days grouped by `key`, as a map from tag value to totals. */
async function aggregateBy(server: ServerProcess, key: GroupKey) {
  const answer = await ask<{ aggregate: AggregateRow[] }>(server, AGGREGATE, { groupBy: [key], ...RANGE });
  const groups = new Map<string, Totals>();
  for (const { tags, first: _first, ...totals } of answer.data.aggregate) groups.set(tags[0]!.value, totals);
  return { groups, rollup: answer.rollup };
}

/** One read made during the run: when it was sent and answered (test clock, ms), and what it counted per group. */
interface Read {
  instance: number;
  key: GroupKey;
  sentAt: number;
  answeredAt: number;
  counts: Map<string, number>;
  rollup: string | null | undefined;
}

describe('several API instances on one database', { timeout: 400_000 }, () => {
  let root: string;
  let dbName: string;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tsgraph-scale-'));
    dbName = `test_scale_${randomBytes(4).toString('hex')}`;
    const env = {
      MONGODB_URI: testMongoUri(),
      MONGODB_DB: dbName,
      ROLLUP_REBUILD_SECONDS: '1',
      ROLLUP_REBUILD_GRACE_MS: String(GRACE_MS),
    };
    servers.push(
      ...(await Promise.all(
        Array.from({ length: INSTANCES }, (_, i) => startServer({ dataDir: join(root, `unused-${i}`), env, startTimeoutMs: 180_000 })),
      )),
    );
  });
  afterAll(async () => {
    await stopAllServers();
    const client = new MongoClient(testMongoUri());
    await client.connect();
    await client.db(dbName).dropDatabase();
    await client.close();
    await rm(root, { recursive: true, force: true });
  });

  it('answer exactly the plain loop on every instance, from the series and from the rollup', async () => {
    const began = performance.now();
    const now = () => performance.now() - began;
    /** Distinct batch -> test-clock time its first send began, and its first acknowledgement. */
    const firstSent = new Map<number, number>();
    const acknowledged = new Map<number, number>();
    const batchMs: number[] = [];
    const sent = { applied: 0, alreadyApplied: 0, concurrent: 0, again: 0 };

    /** Sends batch `b` to instance `i` and checks the answer; returns how many readings this call applied. */
    const send = async (b: number, i: number) => {
      if (!firstSent.has(b)) firstSent.set(b, now());
      const answer = await ask<{ recordReadings: { recorded: number; applied: number; alreadyApplied: number } }>(servers[i]!, RECORD, {
        readings: batchInput(b),
        batchId: `scale-${b}`,
      });
      batchMs.push(answer.ms);
      const outcome = answer.data.recordReadings;
      expect(outcome.recorded).toBe(READINGS_PER_BATCH);
      expect(outcome.applied + outcome.alreadyApplied).toBe(READINGS_PER_BATCH);
      if (!acknowledged.has(b)) acknowledged.set(b, now());
      sent.applied += outcome.applied;
      sent.alreadyApplied += outcome.alreadyApplied;
      return outcome.applied;
    };

    /**
     * Sends batches `[from, to)` with `WRITERS_PER_INSTANCE` writers per instance, each
     * sending the next batch to its own instance: a batch `concurrent` also goes to the
     * next instance at the same time, one `again` once more to the next instance after
     * its acknowledgement. Meanwhile one reader per instance asks for the aggregate
     * grouped by region and by host in turn.
     * @returns the reads made meanwhile.
     */
    const wave = async (from: number, to: number, sendingOf: (b: number) => 'once' | 'concurrent' | 'again') => {
      let next = from;
      const writer = async (i: number) => {
        while (next < to) {
          const b = next++;
          const other = (i + 1) % INSTANCES;
          const sending = sendingOf(b);
          if (sending === 'concurrent') {
            const applied = await Promise.all([send(b, i), send(b, other)]);
            // The two calls together applied the batch exactly once.
            expect(applied[0] + applied[1]).toBe(READINGS_PER_BATCH);
            sent.concurrent += 1;
          } else {
            expect(await send(b, i)).toBe(READINGS_PER_BATCH);
            if (sending === 'again') {
              expect(await send(b, other)).toBe(0);
              sent.again += 1;
            }
          }
        }
      };
      let writing = true;
      const reads: Read[] = [];
      const reader = async (instance: number) => {
        for (let round = 0; writing; round++) {
          const key: GroupKey = round % 2 === 0 ? 'region' : 'host';
          const sentAt = now();
          const { groups, rollup } = await aggregateBy(servers[instance]!, key);
          const counts = new Map([...groups].map(([group, totals]) => [group, totals.count]));
          reads.push({ instance, key, sentAt, answeredAt: now(), counts, rollup });
          await new Promise((done) => setTimeout(done, READ_PAUSE_MS));
        }
      };
      const readers = Array.from({ length: INSTANCES }, (_, i) => reader(i));
      try {
        await Promise.all(Array.from({ length: INSTANCES * WRITERS_PER_INSTANCE }, (_, w) => writer(w % INSTANCES)));
      } finally {
        writing = false;
        await Promise.all(readers);
      }
      return reads;
    };

    /** Waits until every instance reports the rollup ready without dirty days; returns the ms waited. */
    const untilClean = () =>
      waitUntil(
        async () => {
          const answers = await Promise.all(
            servers.map((server) => ask<{ metric: { rollups: { state: string; dirtyDays: string[] }[] } }>(server, ROLLUPS)),
          );
          return answers.every(({ data }) =>
            data.metric.rollups.every((rollup) => rollup.state === 'READY' && rollup.dirtyDays.length === 0),
          );
        },
        120_000,
        'rollup days stayed dirty',
        250,
      );

    // Before the rollup exists: a few batches through every instance.
    await Promise.all(
      Array.from({ length: INSTANCES }, async (_, i) => {
        for (let b = i; b < SEED_BATCHES; b += INSTANCES) await send(b, i);
      }),
    );
    // Defined through one instance: BUILDING until a schedule backfills it.
    const defined = await ask<{ defineRollup: { state: string } }>(
      servers[0]!,
      `mutation { defineRollup(metric: "${METRIC}", name: "${ROLLUP}", tagKeys: ["region"]) { state } }`,
    );
    expect(defined.data.defineRollup.state).toBe('BUILDING');

    // Wave 1, while the rollup is built: every third batch sent to two instances at once
    // (the later claim marks the days dirty), every sixth (another) twice in turn.
    const first = SEED_BATCHES;
    const second = first + WAVE_BATCHES;
    const last = second + WAVE_BATCHES;
    const building = await wave(first, second, (b) => (b % 3 === 1 ? 'concurrent' : b % 6 === 3 ? 'again' : 'once'));
    const cleanAfterFirst = await untilClean();
    // Wave 2, the rollup ready and clean: first attempts update it directly, second
    // sendings answer from the batch claim; nothing marks a day dirty.
    const ready = await wave(second, last, (b) => (b % 6 === 4 ? 'again' : 'once'));
    const cleanAfterSecond = await untilClean();

    const distinct = [...firstSent.keys()].sort((a, b) => a - b);
    expect(distinct).toEqual(Array.from({ length: last }, (_, b) => b));
    expect(acknowledged.size).toBe(distinct.length);
    // Every reading applied once; every second sending found its batch applied.
    expect(sent.applied).toBe(distinct.length * READINGS_PER_BATCH);
    expect(sent.alreadyApplied).toBe((sent.concurrent + sent.again) * READINGS_PER_BATCH);

    // Rebuilds of rollup days are exact only if every batch finishes within the grace
    // period (see `rebuildRollupDay`); said in every failure message below.
    const slowest = Math.max(...batchMs);
    const premise = `slowest batch ${slowest.toFixed(0)} ms, grace ${GRACE_MS} ms`;

    // Reads during the waves: never less than what was acknowledged before the read was
    // sent, never more than what had been sent before it was answered.
    for (const read of [...building, ...ready]) {
      const lower = expectedTotals(
        distinct.filter((b) => acknowledged.get(b)! < read.sentAt),
        read.key,
      );
      const upper = expectedTotals(
        distinct.filter((b) => firstSent.get(b)! < read.answeredAt),
        read.key,
      );
      for (const [group, { count }] of lower) {
        expect(read.counts.get(group) ?? 0, `${read.key} ${group} on ${read.instance}; ${premise}`).toBeGreaterThanOrEqual(count);
      }
      for (const [group, count] of read.counts) {
        expect(count, `${read.key} ${group} on ${read.instance}; ${premise}`).toBeLessThanOrEqual(upper.get(group)?.count ?? 0);
      }
    }
    // In wave 2 the rollup answered every read by region, the series every read by host.
    expect(ready.filter((read) => read.key === 'region').length).toBeGreaterThan(0);
    for (const read of ready) expect(read.rollup, `${read.key} on ${read.instance}`).toBe(read.key === 'region' ? ROLLUP : null);

    const byHost = expectedTotals(distinct, 'host');
    const byRegion = expectedTotals(distinct, 'region');
    expect(byHost.size).toBe(HOSTS);
    expect(byRegion.size).toBe(3);
    for (const server of servers) {
      // Grouped by host: the rollup keeps only regions, so the series-day documents answer.
      const hosts = await aggregateBy(server, 'host');
      expect(hosts.rollup).toBeNull();
      expect(sorted(hosts.groups), premise).toEqual(sorted(byHost));
      // Grouped by region: the rollup answers, the same totals.
      const regions = await aggregateBy(server, 'region');
      expect(regions.rollup).toBe(ROLLUP);
      expect(sorted(regions.groups), premise).toEqual(sorted(byRegion));
      // Per day, and per hour of one region, from the rollup too.
      for (const [granularity, width] of [
        ['DAY', DAY_MS],
        ['HOUR', 3_600_000],
      ] as const) {
        const region = granularity === 'HOUR' ? 'r1' : null;
        const answer = await ask<{ buckets: { tags: { value: string }[]; buckets: ({ start: string; first: unknown } & Totals)[] }[] }>(
          server,
          BUCKETS,
          {
            ...RANGE,
            granularity,
            where: region === null ? null : [{ key: 'region', in: [region] }],
          },
        );
        expect(answer.rollup, granularity).toBe(ROLLUP);
        const wanted = new Map<string, Map<string, Totals>>();
        for (const b of distinct) {
          for (const r of batchReadings(b)) {
            if (region !== null && r.region !== region) continue;
            const perStart = wanted.get(r.region) ?? new Map<string, Totals>();
            const start = new Date(Math.floor(r.time / width) * width).toISOString();
            perStart.set(start, addTo(perStart.get(start), r.value));
            wanted.set(r.region, perStart);
          }
        }
        const got = answer.data.buckets.map((group) => [
          group.tags[0]!.value,
          group.buckets.map(({ start, first: _first, ...totals }) => [start, totals]),
        ]);
        expect(got, `${granularity}; ${premise}`).toEqual(sorted(wanted).map(([key, perStart]) => [key, sorted(perStart)]));
      }
    }

    // In the database: one log entry per distinct batch, all folded by the instances'
    // folders; rollup parts for 3 regions x 2 days holding every reading once; one
    // registry entry per series.
    const client = new MongoClient(testMongoUri());
    await client.connect();
    try {
      const db = client.db(dbName);
      expect(await db.collection('ingest_log').countDocuments({})).toBe(distinct.length);
      await waitUntil(async () => (await db.collection('ingest_log').countDocuments({ fold: null })) === 0, 30_000, 'every entry folded');
      await waitUntil(
        async () => (await db.collection<{ _id: string }>('fold_state').countDocuments({ _id: 'folds', running: null })) === 1,
        30_000,
        'no fold under way',
      );
      const state = await db.collection<{ _id: string; visible: number }>('fold_state').findOne({ _id: 'folds' });
      const [rollup] = await db.collection<{ collection: string }>('rollups').find({}).toArray();
      const parts = await db
        .collection<{ series: string; date: Date; readings: number }>(rollup!.collection)
        .find({ f: { $lte: state!.visible } })
        .toArray();
      expect(new Set(parts.map((part) => `${part.series}:${part.date.getTime()}`)).size).toBe(3 * 2);
      expect(parts.reduce((sum, part) => sum + part.readings, 0)).toBe(distinct.length * READINGS_PER_BATCH);
      expect(await db.collection('series').countDocuments({})).toBe(HOSTS);
    } finally {
      await client.close();
    }

    const fromRollup = [...building, ...ready].filter((read) => read.rollup === ROLLUP).length;
    console.info(
      `scale-out: ${INSTANCES} instances x ${WRITERS_PER_INSTANCE} writers, ${distinct.length} batches of ${READINGS_PER_BATCH} readings ` +
        `(${sent.concurrent} also sent to a second instance at once, ${sent.again} after their answer); ` +
        `batch p50 ${percentile(batchMs, 50).toFixed(0)} ms, max ${slowest.toFixed(0)} ms; ` +
        `${building.length + ready.length} reads during the writes (${fromRollup} from the rollup); ` +
        `rollup clean ${(cleanAfterFirst / 1000).toFixed(1)} s after wave 1, ${(cleanAfterSecond / 1000).toFixed(1)} s after wave 2; ` +
        `${(now() / 1000).toFixed(0)} s in all`,
    );
  });
});

/** The entries of `map` sorted by key. */
function sorted<T>(map: ReadonlyMap<string, T>): [string, T][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The value at percentile `p` (0..100) of `values`, nearest rank. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
