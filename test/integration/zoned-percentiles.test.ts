/**
 * Percentiles in time zones whose offset is not whole hours, through GraphQL against the
 * test server, checked against plain loops over the readings sent (bucket membership from
 * `Intl.DateTimeFormat` fields, test/helpers/zoned-reference.ts; exact percentiles by
 * sorting, test/helpers/plain-loop.ts): `Asia/Kolkata` (+05:30) HOUR buckets,
 * `Asia/Kathmandu` (+05:45) DAY and THIRTY_MINUTES buckets, `Australia/Adelaide` DAY
 * buckets across its daylight-saving end of 2024-04-07 (+10:30, then +09:30).
 *
 * 1. A metric with the default statistics (day, hour and quarter-hour sketches) answers
 *    every percentile of every bucket within the sketches' 1% of the exact value, from
 *    the unfolded log (the tail), after the fold, with a second fold's parts beside the
 *    first's, and after a compaction merged them.
 * 2. A metric sketching days and hours only answers counts and no percentile there
 *    (no quarter or minute sketches cover the bucket edges), as before quarter hours.
 * 3. A metric sketching minutes answers from its minute sketches (an hour without
 *    quarter-hour sketches is read from its minutes), and still does once it switches to
 *    quarter hours and a day holds parts of both kinds, before and after compaction.
 *
 * No folder runs in the background (test/helpers/app.ts): folds happen where a test calls them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAll } from '../../src/storage/fold.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { expectPercentile, type Sent } from '../helpers/plain-loop.ts';
import { referenceBuckets, referenceKey, type ZonedGranularity } from '../helpers/zoned-reference.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

let t: TestApp;

/** Two windows of readings (UTC): around the new year, and around Adelaide's 2024 daylight-saving end. */
const WINDOWS: [number, number][] = [
  [Date.UTC(2023, 11, 31, 18), Date.UTC(2024, 0, 3)],
  [Date.UTC(2024, 3, 5, 12), Date.UTC(2024, 3, 8)],
];
const HOSTS = 2;

/**
 * Readings of two hosts over both windows, one per host every 557 s from a phase of
 * `phase` s: times at every second of the minute and minute of the hour, values from
 * -50 to 150 in tenths (zero included).
 */
function readings(phase: number): Sent[] {
  const out: Sent[] = [];
  for (const [from, to] of WINDOWS) {
    for (let host = 0; host < HOSTS; host++) {
      for (let k = 0, time = from + (phase + host * 131) * 1000; time < to; k++, time += 557_000) {
        out.push({ host: `h${host}`, time, value: (((k + phase) * 7919 + host * 104_729) % 2001) / 10 - 50 });
      }
    }
  }
  return out;
}

/** What each metric has been sent so far. */
const sent = new Map<string, Sent[]>();

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const SET_STATISTICS = `mutation($metric: String!, $levels: [SlotLevel!]!) {
  setMetricStatistics(metric: $metric, sketchLevels: $levels, latestReadings: 0) { statistics { sketchLevels } }
}`;
const BUCKETS = `query($metric: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $zone: String!) {
  buckets(metric: $metric, field: "v", granularity: $granularity, from: $from, to: $to, timeZone: $zone, fill: NONE) {
    buckets { start count q0: percentile(p: 0) q10: percentile(p: 10) p50 p90 p99 q100: percentile(p: 100) }
  }
}`;
const PERCENTS = [0, 10, 50, 90, 99, 100] as const;

type BucketOut = { start: string; count: number } & Record<'q0' | 'q10' | 'p50' | 'p90' | 'p99' | 'q100', number | null>;
type Answer = {
  data?: { buckets: { buckets: BucketOut[] }[] } | null;
  errors?: unknown[];
  extensions?: { reads?: { tail?: { readings: number } }[] };
};

async function record(metric: string, rows: readonly Sent[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) {
    const batch = rows.slice(i, i + 2000).map((r) => ({
      metric,
      tags: [{ key: 'host', value: r.host }],
      time: new Date(r.time).toISOString(),
      fields: [{ name: 'v', value: r.value }],
    }));
    const response = await t.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings: batch });
    expect(response.errors).toBeUndefined();
    expect(response.data?.recordReadings.recorded).toBe(batch.length);
  }
  sent.set(metric, [...(sent.get(metric) ?? []), ...rows]);
}

async function setLevels(metric: string, levels: string[]): Promise<void> {
  const response = await t.graphql<{ setMetricStatistics: { statistics: { sketchLevels: string[] } } }>(SET_STATISTICS, {
    metric,
    levels,
  });
  expect(response.errors).toBeUndefined();
  expect(response.data?.setMetricStatistics.statistics.sketchLevels).toEqual(levels);
}

/** [granularity, zone, from, to]: local times in the zone, inside the windows. */
const CASES: [ZonedGranularity, string, string, string][] = [
  ['HOUR', 'Asia/Kolkata', '2024-01-01T18:00:00+05:30', '2024-01-02T06:00:00+05:30'],
  ['DAY', 'Asia/Kathmandu', '2024-01-01T00:00:00+05:45', '2024-01-03T00:00:00+05:45'],
  ['THIRTY_MINUTES', 'Asia/Kathmandu', '2024-01-01T09:00:00+05:45', '2024-01-01T11:00:00+05:45'],
  ['DAY', 'Australia/Adelaide', '2024-04-06T00:00:00+10:30', '2024-04-08T00:00:00+09:30'],
];

/** How many buckets had their percentiles checked, and the tail readings the reads added. */
type Tally = { checked: number; nulls: number; tail: number };

/**
 * Runs every case on `metric` and checks each bucket's count against the plain loop, and
 * its percentiles: within the bound (`checked`) or all null (`null`).
 */
async function checkCases(metric: string, expected: 'checked' | 'null'): Promise<Tally> {
  const tally: Tally = { checked: 0, nulls: 0, tail: 0 };
  for (const [granularity, zone, fromText, toText] of CASES) {
    const from = Date.parse(fromText);
    const to = Date.parse(toText);
    const answer = (await t.graphql(BUCKETS, { metric, granularity, from: fromText, to: toText, zone })) as Answer;
    expect(answer.errors).toBeUndefined();
    tally.tail += (answer.extensions?.reads ?? []).reduce((sum, read) => sum + (read.tail?.readings ?? 0), 0);
    // The plain loop: each reading of the range in the bucket its local time falls in.
    const byKey = new Map<string, Sent[]>();
    for (const r of sent.get(metric)!) {
      if (r.time < from || r.time >= to) continue;
      const key = referenceKey(r.time, zone, granularity);
      byKey.set(key, [...(byKey.get(key) ?? []), r]);
    }
    const reference = referenceBuckets(from, to, zone, granularity).filter((bucket) => byKey.has(bucket.key));
    const buckets = answer.data!.buckets[0]!.buckets;
    const label = `${metric} ${granularity} ${zone} [${fromText}, ${toText})`;
    expect(
      buckets.map((bucket) => [Date.parse(bucket.start), bucket.count]),
      label,
    ).toEqual(reference.map((bucket) => [bucket.start, byKey.get(bucket.key)!.length]));
    reference.forEach((bucket, i) => {
      const answers = [buckets[i]!.q0, buckets[i]!.q10, buckets[i]!.p50, buckets[i]!.p90, buckets[i]!.p99, buckets[i]!.q100];
      if (expected === 'null') {
        expect(answers, `${label} ${buckets[i]!.start}`).toEqual(answers.map(() => null));
        tally.nulls += 1;
        return;
      }
      PERCENTS.forEach((p, k) => {
        expectPercentile(answers[k]!, byKey.get(bucket.key)!, p);
      });
      tally.checked += 1;
    });
  }
  return tally;
}

/** Compacts every day a fold wrote to since its last compaction; returns the days compacted. */
async function compactAll(): Promise<number> {
  let days = 0;
  for (;;) {
    const outcome = await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 60_000 });
    if (outcome.compaction === null) return days;
    days += outcome.days;
  }
}

beforeAll(async () => {
  t = await openTestApp('zoned_percentiles', { journal: false });
  await setLevels('hours', ['DAY', 'HOUR']);
  await setLevels('minutes', ['DAY', 'HOUR', 'MINUTE']);
  const first = readings(0);
  for (const metric of ['quarters', 'hours', 'minutes']) await record(metric, first);
}, 300_000);

afterAll(async () => {
  await t?.close();
});

/** Buckets of every case (each has readings): 12 Kolkata hours, 2 Kathmandu days, 4 half hours, 2 Adelaide days. */
const BUCKETS_WITH_READINGS = 12 + 2 + 4 + 2;

describe('a metric with the default statistics (day, hour and quarter-hour sketches)', () => {
  it('keeps day, hour and quarter-hour sketches', async () => {
    const response = await t.graphql<{ metric: { statistics: { sketchLevels: string[] } } }>(
      `{ metric(name: "quarters") { statistics { sketchLevels } } }`,
    );
    expect(response.data?.metric.statistics.sketchLevels).toEqual(['DAY', 'HOUR', 'QUARTER']);
  });

  it('answers every percentile from the unfolded log', async () => {
    const tally = await checkCases('quarters', 'checked');
    expect(tally.checked).toBe(BUCKETS_WITH_READINGS);
    expect(tally.tail).toBeGreaterThan(0);
  });

  it('answers every percentile after the fold', async () => {
    expect(await foldAll(t.store, t.store.holder)).toBe(3 * readings(0).length); // three metrics
    const tally = await checkCases('quarters', 'checked');
    expect(tally).toEqual({ checked: BUCKETS_WITH_READINGS, nulls: 0, tail: 0 });
  });

  it('answers every percentile with a second fold beside the first, and after a compaction merged them', async () => {
    await record('quarters', readings(277));
    expect(await checkCases('quarters', 'checked')).toMatchObject({ checked: BUCKETS_WITH_READINGS });
    await foldAll(t.store, t.store.holder);
    expect(await checkCases('quarters', 'checked')).toEqual({ checked: BUCKETS_WITH_READINGS, nulls: 0, tail: 0 });
    expect(await compactAll()).toBe(6);
    expect(await checkCases('quarters', 'checked')).toEqual({ checked: BUCKETS_WITH_READINGS, nulls: 0, tail: 0 });
  });
});

describe('metrics without quarter-hour sketches', () => {
  it('day and hour sketches only: counts, and no percentile where bucket edges fall inside hours', async () => {
    expect(await checkCases('hours', 'null')).toEqual({ checked: 0, nulls: BUCKETS_WITH_READINGS, tail: 0 });
  });

  it('minute sketches: every percentile, read from the minutes of hours without quarter-hour sketches', async () => {
    expect(await checkCases('minutes', 'checked')).toEqual({ checked: BUCKETS_WITH_READINGS, nulls: 0, tail: 0 });
  });

  it('minute sketches, then quarter hours: days holding parts of both kinds answer every percentile, before and after compaction', async () => {
    // The first readings folded with minute sketches (a fold plans with the settings of its time).
    await foldAll(t.store, t.store.holder);
    await setLevels('minutes', ['DAY', 'HOUR', 'QUARTER']);
    await record('minutes', readings(277));
    await foldAll(t.store, t.store.holder);
    expect(await checkCases('minutes', 'checked')).toEqual({ checked: BUCKETS_WITH_READINGS, nulls: 0, tail: 0 });
    expect(await compactAll()).toBe(6);
    expect(await checkCases('minutes', 'checked')).toEqual({ checked: BUCKETS_WITH_READINGS, nulls: 0, tail: 0 });
  });
});
