/**
 * Buckets in time zones on the test server, on real data across the 2001-04-01 US
 * daylight-saving change (the bucket-start expression alone: zone-starts.test.ts): the
 * flights of 2001-03-24 to 2001-04-09 (UTC) from LAS, JFK and SJC in flights-3m (about
 * 12,000, read from the two row groups that hold them), recorded through the storage
 * layer, all but the last batch folded (answers add folded documents and the log's
 * tail); DAY, WEEK, MONTH and HOUR buckets in New York, Los Angeles, Kolkata and
 * Kathmandu, run through `aggregateBuckets` and shaped, equal an independent computation
 * (plain loops over `Intl.DateTimeFormat` fields, `test/helpers/zoned-reference.ts`):
 * every bucket's span, local start, count, sum, min and max exactly; also filtered and
 * grouped.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { bucketsPipeline, type BucketQuery, type BucketRow } from '../../src/query/buckets-pipeline.ts';
import { granularity, type GranularityName } from '../../src/query/granularity.ts';
import { shapeBucketGroups, type BucketGroup } from '../../src/query/shape.ts';
import { parseLocalTime } from '../../src/query/zone.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { foldAll } from '../../src/storage/fold.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { readFlightsWindow, type WindowFlight } from '../helpers/flights-window.ts';
import { closeTo, referenceStats } from '../helpers/reference.ts';
import { referenceBuckets, referenceKey, type ZonedGranularity } from '../helpers/zoned-reference.ts';
import { testMongoUri } from '../helpers/db.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';

let store: Store;
let flights: WindowFlight[] = [];
const ORIGINS = ['LAS', 'JFK', 'SJC'];
const DATA_FROM = Date.parse('2001-03-24T00:00:00Z');
const DATA_TO = Date.parse('2001-04-09T12:00:00Z');

beforeAll(async () => {
  // Answers are what this file checks: no waiting for the journal, and only the basic
  // statistics to write (first/last, percentiles and latest readings: statistics.test.ts).
  store = await openStore(testMongoUri(), `test_zones_${randomBytes(4).toString('hex')}`, {
    defaultStatistics: { sketchLevels: [], sketchFields: null, latestReadings: 0 },
    writeConcern: { w: 1, journal: false },
  });
  flights = await readFlightsWindow(DATA_FROM, DATA_TO, ORIGINS);
  for (let i = 0; i < flights.length; i += 1000) {
    const inputs = flights.slice(i, i + 1000).map((f) => ({
      metric: 'flights',
      tags: [
        { key: 'origin', value: f.origin },
        { key: 'destination', value: f.destination },
      ],
      time: new Date(f.time),
      fields: [
        { name: 'delay', value: f.delay },
        { name: 'distance', value: f.distance },
      ],
    }));
    // Everything recorded so far is folded; the last batch stays in the log's tail.
    if (i + 1000 >= flights.length) expect(await foldAll(store, store.holder)).toBe(i);
    const readings = validateReadings(inputs, { maxBatchSize: 1000, receivedAt: Date.now() });
    const outcome = await recordBatch(store, readings, { receivedAt: Date.now() });
    expect(outcome.recorded).toBe(inputs.length);
  }
}, 900_000);

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.client.close();
});

type Field = 'delay' | 'distance';

/** The reference buckets of the flights passing `keep` over `[from, to)`, with their values. */
function expected(
  selected: readonly WindowFlight[],
  field: Field,
  zone: string,
  name: ZonedGranularity,
  from: number,
  to: number,
): { start: number; end: number; partial: boolean; localStart: string; values: number[] }[] {
  const buckets = referenceBuckets(from, to, zone, name).map((bucket) => ({ ...bucket, values: [] as number[] }));
  const byKey = new Map(buckets.map((bucket) => [bucket.key, bucket]));
  for (const flight of selected) {
    if (flight.time < from || flight.time >= to) continue;
    byKey.get(referenceKey(flight.time, zone, name))!.values.push(flight[field]);
  }
  return buckets;
}

function expectSame(actual: BucketGroup['buckets'], reference: ReturnType<typeof expected>, label: string) {
  expect(
    actual.map((b) => [b.start.toISOString(), b.end.toISOString(), b.partial, b.localStart]),
    label,
  ).toEqual(reference.map((b) => [new Date(b.start).toISOString(), new Date(b.end).toISOString(), b.partial, b.localStart]));
  actual.forEach((bucket, i) => {
    const ref = referenceStats(reference[i]!.values);
    expect([bucket.count, bucket.sum, bucket.min, bucket.max], `${label} ${bucket.localStart}`).toEqual([
      ref.count,
      ref.sum,
      ref.min,
      ref.max,
    ]);
    expect(closeTo(bucket.avg, ref.avg), `${label} avg`).toBe(true);
    expect(closeTo(bucket.stddev, ref.stddev), `${label} stddev`).toBe(true);
  });
}

/** Runs a zoned bucket query through the storage layer and shapes it as the API does. */
async function run(
  zone: string,
  name: GranularityName,
  from: number,
  to: number,
  field: Field,
  options: { where?: { key: string; in: string[] }[]; groupBy?: string[]; fill?: 'NULL' | 'NONE' } = {},
): Promise<BucketGroup[]> {
  const g = granularity(name);
  const groupBy = options.groupBy ?? [];
  const query: BucketQuery = {
    scope: { metric: 'flights', where: options.where ?? [] },
    fields: [field],
    from,
    to,
    granularity: g,
    grouping: groupBy.length > 0 ? { by: 'tags', keys: groupBy } : { by: 'none' },
    timeZone: zone,
  };
  const rows = await aggregateBuckets<BucketRow>(store, bucketsPipeline(query));
  return shapeBucketGroups(rows, { from, to, cut: g.cut, fill: options.fill ?? 'NULL', groupBy, timeZone: zone });
}

const ZONES = ['America/New_York', 'America/Los_Angeles', 'Asia/Kolkata', 'Asia/Kathmandu'];
/** [granularity, from, to] in local time of each zone, inside the recorded data. */
const CASES: [GranularityName, string, string][] = [
  ['DAY', '2001-03-25', '2001-04-08'],
  ['DAY', '2001-03-26T07:13', '2001-04-05T15:47'],
  ['WEEK', '2001-03-25', '2001-04-08'],
  ['MONTH', '2001-03-25', '2001-04-08'],
  ['HOUR', '2001-03-31T18:00', '2001-04-01T12:00'],
];

describe('zoned buckets of real flights across 2001-04-01 equal an independent computation', () => {
  it('recorded the window', () => {
    expect(flights.length).toBeGreaterThan(10_000);
    expect(new Set(flights.map((f) => f.origin))).toEqual(new Set(ORIGINS));
  });

  for (const zone of ZONES) {
    it.each(CASES)(`${zone}: %s over [%s, %s)`, async (name, fromText, toText) => {
      const from = parseLocalTime(fromText, zone);
      const to = parseLocalTime(toText, zone);
      const groups = await run(zone, name, from, to, 'delay');
      expect(groups).toHaveLength(1);
      expectSame(groups[0]!.buckets, expected(flights, 'delay', zone, name, from, to), `${zone} ${name}`);
    });
  }

  it.each(ZONES)('%s: DAY and HOUR filtered to two origins and one destination set', async (zone) => {
    const where = [
      { key: 'origin', in: ['LAS', 'SJC'] },
      { key: 'destination', in: ['LAX', 'SEA', 'PHX', 'ORD', 'DEN'] },
    ];
    const selected = flights.filter((f) => where[0]!.in.includes(f.origin) && where[1]!.in.includes(f.destination));
    expect(selected.length).toBeGreaterThan(500);
    for (const [name, fromText, toText] of [
      ['DAY', '2001-03-25', '2001-04-08'],
      ['HOUR', '2001-03-31T20:00', '2001-04-01T09:00'],
    ] as const) {
      const from = parseLocalTime(fromText, zone);
      const to = parseLocalTime(toText, zone);
      const groups = await run(zone, name, from, to, 'distance', { where });
      expect(groups).toHaveLength(1);
      expectSame(groups[0]!.buckets, expected(selected, 'distance', zone, name, from, to), `${zone} ${name} filtered`);
    }
  });

  it.each([
    ['America/New_York', 'MONTH', '1990-01-01', '2010-01-01'],
    ['Asia/Kathmandu', 'WEEK', '1999-01-04', '2004-01-05'],
  ] as const)('%s: %s over [%s, %s), beyond 128 plans (keys computed per document), fill NONE', async (zone, name, fromText, toText) => {
    const from = parseLocalTime(fromText, zone);
    const to = parseLocalTime(toText, zone);
    const [group] = await run(zone, name, from, to, 'delay', { fill: 'NONE' });
    // Every flight lies inside the range: the buckets holding the recorded days, none partial.
    const reference = expected(flights, 'delay', zone, name, DATA_FROM, DATA_TO).filter((b) => b.values.length > 0);
    expect(group!.buckets.map((b) => [b.start.toISOString(), b.end.toISOString(), b.localStart, b.partial])).toEqual(
      reference.map((b) => [new Date(b.start).toISOString(), new Date(b.end).toISOString(), b.localStart, false]),
    );
    group!.buckets.forEach((bucket, i) => {
      const ref = referenceStats(reference[i]!.values);
      expect([bucket.count, bucket.sum, bucket.min, bucket.max]).toEqual([ref.count, ref.sum, ref.min, ref.max]);
    });
  });

  it.each(ZONES)('%s: MONTH and DAY grouped by origin, fill NONE', async (zone) => {
    for (const [name, fromText, toText] of [
      ['MONTH', '2001-03-24T12:00', '2001-04-09'],
      ['DAY', '2001-03-30', '2001-04-03'],
    ] as const) {
      const from = parseLocalTime(fromText, zone);
      const to = parseLocalTime(toText, zone);
      const groups = await run(zone, name, from, to, 'delay', { groupBy: ['origin'], fill: 'NONE' });
      expect(groups.map((group) => group.tags)).toEqual([...ORIGINS].sort().map((origin) => [{ key: 'origin', value: origin }]));
      for (const group of groups) {
        const origin = group.tags[0]!.value;
        const reference = expected(
          flights.filter((f) => f.origin === origin),
          'delay',
          zone,
          name,
          from,
          to,
        ).filter((b) => b.values.length > 0);
        expectSame(group.buckets, reference, `${zone} ${name} ${origin}`);
      }
    }
  });
});
