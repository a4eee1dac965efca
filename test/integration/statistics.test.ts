/**
 * First and last readings, percentiles and the latest readings, against plain loops over
 * the raw data (sharing no code with the server).
 *
 * Flights of flights-20k are recorded through the GraphQL mutation into three metrics:
 * - `flights`, set to sketch every level (day, hour and minute) before its first reading:
 *   the flights of 2001-01-29 to 2001-02-03 (UTC), plus every flight of two routes over
 *   the whole quarter (for the latest readings);
 * - `flights_default`, with the default statistics (day, hour and quarter-hour sketches): 2001-01-30
 *   to 2001-02-02;
 * - `flights_bare`, set to keep no sketch: a few origins on 2001-01-31.
 * The data set is cut to those windows to keep the load short. All but the last 300
 * readings of each metric are folded before the queries; those stay in the log's tail.
 *
 * 1. first/last of every bucket (UTC minutes to months, New York days and months,
 *    Kathmandu days whose boundary at 18:15 UTC cuts hours in two), filtered and grouped,
 *    and of aggregates, equal the earliest and latest reading (ties: smallest value first,
 *    largest value last).
 * 2. percentile(p) for p in 0, 10, 50, 90, 95, 99, 100 is within 1% of the value of rank
 *    floor(p/100 x (count - 1)) of the sorted values, exactly min and max at 0 and 100;
 *    `statistic: P95` and `columns { percentile(p: 95) }` agree with `p95`.
 * 3. Percentiles are null wherever the query reads slots without sketches, and only there.
 * 4. `Series.latest` and `Series.latestValue` equal the route's newest readings.
 * 5. Documents of layout version 1 (written before first/last, sketches and latest
 *    readings existed): counts and sums stay exact, first/last and percentiles are null
 *    for the buckets reading them (never a wrong number), the latest readings stop before them.
 */
import { Double } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeriesDocument } from '../../src/storage/store.ts';
import { seriesId } from '../../src/model/series.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { flightInputs, loadFlights20k, type RawFlight } from '../helpers/reference.ts';
import { referenceBuckets, referenceKey, type ZonedGranularity } from '../helpers/zoned-reference.ts';

let t: TestApp;
const all = loadFlights20k();
const route = (f: RawFlight) => `${f.origin}>${f.destination}`;

/** Routes recorded over the whole quarter into `flights` (at most 4 flights a day each). */
const LATEST_ROUTES = ['LAX>PHX', 'LAS>LAX'];
const WINDOW_FROM = Date.UTC(2001, 0, 29);
const WINDOW_TO = Date.UTC(2001, 1, 3);
/** Every flight recorded into `flights`. */
const flights = all.filter((f) => (f.time >= WINDOW_FROM && f.time < WINDOW_TO) || LATEST_ROUTES.includes(route(f)));
/** Every flight recorded into `flights_default`. */
const defaults = all.filter((f) => f.time >= Date.UTC(2001, 0, 30) && f.time < Date.UTC(2001, 1, 2));
const BARE_ORIGINS = ['ORD', 'DFW', 'ATL', 'LAX'];
/** Every flight recorded into `flights_bare`. */
const bare = all.filter((f) => f.time >= Date.UTC(2001, 0, 31) && f.time < Date.UTC(2001, 1, 1) && BARE_ORIGINS.includes(f.origin));

/** Readings of each metric left in the log's tail, recorded after the fold of all the others. */
const TAIL_READINGS = 300;

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const SET_STATISTICS = `mutation($metric: String!, $levels: [SlotLevel!]!, $latest: Int!) {
  setMetricStatistics(metric: $metric, sketchLevels: $levels, latestReadings: $latest) {
    name statistics { sketchLevels sketchFields latestReadings }
  }
}`;

async function record(metric: string, rows: readonly RawFlight[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const readings = flightInputs(rows.slice(i, i + 1000), metric);
    const response = await t.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings });
    expect(response.errors).toBeUndefined();
    expect(response.data?.recordReadings.recorded).toBe(readings.length);
  }
}

beforeAll(async () => {
  // Percentile queries weigh 10 buckets each: room for the MINUTE charts grouped by origin.
  t = await openTestApp('statistics', { journal: false, maxBuckets: 1_000_000 });
  const everyLevel = await t.graphql(SET_STATISTICS, { metric: 'flights', levels: ['DAY', 'HOUR', 'MINUTE'], latest: 50 });
  expect(everyLevel).toEqual({
    data: {
      setMetricStatistics: {
        name: 'flights',
        statistics: { sketchLevels: ['DAY', 'HOUR', 'MINUTE'], sketchFields: null, latestReadings: 50 },
      },
    },
  });
  const none = await t.graphql(SET_STATISTICS, { metric: 'flights_bare', levels: [], latest: 50 });
  expect(none.errors).toBeUndefined();
  // All but the last readings of each metric are folded, and those stay in the log's
  // tail: answers add folded documents and tail readings of the same buckets.
  const sets = [
    ['flights', flights],
    ['flights_default', defaults],
    ['flights_bare', bare],
  ] as const;
  await Promise.all(sets.map(([metric, rows]) => record(metric, rows.slice(0, -TAIL_READINGS))));
  await t.settle();
  await Promise.all(sets.map(([metric, rows]) => record(metric, rows.slice(-TAIL_READINGS))));
}, 600_000);

/** The largest relative error of a percentile seen, with its answer and exact value, and the number of percentiles checked. */
const worst = { error: 0, answer: 0, exact: 0 };
let percentileChecks = 0;
afterAll(async () => {
  console.log(
    `percentiles checked (flights metrics and legacy readings): largest relative error ${worst.error.toPrecision(6)} (${worst.answer} for exact ${worst.exact}) over ${percentileChecks} checks, bound 0.01`,
  );
  await t?.close();
});

type Field = 'delay' | 'distance';
type Pair = { time: string; value: number };
type Filter = { key: string; in: string[] };

/** The earliest reading (ties: the smallest value) and the latest (ties: the largest value), by a plain loop. */
function edges(readings: readonly { time: number; value: number }[]): { first: Pair | null; last: Pair | null } {
  let first: { time: number; value: number } | null = null;
  let last: { time: number; value: number } | null = null;
  for (const r of readings) {
    if (first === null || r.time < first.time || (r.time === first.time && r.value < first.value)) first = r;
    if (last === null || r.time > last.time || (r.time === last.time && r.value > last.value)) last = r;
  }
  const pair = (r: { time: number; value: number } | null) =>
    r === null ? null : { time: new Date(r.time).toISOString(), value: r.value };
  return { first: pair(first), last: pair(last) };
}

/** A returned `{time, value}` with its time as ISO text of the same instant (the server may omit milliseconds). */
const normalPair = (pair: Pair | null) =>
  pair === null ? null : { time: new Date(Date.parse(pair.time)).toISOString(), value: pair.value };

const PERCENTS = [0, 10, 50, 90, 95, 99, 100] as const;

/** Checks a percentile against the sorted values: exact min/max at 0/100, exact 0, else within 1% relative. */
function expectPercentile(actual: number | null | undefined, values: readonly number[], p: number, label: string): void {
  const sorted = [...values].sort((a, b) => a - b);
  const exact = sorted[Math.floor((p / 100) * (sorted.length - 1))]!;
  expect(actual, `${label} p${p} of ${sorted.length}`).not.toBeNull();
  expect(actual, `${label} p${p}`).toBeTypeOf('number');
  const answer = actual as number;
  percentileChecks += 1;
  if (p === 0) expect(answer, `${label} p0`).toBe(sorted[0]);
  else if (p === 100) expect(answer, `${label} p100`).toBe(sorted[sorted.length - 1]);
  else if (exact === 0) expect(answer, `${label} p${p} of exact 0`).toBe(0);
  else {
    const error = Math.abs(answer - exact) / Math.abs(exact);
    if (error > worst.error) Object.assign(worst, { error, answer, exact });
    expect(error <= 0.01 * (1 + 1e-9), `${label} p${p}: ${answer} vs exact ${exact}`).toBe(true);
  }
}

type BucketOut = {
  start: string;
  count: number;
  value: number | null;
  first: Pair | null;
  last: Pair | null;
  q0: number | null;
  q10: number | null;
  q50: number | null;
  q90: number | null;
  q95: number | null;
  q99: number | null;
  q100: number | null;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
};
type GroupOut = {
  tags: { key: string; value: string }[];
  buckets: BucketOut[];
  columns: { times: number[]; count: number[]; first: (number | null)[]; last: (number | null)[]; percentile: (number | null)[] };
};

const STATS = `count first { time value } last { time value }
  q0: percentile(p: 0) q10: percentile(p: 10) q50: percentile(p: 50) q90: percentile(p: 90)
  q95: percentile(p: 95) q99: percentile(p: 99) q100: percentile(p: 100) p50 p90 p95 p99`;
const BUCKETS = `query($metric: String!, $field: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!], $timeZone: String = "UTC", $fill: Fill = NULL) {
  buckets(metric: $metric, field: $field, granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, timeZone: $timeZone, fill: $fill, statistic: P95) {
    tags { key value }
    buckets { start value ${STATS} }
    columns { times count first last percentile(p: 95) }
  }
}`;
const AGGREGATE = `query($metric: String!, $field: String!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!]) {
  aggregate(metric: $metric, field: $field, from: $from, to: $to, where: $where, groupBy: $groupBy) { tags { key value } ${STATS} }
}`;

interface BucketCase {
  metric: string;
  data: readonly RawFlight[];
  field: Field;
  granularity: ZonedGranularity;
  zone: string;
  from: string;
  to: string;
  where?: Filter[];
  groupBy?: string[];
  /** List only buckets with readings (always so when grouped). */
  fillNone?: boolean;
}

/** True when a case lists only the buckets with readings (`fill: NONE`). */
const fillsNone = (c: BucketCase) => c.groupBy !== undefined || c.fillNone === true;

/** The reference of a bucket: its start, the part of it inside the range, and the readings of the field there. */
type ReferenceBucket = { start: number; from: number; to: number; readings: { time: number; value: number }[] };

/** Reference buckets of a case, per group (`''` when not grouped): every bucket of the range, or only those with readings (see {@link fillsNone}). */
function referenceGroups(c: BucketCase): Map<string, ReferenceBucket[]> {
  const from = Date.parse(c.from);
  const to = Date.parse(c.to);
  const selected = c.data.filter(
    (f) =>
      f.time >= from &&
      f.time < to &&
      (c.where ?? []).every((filter) => filter.in.includes(filter.key === 'origin' ? f.origin : f.destination)),
  );
  // Buckets with readings lie where the readings are: the walk over the range's minutes is cut to them.
  let walkFrom = from;
  let walkTo = to;
  if (fillsNone(c)) {
    walkFrom = Math.max(from, Math.min(...selected.map((f) => f.time)));
    walkTo = Math.min(to, Math.max(...selected.map((f) => f.time)) + 60_000);
  }
  const spans = referenceBuckets(walkFrom, walkTo, c.zone, c.granularity);
  const groups = new Map<string, Map<string, ReferenceBucket>>();
  const groupOf = (origin: string) => {
    let group = groups.get(origin);
    if (group === undefined) {
      group = new Map(
        spans.map((span) => [span.key, { start: span.start, from: Math.max(span.start, from), to: Math.min(span.end, to), readings: [] }]),
      );
      groups.set(origin, group);
    }
    return group;
  };
  if (c.groupBy === undefined) groupOf('');
  for (const f of selected) {
    const bucket = groupOf(c.groupBy === undefined ? '' : f.origin).get(referenceKey(f.time, c.zone, c.granularity));
    bucket!.readings.push({ time: f.time, value: f[c.field] });
  }
  const result = new Map<string, ReferenceBucket[]>();
  for (const origin of [...groups.keys()].sort()) {
    const list = [...groups.get(origin)!.values()];
    result.set(origin, fillsNone(c) ? list.filter((bucket) => bucket.readings.length > 0) : list);
  }
  return result;
}

async function queryBuckets(c: BucketCase): Promise<GroupOut[]> {
  const response = await t.graphql<{ buckets: GroupOut[] }>(BUCKETS, {
    metric: c.metric,
    field: c.field,
    granularity: c.granularity,
    from: c.from,
    to: c.to,
    where: c.where,
    groupBy: c.groupBy,
    timeZone: c.zone,
    fill: fillsNone(c) ? 'NONE' : 'NULL',
  });
  expect(response.errors).toBeUndefined();
  return response.data!.buckets;
}

const HOUR = 3_600_000;
const QUARTER = 900_000;

/**
 * True when a reading at `time` in the span `[from, to)` is read from a minute slot by a
 * metric that sketches quarter hours but not minutes: it lies outside the whole quarter
 * hours (UTC :00, :15, :30, :45) of the span (in its ragged ends, or anywhere in a span
 * without a whole quarter hour).
 */
function readFromMinutes(time: number, from: number, to: number): boolean {
  const firstWholeQuarter = Math.ceil(from / QUARTER) * QUARTER;
  const endOfWholeQuarters = Math.floor(to / QUARTER) * QUARTER;
  return firstWholeQuarter >= endOfWholeQuarters || time < firstWholeQuarter || time >= endOfWholeQuarters;
}

/**
 * How percentiles are checked: each within its bound (`checked`), each null (`null`),
 * or, for a metric sketching days, hours and quarter hours but not minutes (`quarters`),
 * null where a reading of the bucket is read from a minute slot (see
 * {@link readFromMinutes}) and within the bound where none is.
 */
type PercentileMode = 'checked' | 'null' | 'quarters';

/** How many buckets (or groups) had their percentiles checked, and how many had them null. */
type Tally = { checked: number; nulls: number };

/** True when `mode` expects percentiles for `readings` over the span `[from, to)`. */
function expectsPercentiles(mode: PercentileMode, readings: readonly { time: number }[], from: number, to: number): boolean {
  if (readings.length === 0 || mode === 'null') return false;
  return mode === 'checked' || !readings.some((r) => readFromMinutes(r.time, from, to));
}

/** Runs a bucket case and checks every bucket's start, count, first and last, and its percentiles (see {@link PercentileMode}). */
async function checkBuckets(c: BucketCase, percentiles: PercentileMode): Promise<Tally> {
  const tally = { checked: 0, nulls: 0 };
  const groups = await queryBuckets(c);
  const reference = referenceGroups(c);
  const label = `${c.metric} ${c.granularity} ${c.zone} [${c.from}, ${c.to}) ${JSON.stringify(c.where ?? c.groupBy ?? null)}`;
  expect(
    groups.map((group) => group.tags),
    label,
  ).toEqual([...reference.keys()].map((origin) => (origin === '' ? [] : [{ key: 'origin', value: origin }])));
  for (const group of groups) {
    const expected = reference.get(group.tags[0]?.value ?? '')!;
    const where = `${label} ${group.tags[0]?.value ?? ''}`;
    expect(
      group.buckets.map((bucket) => Date.parse(bucket.start)),
      where,
    ).toEqual(expected.map((bucket) => bucket.start));
    expect(group.columns.times).toEqual(expected.map((bucket) => bucket.start));
    group.buckets.forEach((bucket, i) => {
      const ref = expected[i]!;
      const at = `${where} bucket ${bucket.start}`;
      const values = ref.readings.map((r) => r.value);
      expect(bucket.count, at).toBe(values.length);
      const { first, last } = edges(ref.readings);
      expect(normalPair(bucket.first), `${at} first`).toEqual(first);
      expect(normalPair(bucket.last), `${at} last`).toEqual(last);
      expect([group.columns.count[i], group.columns.first[i], group.columns.last[i]], `${at} columns`).toEqual([
        values.length,
        first?.value ?? null,
        last?.value ?? null,
      ]);
      // `value` carries `statistic: P95`, the columns the same percentile.
      expect([bucket.value, group.columns.percentile[i]], `${at} value and column of p95`).toEqual([bucket.p95, bucket.p95]);
      expect([bucket.p50, bucket.p90, bucket.p95, bucket.p99], `${at} named percentiles`).toEqual([
        bucket.q50,
        bucket.q90,
        bucket.q95,
        bucket.q99,
      ]);
      const answers = [bucket.q0, bucket.q10, bucket.q50, bucket.q90, bucket.q95, bucket.q99, bucket.q100];
      if (!expectsPercentiles(percentiles, ref.readings, ref.from, ref.to)) {
        expect(answers, `${at} percentiles null`).toEqual(answers.map(() => null));
        if (values.length > 0) tally.nulls += 1;
        return;
      }
      PERCENTS.forEach((p, k) => {
        expectPercentile(answers[k], values, p, at);
      });
      tally.checked += 1;
    });
  }
  return tally;
}

type AggregateOut = Omit<BucketOut, 'start' | 'value'> & { tags: { key: string; value: string }[] };

async function checkAggregate(
  c: Omit<BucketCase, 'granularity' | 'zone'>,
  percentiles: PercentileMode,
): Promise<AggregateOut[] & { tally: Tally }> {
  const response = await t.graphql<{ aggregate: AggregateOut[] }>(AGGREGATE, {
    metric: c.metric,
    field: c.field,
    from: c.from,
    to: c.to,
    where: c.where,
    groupBy: c.groupBy,
  });
  expect(response.errors).toBeUndefined();
  const from = Date.parse(c.from);
  const to = Date.parse(c.to);
  const selected = c.data.filter(
    (f) =>
      f.time >= from &&
      f.time < to &&
      (c.where ?? []).every((filter) => filter.in.includes(filter.key === 'origin' ? f.origin : f.destination)),
  );
  const origins = c.groupBy === undefined ? [''] : [...new Set(selected.map((f) => f.origin))].sort();
  const results = Object.assign(response.data!.aggregate, { tally: { checked: 0, nulls: 0 } });
  expect(results.map((a) => a.tags)).toEqual(origins.map((origin) => (origin === '' ? [] : [{ key: 'origin', value: origin }])));
  results.forEach((aggregate, i) => {
    const mine = selected.filter((f) => origins[i] === '' || f.origin === origins[i]);
    const at = `${c.metric} aggregate [${c.from}, ${c.to}) ${origins[i]}`;
    const values = mine.map((f) => f[c.field]);
    expect(aggregate.count, at).toBe(values.length);
    const { first, last } = edges(mine.map((f) => ({ time: f.time, value: f[c.field] })));
    expect(normalPair(aggregate.first), `${at} first`).toEqual(first);
    expect(normalPair(aggregate.last), `${at} last`).toEqual(last);
    const answers = [aggregate.q0, aggregate.q10, aggregate.q50, aggregate.q90, aggregate.q95, aggregate.q99, aggregate.q100];
    expect([aggregate.p50, aggregate.p90, aggregate.p95, aggregate.p99]).toEqual([
      aggregate.q50,
      aggregate.q90,
      aggregate.q95,
      aggregate.q99,
    ]);
    if (expectsPercentiles(percentiles, mine, from, to)) {
      PERCENTS.forEach((p, k) => {
        expectPercentile(answers[k], values, p, at);
      });
      results.tally.checked += 1;
    } else {
      expect(answers, `${at} percentiles null`).toEqual(answers.map(() => null));
      results.tally.nulls += 1;
    }
  });
  return results;
}

it('recorded the three metrics with their statistics', async () => {
  expect(flights.length).toBeGreaterThan(1200);
  expect(defaults.length).toBeGreaterThan(500);
  expect(bare.length).toBeGreaterThan(20);
  const response = await t.graphql<{ metrics: { name: string; statistics: unknown }[] }>(
    `{ metrics { name statistics { sketchLevels sketchFields latestReadings } } }`,
  );
  expect(response.data?.metrics).toEqual([
    { name: 'flights', statistics: { sketchLevels: ['DAY', 'HOUR', 'MINUTE'], sketchFields: null, latestReadings: 50 } },
    { name: 'flights_bare', statistics: { sketchLevels: [], sketchFields: null, latestReadings: 50 } },
    { name: 'flights_default', statistics: { sketchLevels: ['DAY', 'HOUR', 'QUARTER'], sketchFields: null, latestReadings: 50 } },
  ]);
});

/**
 * [granularity, zone, from, to, also grouped]: whole and ragged ranges, UTC and zones whose
 * day boundaries fall on hours (New York, 05:00 UTC) and inside them (Kathmandu, 18:15 UTC).
 */
const CASES: [ZonedGranularity, string, string, string, boolean][] = [
  ['MINUTE', 'UTC', '2001-01-31T06:00:00Z', '2001-01-31T12:00:00Z', true],
  ['MINUTE', 'UTC', '2001-02-01T13:17:00Z', '2001-02-01T16:41:00Z', false],
  ['HOUR', 'UTC', '2001-01-29T00:00:00Z', '2001-02-03T00:00:00Z', false],
  ['HOUR', 'UTC', '2001-01-30T05:17:00Z', '2001-02-01T09:41:00Z', true],
  ['DAY', 'UTC', '2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z', false],
  ['DAY', 'UTC', '2001-01-29T17:45:00Z', '2001-02-02T06:06:00Z', true],
  ['WEEK', 'UTC', '2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z', false],
  ['MONTH', 'UTC', '2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z', false],
  ['MONTH', 'UTC', '2001-01-29T08:08:00Z', '2001-02-02T21:21:00Z', false],
  ['DAY', 'America/New_York', '2001-01-29T00:00:00-05:00', '2001-02-03T00:00:00-05:00', true],
  ['MONTH', 'America/New_York', '2001-01-01T00:00:00-05:00', '2001-03-01T00:00:00-05:00', false],
  ['DAY', 'Asia/Kathmandu', '2001-01-29T00:00:00+05:45', '2001-02-03T00:00:00+05:45', false],
  ['DAY', 'Asia/Kathmandu', '2001-01-29T07:13:00+05:45', '2001-02-02T15:47:00+05:45', true],
];

const HUBS = ['ORD', 'DFW', 'ATL'];

describe('first, last and percentiles of buckets on flights (every level sketched) equal plain loops', () => {
  it.each(CASES)(
    '%s in %s over [%s, %s): all series, filtered (and grouped by origin: %s)',
    async (granularity, zone, from, to, grouped) => {
      const base = { metric: 'flights', data: flights, granularity, zone, from, to };
      await checkBuckets({ ...base, field: 'delay' }, 'checked');
      await checkBuckets({ ...base, field: 'distance', where: [{ key: 'origin', in: HUBS }] }, 'checked');
      if (grouped) await checkBuckets({ ...base, field: 'delay', groupBy: ['origin'] }, 'checked');
    },
  );

  it('MONTH in America/New_York over 20 years (too many boundary days to plan: each day read as cut at local midnight), fill NONE', async () => {
    const base = { metric: 'flights', data: flights, granularity: 'MONTH', zone: 'America/New_York', fillNone: true } as const;
    const range = { from: '1990-01-01T00:00:00-05:00', to: '2010-01-01T00:00:00-05:00' };
    const all = await checkBuckets({ ...base, ...range, field: 'delay' }, 'checked');
    expect(all.checked).toBe(3);
    await checkBuckets({ ...base, ...range, field: 'distance', where: [{ key: 'origin', in: HUBS }] }, 'checked');
  });

  it('statistic FIRST, LAST and P95 alone (no other field selected) put them in `value`', async () => {
    const c: BucketCase = {
      metric: 'flights',
      data: flights,
      field: 'delay',
      granularity: 'DAY',
      zone: 'UTC',
      from: '2001-01-30T05:17:00Z',
      to: '2001-02-02T09:41:00Z',
      where: [{ key: 'origin', in: HUBS }],
    };
    const reference = referenceGroups(c).get('')!;
    expect(reference.filter((bucket) => bucket.readings.length > 0)).toHaveLength(4);
    const values: Record<string, (number | null)[]> = {};
    for (const statistic of ['FIRST', 'LAST', 'P95']) {
      const response = await t.graphql<{ buckets: { buckets: { value: number | null }[] }[] }>(
        `query($from: Time!, $to: Time!, $where: [TagFilter!], $statistic: Statistic!) {
          buckets(metric: "flights", field: "delay", granularity: DAY, from: $from, to: $to, where: $where, statistic: $statistic) { buckets { value } }
        }`,
        { from: c.from, to: c.to, where: c.where, statistic },
      );
      expect(response.errors).toBeUndefined();
      values[statistic] = response.data!.buckets[0]!.buckets.map((b) => b.value);
    }
    expect(values.FIRST).toEqual(reference.map((bucket) => edges(bucket.readings).first?.value ?? null));
    expect(values.LAST).toEqual(reference.map((bucket) => edges(bucket.readings).last?.value ?? null));
    reference.forEach((bucket, i) => {
      if (bucket.readings.length === 0) expect(values.P95![i]).toBeNull();
      else
        expectPercentile(
          values.P95![i],
          bucket.readings.map((r) => r.value),
          95,
          `P95 ${bucket.start}`,
        );
    });
  });

  it.each([-1, 100.5])('percentile(p: %s) is refused with INVALID_ARGUMENT', async (p) => {
    const response = await t.graphql<{ aggregate: { count: number; percentile: number | null }[] }>(
      `query($p: Float!) { aggregate(metric: "flights", field: "delay", from: "2001-01-30T00:00:00Z", to: "2001-01-31T00:00:00Z") { count percentile(p: $p) } }`,
      { p },
    );
    expect(response.errors?.map((error) => [error.extensions?.code, error.path])).toEqual([
      ['INVALID_ARGUMENT', ['aggregate', 0, 'percentile']],
    ]);
    expect(response.data?.aggregate).toEqual([
      { count: flights.filter((f) => f.time >= Date.UTC(2001, 0, 30) && f.time < Date.UTC(2001, 0, 31)).length, percentile: null },
    ]);
  });
});

describe('first, last and percentiles of aggregates on flights equal plain loops', () => {
  const RANGES: [string, string][] = [
    ['2001-01-29T00:00:00Z', '2001-02-03T00:00:00Z'],
    ['2001-01-30T05:17:00Z', '2001-02-02T09:41:00Z'],
    ['2001-01-31T14:07:00Z', '2001-01-31T14:52:00Z'],
  ];
  it.each(RANGES)('over [%s, %s): all series, filtered, grouped by origin', async (from, to) => {
    const base = { metric: 'flights', data: flights, from, to };
    await checkAggregate({ ...base, field: 'delay' }, 'checked');
    await checkAggregate({ ...base, field: 'distance', where: [{ key: 'origin', in: HUBS }] }, 'checked');
    const grouped = await checkAggregate({ ...base, field: 'delay', groupBy: ['origin'] }, 'checked');
    expect(grouped.length).toBeGreaterThan(5);
  });
});

describe('percentiles are null exactly where the query reads slots without sketches', () => {
  const base = { metric: 'flights_default', data: defaults, field: 'delay' as const };

  it('flights_default (day and hour sketches): MINUTE buckets have counts, first and last but no percentile', async () => {
    const all = await checkBuckets(
      { ...base, granularity: 'MINUTE', zone: 'UTC', from: '2001-01-31T06:00:00Z', to: '2001-01-31T09:00:00Z' },
      'null',
    );
    const grouped = await checkBuckets(
      { ...base, granularity: 'MINUTE', zone: 'UTC', from: '2001-01-31T06:00:00Z', to: '2001-01-31T07:30:00Z', groupBy: ['origin'] },
      'null',
    );
    expect([all.nulls, grouped.nulls].every((n) => n > 20)).toBe(true);
  });

  it('flights_default: DAY over whole UTC days and HOUR over whole hours have every percentile', async () => {
    const days = await checkBuckets(
      { ...base, granularity: 'DAY', zone: 'UTC', from: '2001-01-30T00:00:00Z', to: '2001-02-02T00:00:00Z' },
      'checked',
    );
    const hours = await checkBuckets(
      {
        ...base,
        granularity: 'HOUR',
        zone: 'UTC',
        from: '2001-01-31T00:00:00Z',
        to: '2001-02-01T00:00:00Z',
        where: [{ key: 'origin', in: HUBS }],
      },
      'checked',
    );
    expect(days.checked).toBe(3);
    expect(hours.checked).toBeGreaterThan(12);
  });

  it('flights_default: a bucket has percentiles unless a reading of it lies outside the whole quarter hours of its part of the range', async () => {
    // Ragged edges inside quarter hours, edges on whole hours and quarters, New York days
    // (05:00 UTC), Kathmandu days (18:15 UTC: inside an hour), Kolkata hours (:30 UTC) and
    // Kathmandu half hours, all series and grouped by origin.
    const tally = { checked: 0, nulls: 0 };
    for (const [granularity, zone, from, to, grouped] of [
      ['DAY', 'UTC', '2001-01-30T05:17:00Z', '2001-02-01T18:41:00Z', true],
      ['DAY', 'UTC', '2001-01-30T05:00:00Z', '2001-02-01T18:00:00Z', false],
      ['HOUR', 'UTC', '2001-01-31T05:17:00Z', '2001-01-31T12:41:00Z', false],
      ['DAY', 'America/New_York', '2001-01-30T00:00:00-05:00', '2001-02-02T00:00:00-05:00', false],
      ['DAY', 'Asia/Kathmandu', '2001-01-30T00:00:00+05:45', '2001-02-02T00:00:00+05:45', true],
      ['HOUR', 'Asia/Kolkata', '2001-01-31T07:00:00+05:30', '2001-01-31T19:00:00+05:30', true],
      ['THIRTY_MINUTES', 'Asia/Kathmandu', '2001-01-31T12:00:00+05:45', '2001-01-31T15:00:00+05:45', false],
    ] as const) {
      for (const groupBy of grouped ? [undefined, ['origin']] : [undefined]) {
        const result = await checkBuckets({ ...base, granularity, zone, from, to, groupBy }, 'quarters');
        tally.checked += result.checked;
        tally.nulls += result.nulls;
      }
    }
    // Only the ragged ends inside quarter hours (:17 to :30, :30 to :41 UTC) are read from minute slots.
    expect(tally.checked).toBeGreaterThan(100);
    expect(tally.nulls).toBeGreaterThan(4);
  });

  it('flights_default: an aggregate has percentiles unless a reading lies in a ragged quarter hour of its range', async () => {
    const ragged = await checkAggregate({ ...base, from: '2001-01-30T05:17:00Z', to: '2001-02-01T00:00:00Z' }, 'quarters');
    expect(ragged.tally).toEqual({ checked: 0, nulls: 1 });
    const groups = await checkAggregate(
      { ...base, from: '2001-01-30T05:17:00Z', to: '2001-02-01T00:00:00Z', groupBy: ['origin'] },
      'quarters',
    );
    expect(groups.tally.checked).toBeGreaterThan(10);
    expect(groups.tally.nulls).toBeGreaterThan(0);
    const whole = await checkAggregate({ ...base, from: '2001-01-30T05:00:00Z', to: '2001-02-01T13:00:00Z' }, 'checked');
    expect(whole.tally).toEqual({ checked: 1, nulls: 0 });
    await checkAggregate({ ...base, from: '2001-01-30T05:00:00Z', to: '2001-02-01T13:00:00Z', groupBy: ['origin'] }, 'checked');
  });

  it('flights_bare (no sketches): no percentile anywhere, counts, first and last exact', async () => {
    const bareBase = { metric: 'flights_bare', data: bare, field: 'delay' as const };
    await checkBuckets({ ...bareBase, granularity: 'DAY', zone: 'UTC', from: '2001-01-30T00:00:00Z', to: '2001-02-02T00:00:00Z' }, 'null');
    await checkBuckets(
      { ...bareBase, granularity: 'HOUR', zone: 'UTC', from: '2001-01-31T00:00:00Z', to: '2001-02-01T00:00:00Z', groupBy: ['origin'] },
      'null',
    );
    await checkBuckets(
      { ...bareBase, granularity: 'MINUTE', zone: 'UTC', from: '2001-01-31T12:00:00Z', to: '2001-01-31T14:00:00Z' },
      'null',
    );
    const [aggregate] = await checkAggregate({ ...bareBase, from: '2001-01-31T00:00:00Z', to: '2001-02-01T00:00:00Z' }, 'null');
    expect(aggregate!.count).toBe(bare.length);
  });
});

describe('Series.buckets and Series.aggregate (one pipeline for every series) carry first, last and percentiles', () => {
  it('for every route from LAX and LAS, MONTH buckets over the quarter and the aggregate equal plain loops', async () => {
    const from = '2001-01-01T00:00:00Z';
    const to = '2001-04-01T00:00:00Z';
    const response = await t.graphql<{
      series: {
        tags: { key: string; value: string }[];
        buckets: (BucketOut & { start: string })[];
        aggregate: Omit<BucketOut, 'start' | 'value'>;
      }[];
    }>(
      `query($from: Time!, $to: Time!) { series(metric: "flights", where: [{key: "origin", in: ["LAX", "LAS"]}], limit: 1000) {
        tags { key value }
        buckets(field: "delay", granularity: MONTH, from: $from, to: $to, statistic: P95) { start value ${STATS} }
        aggregate(field: "delay", from: $from, to: $to) { ${STATS} }
      } }`,
      { from, to },
    );
    expect(response.errors).toBeUndefined();
    const series = response.data!.series;
    const routes = [...new Set(flights.filter((f) => f.origin === 'LAX' || f.origin === 'LAS').map(route))];
    expect(series).toHaveLength(routes.length);
    const months = [Date.UTC(2001, 0, 1), Date.UTC(2001, 1, 1), Date.UTC(2001, 2, 1), Date.UTC(2001, 3, 1)];
    for (const s of series) {
      const tag = (key: string) => s.tags.find((t) => t.key === key)!.value;
      const name = `${tag('origin')}>${tag('destination')}`;
      const mine = flights.filter((f) => route(f) === name).map((f) => ({ time: f.time, value: f.delay }));
      expect(s.buckets.map((b) => Date.parse(b.start))).toEqual(months.slice(0, 3));
      const parts = [
        ...s.buckets.map((bucket, i) => [bucket, months[i]!, months[i + 1]!] as const),
        [s.aggregate, months[0]!, months[3]!] as const,
      ];
      for (const [stats, start, end] of parts) {
        const inside = mine.filter((r) => r.time >= start && r.time < end);
        const at = `${name} [${new Date(start).toISOString()}, ${new Date(end).toISOString()})`;
        expect(stats.count, at).toBe(inside.length);
        const { first, last } = edges(inside);
        expect([normalPair(stats.first), normalPair(stats.last)], at).toEqual([first, last]);
        const answers = [stats.q0, stats.q10, stats.q50, stats.q90, stats.q95, stats.q99, stats.q100];
        if (inside.length === 0) expect(answers, at).toEqual(answers.map(() => null));
        else
          PERCENTS.forEach((p, k) => {
            expectPercentile(
              answers[k],
              inside.map((r) => r.value),
              p,
              at,
            );
          });
      }
      for (const bucket of s.buckets) expect(bucket.value).toBe(bucket.p95);
    }
  });
});

type LatestOut = { time: string; delay: number | null; values: { name: string; value: number }[] };
type SeriesOut = { id: string; latestValue: Pair | null; latest: LatestOut[] };
const LATEST = `query($metric: String!, $where: [TagFilter!], $n: Int!, $field: String!) {
  series(metric: $metric, where: $where) { id latestValue(field: $field) { time value } latest(n: $n) { time delay: value(field: $field) values { name value } } }
}`;

describe('latest readings of flights routes equal the newest readings', () => {
  const byRoute = new Map<string, RawFlight[]>();
  for (const f of flights) byRoute.set(route(f), [...(byRoute.get(route(f)) ?? []), f]);
  // A route of the window with a few flights: fewer than n in all.
  const small = [...byRoute.keys()]
    .sort()
    .find((r) => !LATEST_ROUTES.includes(r) && byRoute.get(r)!.length >= 3 && byRoute.get(r)!.length < 10)!;
  const reading = (time: number, delay: number, distance: number) => `${time} ${delay} ${distance}`;

  it.each([...LATEST_ROUTES, small].flatMap((r) => [10, 50].map((n) => [r, n] as const)))('%s, n: %i', async (name, n) => {
    const [origin, destination] = name.split('>') as [string, string];
    const mine = byRoute.get(name)!;
    // The walk over days must go on past the newest day: it holds fewer than n readings.
    const newestDay = Math.max(...mine.map((f) => Math.floor(f.time / 86_400_000)));
    expect(mine.filter((f) => Math.floor(f.time / 86_400_000) === newestDay).length).toBeLessThan(Math.min(n, mine.length));
    const response = await t.graphql<{ series: SeriesOut[] }>(LATEST, {
      metric: 'flights',
      where: [
        { key: 'origin', in: [origin] },
        { key: 'destination', in: [destination] },
      ],
      n,
      field: 'delay',
    });
    expect(response.errors).toBeUndefined();
    const [series] = response.data!.series;
    expect(response.data!.series).toHaveLength(1);
    expect(series!.id).toBe(`flights,destination=${destination},origin=${origin}`);

    // Newest first by time; readings of the same minute in any order, so compared as multisets per time.
    const newest = [...mine].sort((a, b) => b.time - a.time);
    const latest = series!.latest;
    expect(latest.length).toBe(Math.min(n, mine.length));
    expect(latest.map((r) => Date.parse(r.time))).toEqual(newest.slice(0, latest.length).map((f) => f.time));
    for (const r of latest) {
      expect(r.values.map((v) => v.name)).toEqual(['delay', 'distance']);
      expect(r.delay).toBe(r.values[0]!.value);
    }
    for (const time of new Set(latest.map((r) => Date.parse(r.time)))) {
      const pool = mine.filter((f) => f.time === time).map((f) => reading(f.time, f.delay, f.distance));
      for (const r of latest.filter((r) => Date.parse(r.time) === time)) {
        const at = pool.indexOf(reading(time, r.values[0]!.value, r.values[1]!.value));
        expect(at, `reading at ${r.time} ${JSON.stringify(r.values)}`).toBeGreaterThanOrEqual(0);
        pool.splice(at, 1);
      }
    }
    expect(normalPair(series!.latestValue)).toEqual(edges(mine.map((f) => ({ time: f.time, value: f.delay }))).last);
  });

  it.each([0, 51])('n: %i is refused with INVALID_ARGUMENT and no data', async (n) => {
    const response = await t.graphql<{ series: SeriesOut[] }>(LATEST, {
      metric: 'flights',
      where: [
        { key: 'origin', in: ['LAX'] },
        { key: 'destination', in: ['PHX'] },
      ],
      n,
      field: 'delay',
    });
    expect(response.data ?? null).toBeNull();
    expect(response.errors?.map((error) => error.extensions?.code)).toEqual(['INVALID_ARGUMENT']);
  });
});

describe('documents of layout version 1 (written before first/last, sketches and latest readings)', () => {
  const DAY = 86_400_000;
  const D1 = Date.UTC(2001, 2, 10);
  type Legacy = { host: string; time: number; value: number };
  /** Recorded through the mutation (layout version 2). Two pairs share a millisecond. */
  const recorded: Legacy[] = [
    { host: 'a', time: D1 + 7 * HOUR + 5 * 60_000, value: 12.25 },
    { host: 'a', time: D1 + 7 * HOUR + 5 * 60_000, value: 10.5 },
    { host: 'a', time: D1 + 13 * HOUR + 40 * 60_000, value: 9.75 },
    { host: 'a', time: D1 + 2 * DAY + 2 * HOUR, value: 20 },
    { host: 'a', time: D1 + 2 * DAY + 23 * HOUR + 59 * 60_000, value: 21.5 },
    { host: 'a', time: D1 + 3 * DAY + 11 * HOUR + 11 * 60_000, value: -3.5 },
    { host: 'a', time: D1 + 3 * DAY + 11 * HOUR + 11 * 60_000, value: -3.25 },
  ];
  /** Inserted directly as version-1 documents: host a on D1 + 1 day (between its recorded days), host b on D1 + 2 days (its only day). */
  const old: Legacy[] = [
    { host: 'a', time: D1 + DAY + 7 * HOUR + 30 * 60_000, value: 15.5 },
    { host: 'a', time: D1 + DAY + 7 * HOUR + 45 * 60_000, value: 14.25 },
    { host: 'a', time: D1 + DAY + 15 * HOUR + 10 * 60_000, value: 16.75 },
    { host: 'b', time: D1 + 2 * DAY + 8 * HOUR, value: 1.5 },
    { host: 'b', time: D1 + 2 * DAY + 9 * HOUR + 30 * 60_000, value: 2.5 },
  ];
  /**
   * Recorded through the mutation into host a's version-1 day, later: it lands in a
   * version-2 part of that day (the version-1 document itself is never written again).
   */
  const late: Legacy = { host: 'a', time: D1 + DAY + 20 * HOUR, value: 30 };
  /**
   * True when a bucket of `readings` reads a version-1 document: the document has a slot
   * in the bucket, that is the bucket holds one of its readings (those of `old`). Readings
   * recorded into its day later are in parts of their own, read without it where it has
   * no slot.
   */
  const readsOldDocument = (readings: readonly Legacy[]) => readings.some((r) => old.includes(r));

  const toInput = (r: Legacy) => ({
    metric: 'legacy',
    tags: [{ key: 'host', value: r.host }],
    time: new Date(r.time).toISOString(),
    fields: [{ name: 'temp', value: r.value }],
  });

  /** Statistics of some values in the version-1 shape: doubles, no first/last. */
  function v1Stats(values: number[]) {
    let sum = 0;
    let sq = 0;
    for (const v of values) {
      sum += v;
      sq += v * v;
    }
    return {
      n: new Double(values.length),
      sum: new Double(sum),
      min: new Double(Math.min(...values)),
      max: new Double(Math.max(...values)),
      sq: new Double(sq),
    };
  }

  /** A series-day document as written before layout version 2, built from its readings by plain loops. */
  function v1Document(series: string, host: string, readings: Legacy[]) {
    const hours: Record<string, { fields: Record<string, unknown>; minutes: Record<string, Record<string, unknown>> }> = {};
    for (const hour of new Set(readings.map((r) => new Date(r.time).getUTCHours()))) {
      const inHour = readings.filter((r) => new Date(r.time).getUTCHours() === hour);
      const minutes: Record<string, Record<string, unknown>> = {};
      for (const minute of new Set(inHour.map((r) => new Date(r.time).getUTCMinutes()))) {
        minutes[String(minute)] = { temp: v1Stats(inHour.filter((r) => new Date(r.time).getUTCMinutes() === minute).map((r) => r.value)) };
      }
      hours[String(hour)] = { fields: { temp: v1Stats(inHour.map((r) => r.value)) }, minutes };
    }
    const times = readings.map((r) => r.time);
    return {
      series,
      metric: 'legacy',
      tags: { host },
      tagPairs: [`host=${host}`],
      date: new Date(Math.floor(times[0]! / DAY) * DAY),
      first: new Date(Math.min(...times)),
      last: new Date(Math.max(...times)),
      fields: { temp: v1Stats(readings.map((r) => r.value)) },
      hours,
    };
  }

  type LegacyBucket = { start: string; count: number; sum: number | null; first: Pair | null; last: Pair | null; p50: number | null };
  const LEGACY_BUCKETS = `query($granularity: Granularity!, $from: Time!, $to: Time!, $groupBy: [String!]) {
    buckets(metric: "legacy", field: "temp", granularity: $granularity, from: $from, to: $to, groupBy: $groupBy, fill: NONE) {
      tags { value } buckets { start count sum first { time value } last { time value } p50 }
    }
  }`;
  const LEGACY_AGGREGATE = `query($from: Time!, $to: Time!, $groupBy: [String!]) {
    aggregate(metric: "legacy", field: "temp", from: $from, to: $to, groupBy: $groupBy) { tags { value } count sum first { time value } last { time value } p50 }
  }`;

  /**
   * Checks buckets of host groups against `readings`: count and sum always exact; first
   * and last null where a bucket reads a version-1 document ({@link readsOldDocument}),
   * else exact; p50 null where it holds a reading stored without a sketch (those of
   * `old`, the same buckets), else within 1%.
   * @returns how many buckets had null first/last, null p50, and checked p50.
   */
  async function checkLegacy(granularity: 'HOUR' | 'DAY' | 'MONTH', from: number, to: number, readings: Legacy[]) {
    const response = await t.graphql<{ buckets: { tags: { value: string }[]; buckets: LegacyBucket[] }[] }>(LEGACY_BUCKETS, {
      granularity,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      groupBy: ['host'],
    });
    expect(response.errors).toBeUndefined();
    const startOf = (ms: number) =>
      granularity === 'HOUR'
        ? Math.floor(ms / HOUR) * HOUR
        : granularity === 'DAY'
          ? Math.floor(ms / DAY) * DAY
          : Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1);
    const inRange = readings.filter((r) => r.time >= from && r.time < to);
    const hosts = [...new Set(inRange.map((r) => r.host))].sort();
    expect(response.data!.buckets.map((g) => g.tags[0]!.value)).toEqual(hosts);
    const tally = { firstLastNull: 0, p50Null: 0, p50: 0 };
    for (const group of response.data!.buckets) {
      const mine = inRange.filter((r) => r.host === group.tags[0]!.value);
      const starts = [...new Set(mine.map((r) => startOf(r.time)))].sort((a, b) => a - b);
      expect(group.buckets.map((b) => Date.parse(b.start))).toEqual(starts);
      group.buckets.forEach((bucket, i) => {
        const inBucket = mine.filter((r) => startOf(r.time) === starts[i]);
        const at = `${granularity} ${group.tags[0]!.value} ${bucket.start}`;
        let sum = 0;
        for (const r of inBucket) sum += r.value;
        expect([bucket.count, bucket.sum], at).toEqual([inBucket.length, sum]);
        if (readsOldDocument(inBucket)) {
          expect([bucket.first, bucket.last], `${at} reads a version-1 document`).toEqual([null, null]);
          tally.firstLastNull += 1;
        } else {
          const { first, last } = edges(inBucket);
          expect([normalPair(bucket.first), normalPair(bucket.last)], at).toEqual([first, last]);
        }
        if (inBucket.some((r) => old.includes(r))) {
          expect(bucket.p50, `${at} holds readings without a sketch`).toBeNull();
          tally.p50Null += 1;
        } else {
          expectPercentile(
            bucket.p50,
            inBucket.map((r) => r.value),
            50,
            at,
          );
          tally.p50 += 1;
        }
      });
    }
    return tally;
  }

  beforeAll(async () => {
    const response = await t.graphql(RECORD, { readings: recorded.map(toInput) });
    expect(response.errors).toBeUndefined();
    const registered = await t.store.series.findOne({ key: 'legacy,host=a' });
    expect(registered).not.toBeNull();
    // Host b is known only from before: its registry entry and its one document are written here.
    const b: SeriesDocument = {
      _id: seriesId('legacy,host=b'),
      key: 'legacy,host=b',
      metric: 'legacy',
      tags: { host: 'b' },
      tagPairs: ['host=b'],
      fields: ['temp'],
    };
    await t.store.series.insertOne(b);
    for (const [series, host] of [
      [registered!._id, 'a'],
      [b._id, 'b'],
    ] as const) {
      await t.store.seriesDays.insertOne(
        v1Document(
          series,
          host,
          old.filter((r) => r.host === host),
        ) as never,
      );
    }
  });

  it('counts and sums stay exact; first, last and p50 are null for buckets reading them, exact elsewhere', async () => {
    const readings = [...recorded, ...old];
    expect(await checkLegacy('DAY', D1, D1 + 5 * DAY, readings)).toEqual({ firstLastNull: 2, p50Null: 2, p50: 3 });
    expect(await checkLegacy('HOUR', D1, D1 + 5 * DAY, readings)).toEqual({ firstLastNull: 4, p50Null: 4, p50: 5 });
    expect(await checkLegacy('MONTH', Date.UTC(2001, 2, 1), Date.UTC(2001, 3, 1), readings)).toEqual({
      firstLastNull: 2,
      p50Null: 2,
      p50: 0,
    });

    // Aggregates: only host a's recorded days, then every day.
    const response = await t.graphql<{ aggregate: (Omit<LegacyBucket, 'start'> & { tags: { value: string }[] })[] }>(LEGACY_AGGREGATE, {
      from: new Date(D1 + 3 * DAY).toISOString(),
      to: new Date(D1 + 4 * DAY).toISOString(),
    });
    const d4 = recorded.filter((r) => r.time >= D1 + 3 * DAY);
    const [aggregate] = response.data!.aggregate;
    expect(response.data!.aggregate).toHaveLength(1);
    expect([aggregate!.count, aggregate!.sum, normalPair(aggregate!.first), normalPair(aggregate!.last)]).toEqual([
      2,
      -6.75,
      edges(d4).first,
      edges(d4).last,
    ]);
    expectPercentile(
      aggregate!.p50,
      d4.map((r) => r.value),
      50,
      'legacy aggregate of version-2 days',
    );
    const whole = await t.graphql<{ aggregate: (Omit<LegacyBucket, 'start'> & { tags: { value: string }[] })[] }>(LEGACY_AGGREGATE, {
      from: new Date(D1).toISOString(),
      to: new Date(D1 + 5 * DAY).toISOString(),
      groupBy: ['host'],
    });
    let sumA = 0;
    for (const r of readings) if (r.host === 'a') sumA += r.value;
    expect(whole.data!.aggregate).toEqual([
      { tags: [{ value: 'a' }], count: 10, sum: sumA, first: null, last: null, p50: null },
      { tags: [{ value: 'b' }], count: 2, sum: 4, first: null, last: null, p50: null },
    ]);
  });

  /** Newest first by time; readings of the same millisecond in either order (compared sorted by value). */
  const byTimeThenValue = (x: [number, number | null | undefined], y: [number, number | null | undefined]) => y[0] - x[0] || y[1]! - x[1]!;

  /** Checks the latest readings of both hosts (see the test below). */
  async function checkLatest() {
    const response = await t.graphql<{ series: SeriesOut[] }>(LATEST, { metric: 'legacy', n: 50, field: 'temp' });
    expect(response.errors).toBeUndefined();
    const [a, b] = response.data!.series;
    expect([a!.id, b!.id]).toEqual(['legacy,host=a', 'legacy,host=b']);
    // Host a: its two newest days only (the older recorded day lies behind the version-1 document).
    const newer = recorded.filter((r) => r.time >= D1 + 2 * DAY);
    const expected = [...newer].map((r): [number, number] => [r.time, r.value]).sort(byTimeThenValue);
    const got = a!.latest.map((r): [number, number | null | undefined] => [Date.parse(r.time), r.delay]);
    expect(got.map(([time]) => time)).toEqual(expected.map(([time]) => time));
    expect([...got].sort(byTimeThenValue)).toEqual(expected);
    expect(normalPair(a!.latestValue)).toEqual(edges(recorded).last);
    expect(b!.latest).toEqual([]);
    expect(b!.latestValue).toBeNull();
  }

  it('latest readings stop before a version-1 document; latestValue is null when the newest document is one', async () => {
    // From the log's tail (nothing folded yet), then from the folded parts.
    await checkLatest();
    await t.settle();
    expect(await t.store.seriesDays.countDocuments({ metric: 'legacy', f: { $exists: true } })).toBe(3);
    await checkLatest();
  });

  it('a reading recorded into a version-1 document counts; its day keeps no first, last or percentile', async () => {
    const response = await t.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings: [toInput(late)] });
    expect(response.data?.recordReadings.recorded).toBe(1);
    const day = { metric: 'legacy', 'tags.host': 'a', date: new Date(D1 + DAY) };
    const v1 = v1Document(
      '',
      'a',
      old.filter((r) => r.host === 'a'),
    ).fields.temp;
    const readings = [...recorded, ...old, late];
    const answers = async () => {
      expect(await checkLegacy('DAY', D1, D1 + 5 * DAY, readings)).toEqual({ firstLastNull: 2, p50Null: 2, p50: 3 });
      // The new reading's hour holds only it, in a part of version 2 with a sketch: its
      // first, last and p50 are known. The version-1 document's hours are not.
      expect(await checkLegacy('HOUR', D1 + DAY, D1 + 2 * DAY, readings)).toEqual({ firstLastNull: 2, p50Null: 2, p50: 1 });
      const latest = await t.graphql<{ series: SeriesOut[] }>(LATEST, {
        metric: 'legacy',
        where: [{ key: 'host', in: ['a'] }],
        n: 50,
        field: 'temp',
      });
      expect(latest.data!.series[0]!.latest.map((r) => Date.parse(r.time))).toEqual(
        recorded
          .filter((r) => r.time >= D1 + 2 * DAY)
          .map((r) => r.time)
          .sort((x, y) => y - x),
      );
    };

    // Before the fold: the reading is in the log's tail; the version-1 document is as it was.
    const before = await t.store.seriesDays.find(day).toArray();
    expect(before.map((doc) => [doc.v, doc.fields.temp?.n, doc.fields.temp?.sum])).toEqual([[undefined, 3, v1.sum.value]]);
    await answers();

    // After it: the version-1 document is still as it was, without v, and the reading is in a
    // version-2 part of its own; the day's parts add up to its 4 readings.
    await t.settle();
    const parts = await t.store.seriesDays.find(day).sort({ f: 1 }).toArray();
    expect(parts.map((doc) => [doc.v, doc.fields.temp?.n, doc.fields.temp?.sum])).toEqual([
      [undefined, 3, v1.sum.value],
      [2, 1, late.value],
    ]);
    expect(parts[0]).toEqual(before[0]);
    expect(parts.reduce((n, doc) => n + (doc.fields.temp?.n ?? 0), 0)).toBe(4);
    await answers();
  });
});
