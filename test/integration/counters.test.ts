/**
 * Counters end to end (docs/statistics.md, "Counters"): a metric declared a counter,
 * readings with resets recorded through GraphQL, and `increase` and `rate` of buckets,
 * aggregates and series answered from the unfolded log, from parts of separate folds,
 * from both, and after compaction, each checked against a plain loop over the readings
 * sent (sharing no code with the server). Late readings that fall between readings
 * folded before give null where the documented rule says so, and exact answers
 * everywhere else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { foldAll, foldOnce } from '../../src/storage/fold.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

interface Sent {
  host: string;
  time: number;
  value: number;
}

// ---------------------------------------------------------------------------------
// The readings and the plain loop
// ---------------------------------------------------------------------------------

/**
 * Three hosts' request counters over two days: a reading every 3 to 17 minutes, now and
 * then a burst of three in one minute; each reading adds 0 to 40 to the count, and about
 * one in twelve is a restart (the count starts again below 10). Integer values, distinct
 * times per host, from a small deterministic generator.
 */
function counterReadings(): Sent[] {
  let state = 20240101;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * n);
  };
  const readings: Sent[] = [];
  for (const host of ['a', 'b', 'c']) {
    let time = START + next(600) * 1000;
    let value = next(1000);
    while (time < START + 2 * DAY) {
      const burst = next(6) === 0 ? 3 : 1;
      for (let i = 0; i < burst && time < START + 2 * DAY; i++) {
        value = next(12) === 0 ? next(10) : value + next(41);
        readings.push({ host, time, value });
        time += 7_000 + next(10) * 1000;
      }
      time += (3 + next(15)) * MINUTE;
    }
  }
  return readings;
}

/** Expected answer of one bucket: readings counted, and the increase over them. */
interface Expected {
  count: number;
  increase: number;
}

/**
 * The increase per group and bucket by its definition: each host's readings in
 * `[from, to)` in time order; every reading after the first adds to its bucket the
 * reading minus the one before, or itself when it is lower (a reset); a group's bucket
 * sums its hosts'.
 * @param bucketOf the bucket start (ms) of a time.
 * @param groupOf the group of a host ('' when not grouped).
 */
function plainIncreases(
  readings: readonly Sent[],
  range: { from: number; to: number },
  bucketOf: (time: number) => number,
  groupOf: (host: string) => string = () => '',
): Map<string, Map<number, Expected>> {
  const groups = new Map<string, Map<number, Expected>>();
  const byHost = new Map<string, Sent[]>();
  for (const r of readings) {
    if (r.time < range.from || r.time >= range.to) continue;
    byHost.set(r.host, [...(byHost.get(r.host) ?? []), r]);
  }
  for (const [host, list] of byHost) {
    list.sort((x, y) => x.time - y.time);
    const group = groups.get(groupOf(host)) ?? new Map<number, Expected>();
    groups.set(groupOf(host), group);
    list.forEach((r, i) => {
      const bucket = group.get(bucketOf(r.time)) ?? { count: 0, increase: 0 };
      bucket.count += 1;
      if (i > 0) {
        const before = list[i - 1]!.value;
        bucket.increase += r.value >= before ? r.value - before : r.value;
      }
      group.set(bucketOf(r.time), bucket);
    });
  }
  return groups;
}

/** Seconds of `[start, start + width)` inside `[from, to)`. */
const secondsIn = (start: number, end: number, range: { from: number; to: number }) =>
  (Math.min(end, range.to) - Math.max(start, range.from)) / 1000;

// ---------------------------------------------------------------------------------
// GraphQL
// ---------------------------------------------------------------------------------

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const DECLARE = `mutation($metric: String!) { setMetricKind(metric: $metric, kind: COUNTER) { name kind } }`;

interface Answer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; metric?: string } }[];
}

async function ask<T>(t: TestApp, query: string, variables: Record<string, unknown>): Promise<T> {
  const answer = (await t.graphql<T>(query, variables)) as Answer<T>;
  expect(answer.errors).toBeUndefined();
  return answer.data!;
}

async function record(t: TestApp, metric: string, readings: readonly Sent[]): Promise<void> {
  const input = readings.map((r) => ({
    metric,
    tags: [{ key: 'host', value: r.host }],
    time: iso(r.time),
    fields: [{ name: 'n', value: r.value }],
  }));
  expect(await ask(t, RECORD, { readings: input })).toEqual({ recordReadings: { recorded: readings.length } });
}

interface BucketAnswer {
  start: string;
  end: string;
  count: number;
  increase: number | null;
  rate: number | null;
  value?: number | null;
}
interface GroupAnswer {
  tags: { value: string }[];
  buckets: BucketAnswer[];
}
interface AggregateAnswer {
  tags: { value: string }[];
  count: number;
  increase: number | null;
  rate: number | null;
}

const QUERIES = `query($m: String!, $from: Time!, $to: Time!, $minFrom: Time!, $minTo: Time!) {
  hourly: buckets(metric: $m, field: "n", granularity: HOUR, from: $from, to: $to, fill: NONE) {
    tags { value } buckets { start end count increase rate }
  }
  minutes: buckets(metric: $m, field: "n", granularity: MINUTE, from: $minFrom, to: $minTo, groupBy: ["host"], fill: NONE) {
    tags { value } buckets { start end count increase rate }
  }
  kolkata: buckets(metric: $m, field: "n", granularity: DAY, timeZone: "Asia/Kolkata", from: $from, to: $to, fill: NONE, statistic: RATE) {
    tags { value } buckets { start end count increase rate value }
  }
  sixHours: buckets(metric: $m, field: "n", granularity: SIX_HOURS, from: $minFrom, to: $to, fill: NONE, statistic: INCREASE, transform: RATE) {
    tags { value } buckets { start end count increase rate value }
  }
  byHost: aggregate(metric: $m, field: "n", from: $from, to: $to, groupBy: ["host"]) { tags { value } count increase rate }
  series(metric: $m) {
    tags { value }
    buckets(field: "n", granularity: TWELVE_HOURS, from: $from, to: $to, fill: NONE, statistic: INCREASE) { start end count increase rate value }
    aggregate(field: "n", from: $minFrom, to: $to) { count increase rate }
  }
}`;

interface Answers {
  hourly: GroupAnswer[];
  minutes: GroupAnswer[];
  kolkata: GroupAnswer[];
  sixHours: GroupAnswer[];
  byHost: AggregateAnswer[];
  series: {
    tags: { value: string }[];
    buckets: BucketAnswer[];
    aggregate: { count: number; increase: number | null; rate: number | null };
  }[];
}

/** The ranges of {@link QUERIES}: both days; and three hours from 10:30 on the first day, for minutes. */
const RANGE = { from: START, to: START + 2 * DAY };
const MINUTES_RANGE = { from: START + 10 * HOUR + 30 * MINUTE, to: START + 13 * HOUR + 30 * MINUTE };
const KOLKATA = 5.5 * HOUR;

/**
 * Checks a bucket list against the plain loop: the same buckets, counts, increases, and
 * rates (increase per second of the bucket inside the range); `value` as `expectedValue` says.
 */
function expectBuckets(
  label: string,
  buckets: readonly BucketAnswer[],
  expected: Map<number, Expected> | undefined,
  range: { from: number; to: number },
  expectedValue?: (bucket: BucketAnswer) => number | null,
): void {
  const want = [...(expected ?? new Map<number, Expected>())].sort(([a], [b]) => a - b);
  expect(
    buckets.map((b) => [b.start, b.count, b.increase]),
    label,
  ).toEqual(want.map(([start, e]) => [iso(start), e.count, e.increase]));
  for (const bucket of buckets) {
    const seconds = secondsIn(Date.parse(bucket.start), Date.parse(bucket.end), range);
    expect(bucket.rate, `${label} ${bucket.start}`).toBeCloseTo(bucket.increase! / seconds, 9);
    if (expectedValue) expect(bucket.value, `${label} ${bucket.start} value`).toBe(expectedValue(bucket));
  }
}

/** Runs {@link QUERIES} on `metric` and checks every answer against the plain loop over `readings`. */
async function expectExact(t: TestApp, metric: string, readings: readonly Sent[]): Promise<void> {
  const answers = await ask<Answers>(t, QUERIES, {
    m: metric,
    from: iso(RANGE.from),
    to: iso(RANGE.to),
    minFrom: iso(MINUTES_RANGE.from),
    minTo: iso(MINUTES_RANGE.to),
  });
  const hourOf = (time: number) => Math.floor(time / HOUR) * HOUR;
  expectBuckets('HOUR', answers.hourly[0]!.buckets, plainIncreases(readings, RANGE, hourOf).get(''), RANGE);

  const minutes = plainIncreases(
    readings,
    MINUTES_RANGE,
    (time) => Math.floor(time / MINUTE) * MINUTE,
    (host) => host,
  );
  expect(answers.minutes.map((group) => group.tags[0]!.value)).toEqual([...minutes.keys()].sort());
  for (const group of answers.minutes) {
    expectBuckets(`MINUTE ${group.tags[0]!.value}`, group.buckets, minutes.get(group.tags[0]!.value), MINUTES_RANGE);
  }

  const localDay = (time: number) => Math.floor((time + KOLKATA) / DAY) * DAY - KOLKATA;
  expectBuckets('Kolkata DAY', answers.kolkata[0]!.buckets, plainIncreases(readings, RANGE, localDay).get(''), RANGE, (b) => b.rate);

  const sixRange = { from: MINUTES_RANGE.from, to: RANGE.to };
  const sixOf = (time: number) => Math.floor(time / (6 * HOUR)) * 6 * HOUR;
  const six = answers.sixHours[0]!.buckets;
  expectBuckets('SIX_HOURS', six, plainIncreases(readings, sixRange, sixOf).get(''), sixRange);
  // INCREASE with the RATE transform is the rate.
  for (const bucket of six) expect(bucket.value).toBeCloseTo(bucket.rate!, 9);

  const byHost = plainIncreases(
    readings,
    RANGE,
    () => 0,
    (host) => host,
  );
  expect(answers.byHost.map((a) => [a.tags[0]!.value, a.count, a.increase])).toEqual(
    [...byHost].sort(([a], [b]) => (a < b ? -1 : 1)).map(([host, buckets]) => [host, buckets.get(0)!.count, buckets.get(0)!.increase]),
  );
  for (const aggregate of answers.byHost) expect(aggregate.rate).toBeCloseTo(aggregate.increase! / ((2 * DAY) / 1000), 9);

  for (const series of answers.series) {
    const host = series.tags[0]!.value;
    const mine = readings.filter((r) => r.host === host);
    const twelve = (time: number) => Math.floor(time / (12 * HOUR)) * 12 * HOUR;
    expectBuckets(`series ${host}`, series.buckets, plainIncreases(mine, RANGE, twelve).get(''), RANGE, (b) => b.increase);
    const total = plainIncreases(mine, sixRange, () => 0)
      .get('')!
      .get(0)!;
    expect([series.aggregate.count, series.aggregate.increase]).toEqual([total.count, total.increase]);
    expect(series.aggregate.rate).toBeCloseTo(total.increase / ((sixRange.to - sixRange.from) / 1000), 9);
  }
}

// ---------------------------------------------------------------------------------
// Answers from the log, from parts, from both, after compaction
// ---------------------------------------------------------------------------------

describe('increase and rate of a counter', () => {
  let t: TestApp;
  const readings = counterReadings();
  /** Four batches of consecutive time, cut at no minute or hour boundary, each a log entry of its own. */
  const byTime = [...readings].sort((a, b) => a.time - b.time);
  const cuts = [0, 0.2, 0.45, 0.8, 1].map((f) => Math.floor(f * byTime.length));
  const batches = cuts.slice(1).map((end, i) => byTime.slice(cuts[i], end));

  beforeAll(async () => {
    t = await openTestApp('counters');
    expect(await ask(t, DECLARE, { metric: 'requests' })).toEqual({ setMetricKind: { name: 'requests', kind: 'COUNTER' } });
    for (const batch of batches) await record(t, 'requests', batch);
  });
  afterAll(async () => t.close());

  it('has resets inside buckets and at their first reading, and batches cut inside minutes', () => {
    const host = readings.filter((r) => r.host === 'a');
    const resets = host.filter((r, i) => i > 0 && r.value < host[i - 1]!.value);
    const hourOf = (time: number) => Math.floor(time / HOUR);
    expect(resets.some((r) => host.some((o) => o.time < r.time && hourOf(o.time) === hourOf(r.time)))).toBe(true);
    expect(resets.some((r) => !host.some((o) => o.time < r.time && hourOf(o.time) === hourOf(r.time)))).toBe(true);
    const minuteOf = (time: number) => Math.floor(time / MINUTE);
    expect(cuts.slice(1, -1).some((cut) => minuteOf(byTime[cut]!.time) === minuteOf(byTime[cut - 1]!.time))).toBe(true);
  });

  it('answers from the unfolded log', async () => {
    await expectExact(t, 'requests', readings);
  });

  it('answers from the parts of two folds and the log tail', async () => {
    for (let i = 0; i < 2; i++) expect((await foldOnce(t.store, t.store.holder, { maxReadings: 1 })).entries).toBe(1);
    await expectExact(t, 'requests', readings);
  });

  it('answers from the parts of four folds, and the same after compaction', async () => {
    for (let i = 0; i < 2; i++) expect((await foldOnce(t.store, t.store.holder, { maxReadings: 1 })).entries).toBe(1);
    const parts = await t.store.seriesDays.countDocuments({ metric: 'requests' });
    expect(parts).toBeGreaterThan(6);
    await expectExact(t, 'requests', readings);
    const compacted = await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    expect(compacted.days).toBe(2);
    await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    expect(await t.store.seriesDays.countDocuments({ metric: 'requests' })).toBe(6);
    await expectExact(t, 'requests', readings);
  });

  it('keeps what the increase needs only for counters: a gauge is refused NOT_A_COUNTER', async () => {
    await record(t, 'temperature', readings.slice(0, 20));
    for (const query of [
      '{ aggregate(metric: "temperature", field: "n", from: "2024-01-01", to: "2024-01-03") { increase } }',
      '{ buckets(metric: "temperature", field: "n", granularity: HOUR, from: "2024-01-01", to: "2024-01-03", statistic: RATE) { buckets { value } } }',
      '{ series(metric: "temperature") { aggregate(field: "n", from: "2024-01-01", to: "2024-01-03") { rate } } }',
    ]) {
      const answer = (await t.graphql(query)) as Answer<unknown>;
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_A_COUNTER', metric: 'temperature' });
    }
    // Other statistics of a gauge are answered as ever, and an unknown metric has nothing to answer.
    const plain = await ask<{ aggregate: { count: number }[] }>(
      t,
      '{ aggregate(metric: "temperature", field: "n", from: "2024-01-01", to: "2024-01-03") { count } }',
      {},
    );
    expect(plain.aggregate[0]!.count).toBe(20);
    const unknown = await ask<{ aggregate: unknown[] }>(
      t,
      '{ aggregate(metric: "nothing", field: "n", from: "2024-01-01", to: "2024-01-03") { increase } }',
      {},
    );
    expect(unknown.aggregate).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------
// Late readings
// ---------------------------------------------------------------------------------

describe('late readings', () => {
  let t: TestApp;
  /** One host, a reading every 10 minutes plus a second one 20 s after each, over one day. */
  const base: Sent[] = Array.from({ length: 144 }, (_, i) => i).flatMap((i) => [
    { host: 'a', time: START + i * 10 * MINUTE, value: 100 + i * 7 },
    { host: 'a', time: START + i * 10 * MINUTE + 20_000, value: 100 + i * 7 + (i % 3) },
  ]);
  const DAY_RANGE = { from: START, to: START + DAY };
  const QUERY = `query($m: String!, $g: Granularity!) {
    buckets(metric: $m, field: "n", granularity: $g, from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z", fill: NONE) {
      buckets { start end count increase rate }
    }
    aggregate(metric: $m, field: "n", from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z") { count increase }
  }`;

  /**
   * The buckets of `metric` at `granularity` against the plain loop over `readings`:
   * exact, but null in the buckets that start in `unknown`; and the aggregate's increase
   * (null when `aggregateKnown` is false).
   */
  async function expectAnswers(
    metric: string,
    readings: readonly Sent[],
    granularity: 'MINUTE' | 'HOUR',
    unknown: number[],
    aggregateKnown: boolean,
  ) {
    const width = granularity === 'MINUTE' ? MINUTE : HOUR;
    const answer = await ask<{ buckets: { buckets: BucketAnswer[] }[]; aggregate: { count: number; increase: number | null }[] }>(
      t,
      QUERY,
      { m: metric, g: granularity },
    );
    const expected = plainIncreases(readings, DAY_RANGE, (time) => Math.floor(time / width) * width).get('')!;
    expect(answer.buckets[0]!.buckets.map((b) => [b.start, b.count, b.increase])).toEqual(
      [...expected].sort(([a], [b]) => a - b).map(([start, e]) => [iso(start), e.count, unknown.includes(start) ? null : e.increase]),
    );
    const total = plainIncreases(readings, DAY_RANGE, () => 0)
      .get('')!
      .get(0)!;
    expect(answer.aggregate[0]).toEqual({ count: total.count, increase: aggregateKnown ? total.increase : null });
  }

  beforeAll(async () => {
    t = await openTestApp('counters_late');
    for (const metric of ['within', 'between']) {
      await ask(t, DECLARE, { metric });
      await record(t, metric, base);
    }
    await foldAll(t.store, t.store.holder);
  });
  afterAll(async () => t.close());

  it('between two readings of one minute: that minute, its hour and the day are null, before and after compaction', async () => {
    // 10 s after the reading at 05:00:00, before the one at 05:00:20.
    const at = START + 5 * HOUR;
    const late = { host: 'a', time: at + 10_000, value: 100 + 30 * 7 + 1 };
    await record(t, 'within', [late]);
    const all = [...base, late];
    // In the tail, then folded into a part of its own, then compacted: the same answers.
    for (const step of ['tail', 'folded', 'compacted']) {
      if (step === 'folded') await foldAll(t.store, t.store.holder);
      if (step === 'compacted') {
        expect((await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 })).days).toBe(1);
        // The next call deletes the parts the compaction replaced.
        await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
        expect(await t.store.seriesDays.countDocuments({ metric: 'within' })).toBe(1);
      }
      await expectAnswers('within', all, 'MINUTE', [at], false);
      await expectAnswers('within', all, 'HOUR', [at], false);
    }
  });

  it('a day of few readings stays in the slot form, its parts and once compacted, so an increase a merge left unknown stays unknown', async () => {
    // Two folds of two readings each, interleaved in one minute: their merge cannot chain the increase.
    const metric = 'few';
    await ask(t, DECLARE, { metric });
    const at = START + 7 * HOUR;
    await record(t, metric, [
      { host: 'a', time: at + 10_000, value: 100 },
      { host: 'a', time: at + 30_000, value: 110 },
    ]);
    await foldAll(t.store, t.store.holder);
    await record(t, metric, [
      { host: 'a', time: at + 20_000, value: 105 },
      { host: 'a', time: at + 40_000, value: 120 },
    ]);
    await foldAll(t.store, t.store.holder);
    // Far fewer readings than RAW_READINGS, yet no document in the raw form (`r`): a counter's never is.
    const parts = await t.store.seriesDays.find({ metric }).toArray();
    expect(parts).toHaveLength(2);
    expect(parts.map((part) => part.r)).toEqual([undefined, undefined]);
    await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    const docs = await t.store.seriesDays.find({ metric }).toArray();
    expect(docs.map((doc) => [doc.readings, doc.r])).toEqual([[4, undefined]]);
    const answer = await ask<{ buckets: { buckets: { count: number; increase: number | null }[] }[] }>(
      t,
      `query { buckets(metric: "few", field: "n", granularity: MINUTE, from: "${iso(at)}", to: "${iso(at + MINUTE)}", fill: NONE) { buckets { count increase } } }`,
      {},
    );
    expect(answer.buckets[0]!.buckets).toEqual([{ count: 4, increase: null }]);
  });

  it('in a minute of its own between readings of an hour: the hour is null until a compaction recomputes it from its minutes', async () => {
    // 05:05, between the readings of 05:00 and 05:10.
    const at = START + 5 * HOUR + 5 * MINUTE;
    const late = { host: 'a', time: at, value: 100 + 30 * 7 + 3 };
    await record(t, 'between', [late]);
    const all = [...base, late];
    await expectAnswers('between', all, 'MINUTE', [], false);
    await expectAnswers('between', all, 'HOUR', [START + 5 * HOUR], false);
    await foldAll(t.store, t.store.holder);
    await expectAnswers('between', all, 'MINUTE', [], false);
    await expectAnswers('between', all, 'HOUR', [START + 5 * HOUR], false);
    expect((await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 })).days).toBe(1);
    await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    expect(await t.store.seriesDays.countDocuments({ metric: 'between' })).toBe(1);
    await expectAnswers('between', all, 'MINUTE', [], true);
    await expectAnswers('between', all, 'HOUR', [], true);
  });
});
