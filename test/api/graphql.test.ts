/**
 * End to end through `yoga.fetch`: record readings with the mutations, then read them
 * back with every query, including DataLoader batching (counted as aggregate commands
 * sent to the database).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await openTestApp('api');
});
afterAll(async () => t.close());

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded series documents } }`;
const reading = (time: string, host: string, usage: number, extra: Record<string, number> = {}) => ({
  metric: 'cpu',
  tags: [
    { key: 'host', value: host },
    { key: 'region', value: host === 'c' ? 'eu' : 'us' },
  ],
  time,
  fields: [{ name: 'usage', value: usage }, ...Object.entries(extra).map(([name, value]) => ({ name, value }))],
});

describe('record, then query', () => {
  beforeAll(async () => {
    const single = await t.graphql<{ recordReading: { recorded: number } }>(
      `mutation { recordReading(reading: {metric: "cpu", tags: [{key: "region", value: "us"}, {key: "host", value: "a"}], time: "2024-05-01T10:00:30+02:00", fields: [{name: "usage", value: 0}]}) { recorded } }`,
    );
    expect(single.data?.recordReading.recorded).toBe(1);
    // Out of order and late: the 08:00 reading of host a arrives after later ones.
    const batch = await t.graphql<{ recordReadings: { recorded: number; series: number; documents: number } }>(RECORD, {
      readings: [
        reading('2024-05-01T08:01:10Z', 'a', 10, { temperature: 40 }),
        reading('2024-05-01T08:01:50Z', 'a', 20),
        reading('2024-05-01T09:59:00Z', 'b', 30),
        reading('2024-05-02T00:00:00Z', 'b', 50),
        reading('2024-05-01T08:05:00Z', 'c', 70),
        reading('2024-04-30T23:59:59Z', 'a', 5),
      ],
    });
    expect(batch.errors).toBeUndefined();
    expect(batch.data?.recordReadings).toEqual({ recorded: 6, series: 3, documents: 5 });
  });

  it('lists metrics with fields, tag keys, series count and exact first/last reading times', async () => {
    const response = await t.graphql(`{ metrics { name fields tagKeys seriesCount firstReadingAt lastReadingAt } }`);
    expect(response.data).toEqual({
      metrics: [
        {
          name: 'cpu',
          fields: ['temperature', 'usage'],
          tagKeys: ['host', 'region'],
          seriesCount: 3,
          firstReadingAt: '2024-04-30T23:59:59.000Z',
          lastReadingAt: '2024-05-02T00:00:00.000Z',
        },
      ],
    });
  });

  it('finds tag values and series by tags, and a series by its key', async () => {
    const response = await t.graphql(`{
      all: tagValues(metric: "cpu", key: "host")
      us: tagValues(metric: "cpu", key: "host", where: [{key: "region", in: "us"}])
      none: tagValues(metric: "nope", key: "host")
      series(metric: "cpu", where: [{key: "host", in: ["a", "c"]}]) { id tags { key value } fields firstReadingAt lastReadingAt }
      seriesById(id: "cpu,host=b,region=us") { id metric fields }
      missing: seriesById(id: "cpu,host=zzz") { id }
    }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      all: ['a', 'b', 'c'],
      us: ['a', 'b'],
      none: [],
      series: [
        {
          id: 'cpu,host=a,region=us',
          tags: [
            { key: 'host', value: 'a' },
            { key: 'region', value: 'us' },
          ],
          fields: ['temperature', 'usage'],
          firstReadingAt: '2024-04-30T23:59:59.000Z',
          lastReadingAt: '2024-05-01T08:01:50.000Z',
        },
        {
          id: 'cpu,host=c,region=eu',
          tags: [
            { key: 'host', value: 'c' },
            { key: 'region', value: 'eu' },
          ],
          fields: ['usage'],
          firstReadingAt: '2024-05-01T08:05:00.000Z',
          lastReadingAt: '2024-05-01T08:05:00.000Z',
        },
      ],
      seriesById: { id: 'cpu,host=b,region=us', metric: 'cpu', fields: ['usage'] },
      missing: null,
    });
  });

  it('buckets by minute: empty buckets have count 0 and null statistics, a real 0 stays 0', async () => {
    const response = await t.graphql<{
      buckets: { tags: unknown[]; buckets: Record<string, unknown>[] }[];
      zero: { buckets: unknown[] }[];
    }>(`{
      buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "2024-05-01T08:00:00Z", to: "2024-05-01T08:03:00Z", where: [{key: "host", in: "a"}]) {
        tags { key } buckets { start end count sum min max avg stddev sampleStddev variance }
      }
      zero: buckets(metric: "cpu", field: "usage", granularity: HOUR, from: "2024-05-01T08:00:00Z", to: "2024-05-01T09:00:00Z", where: [{key: "host", in: "a"}]) {
        buckets { start count sum min max avg }
      }
    }`);
    expect(response.errors).toBeUndefined();
    const [group] = response.data!.buckets;
    expect(group!.tags).toEqual([]);
    expect(group!.buckets).toEqual([
      // The reading at 10:00:30+02:00 (08:00:30Z) has the value 0: a real zero, not an empty bucket.
      {
        start: '2024-05-01T08:00:00.000Z',
        end: '2024-05-01T08:01:00.000Z',
        count: 1,
        sum: 0,
        min: 0,
        max: 0,
        avg: 0,
        stddev: 0,
        sampleStddev: null,
        variance: 0,
      },
      {
        start: '2024-05-01T08:01:00.000Z',
        end: '2024-05-01T08:02:00.000Z',
        count: 2,
        sum: 30,
        min: 10,
        max: 20,
        avg: 15,
        stddev: 5,
        sampleStddev: Math.sqrt(50),
        variance: 25,
      },
      {
        start: '2024-05-01T08:02:00.000Z',
        end: '2024-05-01T08:03:00.000Z',
        count: 0,
        sum: null,
        min: null,
        max: null,
        avg: null,
        stddev: null,
        sampleStddev: null,
        variance: null,
      },
    ]);
    expect(response.data!.zero[0]!.buckets).toEqual([{ start: '2024-05-01T08:00:00.000Z', count: 3, sum: 30, min: 0, max: 20, avg: 10 }]);
  });

  it('groups by tag keys, fills or skips empty buckets, and aggregates per group', async () => {
    const response = await t.graphql(`{
      buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-04-30T00:00:00Z", to: "2024-05-03T00:00:00Z", groupBy: ["region"], fill: NONE) {
        tags { key value } buckets { start count sum }
      }
      aggregate(metric: "cpu", field: "usage", from: "2024-04-30T00:00:00Z", to: "2024-05-03T00:00:00Z", groupBy: ["host"]) {
        tags { key value } count sum min max from to
      }
    }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      buckets: [
        { tags: [{ key: 'region', value: 'eu' }], buckets: [{ start: '2024-05-01T00:00:00.000Z', count: 1, sum: 70 }] },
        {
          tags: [{ key: 'region', value: 'us' }],
          buckets: [
            { start: '2024-04-30T00:00:00.000Z', count: 1, sum: 5 },
            { start: '2024-05-01T00:00:00.000Z', count: 4, sum: 60 },
            { start: '2024-05-02T00:00:00.000Z', count: 1, sum: 50 },
          ],
        },
      ],
      aggregate: [
        {
          tags: [{ key: 'host', value: 'a' }],
          count: 4,
          sum: 35,
          min: 0,
          max: 20,
          from: '2024-04-30T00:00:00.000Z',
          to: '2024-05-03T00:00:00.000Z',
        },
        {
          tags: [{ key: 'host', value: 'b' }],
          count: 2,
          sum: 80,
          min: 30,
          max: 50,
          from: '2024-04-30T00:00:00.000Z',
          to: '2024-05-03T00:00:00.000Z',
        },
        {
          tags: [{ key: 'host', value: 'c' }],
          count: 1,
          sum: 70,
          min: 70,
          max: 70,
          from: '2024-04-30T00:00:00.000Z',
          to: '2024-05-03T00:00:00.000Z',
        },
      ],
    });
  });

  it('rounds from and to down to the whole minute and keeps adjacent ranges disjoint', async () => {
    const query = (from: string, to: string) =>
      t.graphql<{ aggregate: { count: number }[] }>(
        `query($from: Time!, $to: Time!) { aggregate(metric: "cpu", field: "usage", from: $from, to: $to) { count } }`,
        { from, to },
      );
    const whole = await query('2024-05-01T08:00:00Z', '2024-05-01T08:03:00Z');
    const left = await query('2024-05-01T08:00:00Z', '2024-05-01T08:01:40Z');
    const right = await query('2024-05-01T08:01:40Z', '2024-05-01T08:03:00Z');
    expect(whole.data!.aggregate[0]!.count).toBe(3);
    expect(left.data!.aggregate[0]!.count + right.data!.aggregate[0]!.count).toBe(3);
    expect(left.data!.aggregate[0]!.count).toBe(1);
  });

  it('gives empty results, not errors, for an unknown metric, field or tag value', async () => {
    const response = await t.graphql(`{
      a: buckets(metric: "nope", field: "usage", granularity: DAY, from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z") { tags { key } }
      b: buckets(metric: "cpu", field: "nope", granularity: DAY, from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z") { tags { key } }
      c: buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z", where: [{key: "host", in: "zzz"}]) { tags { key } }
      d: aggregate(metric: "cpu", field: "usage", from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z", where: [{key: "nokey", in: "x"}]) { count }
      e: series(metric: "nope") { id }
      f: metric(name: "nope") { name }
    }`);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ a: [], b: [], c: [], d: [], e: [], f: null });
  });
});

describe('DataLoader batching', () => {
  it('computes Series.buckets of every series of a list with one pipeline per distinct arguments', async () => {
    t.resetCommands();
    const response = await t.graphql<{
      series: {
        id: string;
        hourly: { count: number }[];
        daily: { count: number; sum: number | null }[];
        total: { count: number; sum: number | null; tags: unknown[] };
      }[];
    }>(`{
      series(metric: "cpu") {
        id
        hourly: buckets(field: "usage", granularity: HOUR, from: "2024-05-01T08:00:00Z", to: "2024-05-01T10:00:00Z") { count }
        daily: buckets(field: "usage", granularity: DAY, from: "2024-05-01T00:00:00Z", to: "2024-05-03T00:00:00Z", fill: NONE) { count sum }
        total: aggregate(field: "usage", from: "2024-04-01T00:00:00Z", to: "2024-06-01T00:00:00Z") { count sum tags { key value } }
      }
    }`);
    expect(response.errors).toBeUndefined();
    // One pipeline per field selection (hourly, daily, total), not per series.
    expect(t.targets.filter((target) => target === 'aggregate series_days')).toHaveLength(3);
    expect(response.data!.series.map((s) => [s.id, s.hourly.map((b) => b.count), s.daily, s.total.count, s.total.sum])).toEqual([
      ['cpu,host=a,region=us', [3, 0], [{ count: 3, sum: 30 }], 4, 35],
      [
        'cpu,host=b,region=us',
        [0, 1],
        [
          { count: 1, sum: 30 },
          { count: 1, sum: 50 },
        ],
        2,
        80,
      ],
      ['cpu,host=c,region=eu', [1, 0], [{ count: 1, sum: 70 }], 1, 70],
    ]);
    expect(response.data!.series[2]!.total.tags).toEqual([
      { key: 'host', value: 'c' },
      { key: 'region', value: 'eu' },
    ]);
  });

  it('answers several fields asked with the same arguments by one pipeline, each field on its own', async () => {
    t.resetCommands();
    const response = await t.graphql(`{
      usage: buckets(metric: "cpu", field: "usage", granularity: HOUR, from: "2024-05-01T08:00:00Z", to: "2024-05-01T10:00:00Z", fill: NONE) { buckets { start count sum } }
      temperature: buckets(metric: "cpu", field: "temperature", granularity: HOUR, from: "2024-05-01T08:00:00Z", to: "2024-05-01T10:00:00Z", fill: NONE) { buckets { start count sum } }
      nothing: buckets(metric: "cpu", field: "nope", granularity: HOUR, from: "2024-05-01T08:00:00Z", to: "2024-05-01T10:00:00Z") { buckets { count } }
      series(metric: "cpu", where: [{key: "host", in: "a"}]) {
        u: aggregate(field: "usage", from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z") { count sum }
        t: aggregate(field: "temperature", from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z") { count sum }
      }
    }`);
    expect(response.errors).toBeUndefined();
    expect(t.targets.filter((target) => target === 'aggregate series_days')).toHaveLength(2);
    expect(response.data).toEqual({
      usage: [
        {
          buckets: [
            { start: '2024-05-01T08:00:00.000Z', count: 4, sum: 100 },
            { start: '2024-05-01T09:00:00.000Z', count: 1, sum: 30 },
          ],
        },
      ],
      temperature: [{ buckets: [{ start: '2024-05-01T08:00:00.000Z', count: 1, sum: 40 }] }],
      nothing: [],
      series: [{ u: { count: 3, sum: 30 }, t: { count: 1, sum: 40 } }],
    });
  });

  it('a series without readings in the range gets empty buckets and a count-0 aggregate', async () => {
    const response = await t.graphql(`{
      seriesById(id: "cpu,host=c,region=eu") {
        buckets(field: "usage", granularity: DAY, from: "2024-06-01T00:00:00Z", to: "2024-06-03T00:00:00Z") { count sum }
        aggregate(field: "usage", from: "2024-06-01T00:00:00Z", to: "2024-06-03T00:00:00Z") { count sum avg }
      }
    }`);
    expect(response.data).toEqual({
      seriesById: {
        buckets: [
          { count: 0, sum: null },
          { count: 0, sum: null },
        ],
        aggregate: { count: 0, sum: null, avg: null },
      },
    });
  });
});

describe('readings without a time', () => {
  it('are recorded at the time the request arrived', async () => {
    const before = Date.now();
    const response = await t.graphql(`mutation { recordReading(reading: {metric: "now", fields: [{name: "x", value: 1}]}) { recorded } }`);
    const after = Date.now();
    expect(response.errors).toBeUndefined();
    const metric = await t.graphql<{ metric: { firstReadingAt: string } }>(`{ metric(name: "now") { firstReadingAt } }`);
    const time = Date.parse(metric.data!.metric.firstReadingAt);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });
});

describe('parts of a series-day', () => {
  it('answer exactly from the log, from a part and the log, and from the parts, each part holding the slots of its own readings only', async () => {
    // The slots of the parts are what this checks: no part in the raw form (`RAW_READINGS` 0).
    const rawReadings = t.store.rawReadings;
    t.store.rawReadings = 0;
    onTestFinished(() => {
      t.store.rawReadings = rawReadings;
    });
    // Two batches of host a on 2024-05-01, each folded on its own: two parts of the day, minute 10:20 in both.
    const batches: [string, number][][] = [
      [
        ['2024-05-01T10:20:30Z', 7],
        ['2024-05-01T10:19:05Z', -2],
        ['2024-05-01T10:21:59Z', 4],
        ['2024-05-01T10:21:00Z', 10],
        ['2024-05-01T13:00:00Z', 100],
      ],
      [
        ['2024-05-01T10:19:40Z', 3],
        ['2024-05-01T10:21:30Z', -6],
        ['2024-05-01T10:20:10Z', 1],
        ['2024-05-01T23:59:59Z', 50],
      ],
    ];
    const sent: [string, number][] = [];
    // Fold what earlier tests recorded, so each fold below takes this test's batches only.
    await t.settle();
    /** The buckets of `dense` by a plain loop over the readings sent so far. */
    const expected = (from: string, step: number, n: number) =>
      Array.from({ length: n }, (_, i) => {
        const start = Date.parse(from) + i * step;
        const values = sent.filter(([time]) => Date.parse(time) >= start && Date.parse(time) < start + step).map(([, value]) => value);
        return values.length === 0
          ? { count: 0, sum: null, min: null, max: null }
          : { count: values.length, sum: values.reduce((a, b) => a + b, 0), min: Math.min(...values), max: Math.max(...values) };
      });
    const answersExactly = async () => {
      const response = await t.graphql(`{
        minutes: buckets(metric: "dense", field: "v", granularity: MINUTE, from: "2024-05-01T10:18:00Z", to: "2024-05-01T10:23:00Z") { buckets { count sum min max } }
        day: buckets(metric: "dense", field: "v", granularity: DAY, from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z") { buckets { count sum min max } }
      }`);
      expect(response.errors).toBeUndefined();
      expect(response.data).toEqual({
        minutes: [{ buckets: expected('2024-05-01T10:18:00Z', 60_000, 5) }],
        day: [{ buckets: expected('2024-05-01T00:00:00Z', 86_400_000, 1) }],
      });
    };
    const record = (metric: string, batch: [string, number][]) =>
      t.graphql(RECORD, {
        readings: batch.map(([time, value]) => ({ metric, tags: [{ key: 'host', value: 'a' }], time, fields: [{ name: 'v', value }] })),
      });
    for (const batch of batches) {
      expect((await record('dense', batch)).data).toEqual({ recordReadings: { recorded: batch.length, series: 1, documents: 1 } });
      sent.push(...batch);
      // From the log alone (first batch), then from a folded part and the log (second batch)…
      await answersExactly();
      expect(await t.settle()).toBe(batch.length);
      // …then from the folded parts alone.
      await answersExactly();
    }
    const metrics = await t.graphql(`{ dense: metric(name: "dense") { fields } }`);
    expect(metrics.data).toEqual({ dense: { fields: ['v'] } });
    const parts = await t.store.seriesDays.find({ metric: 'dense' }).sort({ f: 1 }).toArray();
    expect(parts.map((part) => part.date)).toEqual([new Date('2024-05-01T00:00:00Z'), new Date('2024-05-01T00:00:00Z')]);
    // Each part holds the hour and minute slots of its own readings only.
    const slots = (part: (typeof parts)[number]) =>
      Object.fromEntries(Object.entries(part.hours).map(([hour, slot]) => [hour, Object.keys(slot.minutes ?? {}).sort()]));
    expect(slots(parts[0]!)).toEqual({ '10': ['19', '20', '21'], '13': ['0'] });
    expect(slots(parts[1]!)).toEqual({ '10': ['19', '20', '21'], '23': ['59'] });
    const reading = { t: new Date('2024-05-01T10:20:30Z'), v: 7 };
    expect(parts[0]!.hours['10']!.minutes?.['20']?.v).toEqual({ n: 1, sum: 7, min: 7, max: 7, sq: 49, first: reading, last: reading });
  });
});
