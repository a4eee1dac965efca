/**
 * Correctness on real data: every other flight of flights-20k (10,000 flights over the
 * same three months, every route and airport of the file) is recorded through the
 * GraphQL mutation, then buckets and aggregates at every granularity are compared with a
 * plain-JS reduction of the same flights (count, sum, min and max exactly; avg and
 * standard deviations to 1e-9 relative). Half the file keeps the run's share of the
 * single test database in proportion. The first 9,000 are folded before the queries and
 * the last 1,000 stay in the log's tail, as on a server whose folder runs behind the
 * writers: every answer adds folded documents and tail readings of the same buckets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import {
  closeTo,
  flightInputs,
  loadFlights20k,
  referenceStart,
  referenceStats,
  type GranularityName,
  type ReferenceStats,
  type RawFlight,
} from '../helpers/reference.ts';

let t: TestApp;
const flights = loadFlights20k().filter((_, index) => index % 2 === 0);
const MINUTE = 60_000;

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const BUCKETS = `query($metric: String!, $field: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!], $fill: Fill) {
  buckets(metric: $metric, field: $field, granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, fill: $fill) {
    tags { key value }
    buckets { start end count sum min max avg stddev sampleStddev }
  }
}`;
const AGGREGATE = `query($field: String!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!]) {
  aggregate(metric: "flights", field: $field, from: $from, to: $to, where: $where, groupBy: $groupBy) {
    tags { key value } count sum min max avg stddev sampleStddev
  }
}`;

/** A bucket as the API returns it: its start and end, and the statistics a reference computes. */
type BucketOut = { start: string; end: string } & ReferenceStats;

beforeAll(async () => {
  // 10,000 flights to load: without waiting for the journal (answers are what is tested here).
  t = await openTestApp('flights', { journal: false });
  // The basic statistics are what this file checks (first/last, percentiles and latest
  // readings are checked in statistics.test.ts): no sketches or latest readings to write.
  const bare = await t.graphql(`mutation { setMetricStatistics(metric: "flights", sketchLevels: [], latestReadings: 0) { name } }`);
  expect(bare.errors).toBeUndefined();
  const started = performance.now();
  for (let i = 0; i < flights.length; i += 1000) {
    // Everything recorded so far is folded; the last batch stays in the tail.
    if (i === flights.length - 1000) expect(await t.settle()).toBe(i);
    const readings = flightInputs(flights.slice(i, i + 1000));
    const response = await t.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings });
    expect(response.errors).toBeUndefined();
    expect(response.data?.recordReadings.recorded).toBe(readings.length);
  }
  console.log(`${flights.length} flights recorded in ${Math.round(performance.now() - started)} ms`);
}, 600_000);
afterAll(async () => t?.close());

type Field = 'delay' | 'distance';

/** Reference buckets: every bucket of the range (fill NULL), from a plain loop over the flights. */
function referenceBuckets(
  selected: readonly RawFlight[],
  field: Field,
  granularity: GranularityName,
  from: number,
  to: number,
): Map<number, number[]> {
  const lo = Math.floor(from / MINUTE) * MINUTE;
  const hi = Math.floor(to / MINUTE) * MINUTE;
  const buckets = new Map<number, number[]>();
  const step = ['MONTH', 'QUARTER', 'YEAR', 'WEEK', 'DAY'].includes(granularity) ? 3_600_000 : MINUTE;
  for (let ms = lo; ms < hi; ms += step) {
    const start = referenceStart(ms, granularity);
    if (!buckets.has(start)) buckets.set(start, []);
  }
  for (const flight of selected) {
    if (flight.time >= lo && flight.time < hi) buckets.get(referenceStart(flight.time, granularity))!.push(flight[field]);
  }
  return buckets;
}

function expectBuckets(actual: BucketOut[], expected: Map<number, number[]>) {
  expect(actual.map((b) => Date.parse(b.start))).toEqual([...expected.keys()].sort((a, b) => a - b));
  for (const bucket of actual) {
    const ref = referenceStats(expected.get(Date.parse(bucket.start))!);
    expect([bucket.count, bucket.sum, bucket.min, bucket.max]).toEqual([ref.count, ref.sum, ref.min, ref.max]);
    expect(closeTo(bucket.avg, ref.avg), `avg ${bucket.avg} vs ${ref.avg}`).toBe(true);
    expect(closeTo(bucket.stddev, ref.stddev), `stddev ${bucket.stddev} vs ${ref.stddev}`).toBe(true);
    expect(closeTo(bucket.sampleStddev, ref.sampleStddev), `sampleStddev`).toBe(true);
  }
}

const AIRPORTS = ['LAS', 'ORD', 'SFO', 'BWI'];

/** [granularity, from, to]: aligned and ragged ranges sized to stay within the bucket limit. */
const CASES: [GranularityName, string, string][] = [
  ['MINUTE', '2001-01-12T00:00:00Z', '2001-01-13T00:00:00Z'],
  ['MINUTE', '2001-02-03T05:17:00Z', '2001-02-04T09:41:30Z'],
  ['FIVE_MINUTES', '2001-01-20T03:03:00Z', '2001-01-23T00:00:00Z'],
  ['FIFTEEN_MINUTES', '2001-03-01T00:00:00Z', '2001-03-08T07:31:00Z'],
  ['HOUR', '2001-01-01T00:00:00Z', '2001-01-15T00:00:00Z'],
  ['HOUR', '2001-02-10T13:29:00Z', '2001-02-20T02:11:00Z'],
  ['SIX_HOURS', '2001-01-05T01:00:00Z', '2001-02-05T23:59:00Z'],
  ['DAY', '2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z'],
  ['DAY', '2001-01-14T17:45:00Z', '2001-03-03T06:06:00Z'],
  ['WEEK', '2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z'],
  ['MONTH', '2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z'],
  ['MONTH', '2001-01-10T08:08:00Z', '2001-03-21T21:21:00Z'],
  ['QUARTER', '2000-12-01T00:00:00Z', '2001-04-01T00:00:00Z'],
  ['YEAR', '2000-06-01T00:00:00Z', '2001-03-15T12:00:00Z'],
];

describe('buckets on flights-20k equal a plain-JS reduction', () => {
  it.each(CASES)('%s over [%s, %s) for single airports', async (granularity, fromIso, toIso) => {
    const from = Date.parse(fromIso);
    const to = Date.parse(toIso);
    for (const [index, airport] of AIRPORTS.entries()) {
      const field: Field = index % 2 === 0 ? 'delay' : 'distance';
      const response = await t.graphql<{ buckets: { tags: unknown[]; buckets: BucketOut[] }[] }>(BUCKETS, {
        metric: 'flights',
        field,
        granularity,
        from: fromIso,
        to: toIso,
        where: [{ key: 'origin', in: [airport] }],
      });
      expect(response.errors).toBeUndefined();
      const groups = response.data!.buckets;
      expect(groups).toHaveLength(1);
      expectBuckets(
        groups[0]!.buckets,
        referenceBuckets(
          flights.filter((f) => f.origin === airport),
          field,
          granularity,
          from,
          to,
        ),
      );
    }
  });

  it.each([['DAY'], ['MONTH'], ['HOUR']] as [GranularityName][])(
    '%s grouped by origin over all airports, fill NONE',
    async (granularity) => {
      const fromIso = '2001-01-03T07:00:00Z';
      const toIso = granularity === 'HOUR' ? '2001-01-06T00:00:00Z' : '2001-03-30T00:00:00Z';
      const response = await t.graphql<{ buckets: { tags: { key: string; value: string }[]; buckets: BucketOut[] }[] }>(BUCKETS, {
        metric: 'flights',
        field: 'delay',
        granularity,
        from: fromIso,
        to: toIso,
        groupBy: ['origin'],
        fill: 'NONE',
      });
      expect(response.errors).toBeUndefined();
      const groups = response.data!.buckets;
      const from = Date.parse(fromIso);
      const to = Date.parse(toIso);
      const origins = [...new Set(flights.filter((f) => f.time >= from && f.time < to).map((f) => f.origin))].sort();
      expect(groups.map((g) => g.tags)).toEqual(origins.map((origin) => [{ key: 'origin', value: origin }]));
      for (const group of groups) {
        const reference = referenceBuckets(
          flights.filter((f) => f.origin === group.tags[0]!.value),
          'delay',
          granularity,
          from,
          to,
        );
        for (const [start, values] of reference) if (values.length === 0) reference.delete(start);
        expectBuckets(group.buckets, reference);
      }
    },
  );

  it('several airports at once with a filter on two tags', async () => {
    const response = await t.graphql<{ buckets: { buckets: BucketOut[] }[] }>(BUCKETS, {
      metric: 'flights',
      field: 'distance',
      granularity: 'WEEK',
      from: '2001-01-01T00:00:00Z',
      to: '2001-04-01T00:00:00Z',
      where: [
        { key: 'origin', in: ['LAS', 'PHX', 'LAX'] },
        { key: 'destination', in: ['SFO', 'OAK', 'SJC', 'SEA'] },
      ],
    });
    const selected = flights.filter(
      (f) => ['LAS', 'PHX', 'LAX'].includes(f.origin) && ['SFO', 'OAK', 'SJC', 'SEA'].includes(f.destination),
    );
    expect(selected.length).toBeGreaterThan(100);
    expectBuckets(
      response.data!.buckets[0]!.buckets,
      referenceBuckets(selected, 'distance', 'WEEK', Date.parse('2001-01-01T00:00:00Z'), Date.parse('2001-04-01T00:00:00Z')),
    );
  });
});

describe('aggregates on flights-20k equal a plain-JS reduction', () => {
  const ranges: [string, string][] = [
    ['2001-01-01T00:00:00Z', '2001-04-01T00:00:00Z'],
    ['2001-01-05T12:07:00Z', '2001-03-08T03:30:00Z'],
    ['2001-02-14T09:15:00Z', '2001-02-14T10:45:00Z'],
  ];

  it.each(ranges)('over [%s, %s), per airport and grouped by origin', async (fromIso, toIso) => {
    const from = Date.parse(fromIso);
    const to = Date.parse(toIso);
    const inRange = flights.filter((f) => f.time >= from && f.time < to);
    for (const field of ['delay', 'distance'] as const) {
      const grouped = await t.graphql<{ aggregate: ({ tags: { value: string }[] } & BucketOut)[] }>(AGGREGATE, {
        field,
        from: fromIso,
        to: toIso,
        groupBy: ['origin'],
      });
      expect(grouped.errors).toBeUndefined();
      const origins = [...new Set(inRange.map((f) => f.origin))].sort();
      expect(grouped.data!.aggregate.map((a) => a.tags[0]!.value)).toEqual(origins);
      for (const aggregate of grouped.data!.aggregate) {
        const ref = referenceStats(inRange.filter((f) => f.origin === aggregate.tags[0]!.value).map((f) => f[field]));
        expect([aggregate.count, aggregate.sum, aggregate.min, aggregate.max]).toEqual([ref.count, ref.sum, ref.min, ref.max]);
        expect(closeTo(aggregate.avg, ref.avg)).toBe(true);
        expect(closeTo(aggregate.stddev, ref.stddev)).toBe(true);
        expect(closeTo(aggregate.sampleStddev, ref.sampleStddev)).toBe(true);
      }
      const all = await t.graphql<{ aggregate: BucketOut[] }>(AGGREGATE, { field, from: fromIso, to: toIso });
      const ref = referenceStats(inRange.map((f) => f[field]));
      const [aggregate] = all.data!.aggregate;
      expect([aggregate!.count, aggregate!.sum, aggregate!.min, aggregate!.max]).toEqual([ref.count, ref.sum, ref.min, ref.max]);
      expect(closeTo(aggregate!.stddev, ref.stddev)).toBe(true);
    }
  });
});

describe('Series.buckets through DataLoader on flights-20k', () => {
  it('answers every series of an airport with one pipeline, each equal to the reference', async () => {
    const query = `{ series(metric: "flights", where: [{key: "origin", in: ["LAS"]}], limit: 1000) {
      tags { key value }
      buckets(field: "delay", granularity: MONTH, from: "2001-01-01T00:00:00Z", to: "2001-04-01T00:00:00Z") { start count sum min max avg stddev sampleStddev end }
    } }`;
    t.resetCommands();
    const response = await t.graphql<{ series: { tags: { key: string; value: string }[]; buckets: BucketOut[] }[] }>(query);
    expect(response.errors).toBeUndefined();
    expect(t.targets.filter((target) => target === 'aggregate series_days')).toHaveLength(1);
    const series = response.data!.series;
    const destinations = [...new Set(flights.filter((f) => f.origin === 'LAS').map((f) => f.destination))];
    expect(series).toHaveLength(destinations.length);
    for (const s of series) {
      const destination = s.tags.find((tag) => tag.key === 'destination')!.value;
      const selected = flights.filter((f) => f.origin === 'LAS' && f.destination === destination);
      expectBuckets(
        s.buckets,
        referenceBuckets(selected, 'delay', 'MONTH', Date.parse('2001-01-01T00:00:00Z'), Date.parse('2001-04-01T00:00:00Z')),
      );
    }
  });
});
