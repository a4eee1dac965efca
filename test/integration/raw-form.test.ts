/**
 * Series-day documents in the raw form (`SeriesDayDocument.r`: every reading kept as it came,
 * with the day totals, instead of hour and minute slots and sketches), read by every
 * query as the same documents in the slot form, through GraphQL against the test server.
 *
 * An eighth of flights-20k is recorded and folded, then another eighth (so many
 * series-days have two parts, one per fold). The answers of a set of queries (UTC
 * buckets from minutes to days, zoned days and months cut by local midnights, zoned
 * hours, aggregates grouped by origin; counts, sums, extremes, first and last readings,
 * percentiles; latest readings and latest values) are taken with the slot form, their
 * counts and sums checked against a plain loop over the flights. Then every part of at
 * most {@link RAW_MOST} readings is rewritten in the raw form by `rawFormDocument`, and
 * every answer must stay the same (sums and means to 1e-9 relative, everything else
 * exactly: the same sketch bins give the same percentiles). Then the raw parts are read
 * in Node: a compaction merges them with the slot-form parts, and a rollup is built from
 * them; the answers stay the same again. Last, a second database written with the raw
 * form on (`RAW_READINGS` {@link WRITTEN_MOST}): its folds and compactions write the raw
 * form themselves where a document holds that few readings, and it answers the same.
 *
 * No folder runs in the background (test/helpers/app.ts): folds happen where the test calls them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollupCollectionName } from '../../src/model/rollup.ts';
import { backfillRollup } from '../../src/storage/rollups.ts';
import { applyRetention, setRetention } from '../../src/storage/expire.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { closeTo, expectSameAnswer, flightInputs, loadFlights20k, type RawFlight } from '../helpers/reference.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { rawFormDocument } from '../../src/documents/encode.ts';
import { fullContentOf } from '../../src/documents/decode.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

/** Parts of at most this many readings are rewritten in the raw form. */
const RAW_MOST = 16;
/**
 * `RAW_READINGS` of the database written with the raw form on: low, so that it holds
 * documents of both forms (route-days of an eighth of the file hold a few flights),
 * which a compaction then merges.
 */
const WRITTEN_MOST = 1;

const all = loadFlights20k();
/** Two eighths of the file recorded, one fold each. */
const FIRST = all.filter((_, i) => i % 8 === 1);
const SECOND = all.filter((_, i) => i % 8 === 5);
const flights = [...FIRST, ...SECOND];

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const BUCKETS = `query($field: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!], $zone: String) {
  buckets(metric: "flights", field: $field, granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, timeZone: $zone, fill: NONE) {
    tags { key value }
    buckets { start count sum min max avg stddev first { time value } last { time value } p50 p90 q0: percentile(p: 0) }
  }
}`;
const AGGREGATE = `query($field: String!, $from: Time!, $to: Time!, $groupBy: [String!]) {
  aggregate(metric: "flights", field: $field, from: $from, to: $to, groupBy: $groupBy) {
    tags { key value } count sum min max avg first { time value } last { time value } p50 p99
  }
}`;
const SERIES = `query($where: [TagFilter!]) {
  series(metric: "flights", where: $where, limit: 20) {
    tags { key value } latest(n: 12) { time values { name value } } latestValue(field: "delay") { time value }
  }
}`;

/** A query of the set: its text, its variables, and the flights a plain loop checks its counts and sums on (none: not checked so). */
interface Case {
  name: string;
  query: string;
  variables: Record<string, unknown>;
  plain?: { select: (f: RawFlight) => boolean; field: 'delay' | 'distance' };
}

const MINUTE_AIRPORTS = ['ATL', 'ORD', 'DFW', 'LAX'];
const MONTH_AIRPORTS = ['LAS', 'SEA', 'BOS'];

const CASES: Case[] = [
  {
    name: 'HOUR buckets of one airport over a ragged range',
    query: BUCKETS,
    variables: {
      field: 'delay',
      granularity: 'HOUR',
      from: '2001-01-03T05:17:00Z',
      to: '2001-01-19T09:41:00Z',
      where: [{ key: 'origin', in: ['ORD'] }],
    },
    plain: {
      select: (f) => f.origin === 'ORD' && f.time >= Date.parse('2001-01-03T05:17:00Z') && f.time < Date.parse('2001-01-19T09:41:00Z'),
      field: 'delay',
    },
  },
  {
    // No percentiles: the metric sketches no minutes, so the slot form answers none there.
    name: 'MINUTE buckets of four airports over a day and a quarter',
    query: BUCKETS.replace(' p50 p90 q0: percentile(p: 0)', ''),
    variables: {
      field: 'distance',
      granularity: 'MINUTE',
      from: '2001-02-03T00:00:00Z',
      to: '2001-02-04T06:30:00Z',
      where: [{ key: 'origin', in: MINUTE_AIRPORTS }],
    },
    plain: {
      select: (f) =>
        MINUTE_AIRPORTS.includes(f.origin) && f.time >= Date.parse('2001-02-03T00:00:00Z') && f.time < Date.parse('2001-02-04T06:30:00Z'),
      field: 'distance',
    },
  },
  {
    name: 'FIFTEEN_MINUTES buckets grouped by origin over six hours',
    query: BUCKETS,
    variables: {
      field: 'delay',
      granularity: 'FIFTEEN_MINUTES',
      from: '2001-01-20T10:00:00Z',
      to: '2001-01-20T16:00:00Z',
      groupBy: ['origin'],
    },
  },
  {
    name: 'DAY buckets of whole UTC days grouped by origin',
    query: BUCKETS,
    variables: {
      field: 'delay',
      granularity: 'DAY',
      from: '2001-01-01T00:00:00Z',
      to: '2001-02-01T00:00:00Z',
      groupBy: ['origin'],
      where: [{ key: 'origin', in: ['ORD', 'DFW', 'SFO'] }],
    },
  },
  {
    name: 'DAY buckets in Asia/Kathmandu (+05:45), days cut by local midnight',
    query: BUCKETS,
    variables: {
      field: 'delay',
      granularity: 'DAY',
      from: '2001-01-05T00:00:00Z',
      to: '2001-02-27T00:00:00Z',
      zone: 'Asia/Kathmandu',
      where: [{ key: 'origin', in: ['DEN'] }],
    },
    plain: {
      select: (f) => f.origin === 'DEN' && f.time >= Date.parse('2001-01-05T00:00:00Z') && f.time < Date.parse('2001-02-27T00:00:00Z'),
      field: 'delay',
    },
  },
  {
    name: 'MONTH buckets in America/New_York of three airports',
    query: BUCKETS,
    variables: {
      field: 'distance',
      granularity: 'MONTH',
      from: '2001-01-01T00:00:00Z',
      to: '2001-04-01T00:00:00Z',
      zone: 'America/New_York',
      where: [{ key: 'origin', in: MONTH_AIRPORTS }],
    },
    plain: {
      select: (f) =>
        MONTH_AIRPORTS.includes(f.origin) && f.time >= Date.parse('2001-01-01T00:00:00Z') && f.time < Date.parse('2001-04-01T00:00:00Z'),
      field: 'distance',
    },
  },
  {
    name: 'HOUR buckets in Asia/Kolkata (+05:30), hours read from quarter hours',
    query: BUCKETS,
    variables: {
      field: 'delay',
      granularity: 'HOUR',
      from: '2001-03-01T00:00:00Z',
      to: '2001-03-04T00:00:00Z',
      zone: 'Asia/Kolkata',
      where: [{ key: 'origin', in: ['ATL', 'ORD', 'DFW'] }],
    },
  },
  {
    name: 'an aggregate grouped by origin over a ragged range',
    query: AGGREGATE,
    variables: { field: 'delay', from: '2001-01-10T13:13:00Z', to: '2001-01-17T02:02:00Z', groupBy: ['origin'] },
  },
  {
    name: 'latest readings and latest values of the series from LAS',
    query: SERIES,
    variables: { where: [{ key: 'origin', in: ['LAS'] }] },
  },
];

let t: TestApp;

async function record(rows: readonly RawFlight[], app: TestApp = t): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const readings = flightInputs(rows.slice(i, i + 1000));
    const answer = await app.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.recordReadings.recorded).toBe(readings.length);
  }
}

/** The answer of every case, in order. */
async function answers(app: TestApp = t): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const c of CASES) {
    const answer = await app.graphql(c.query, c.variables);
    expect(answer.errors, c.name).toBeUndefined();
    out.push(answer.data);
  }
  return out;
}

/** Rewrites every part in the slot form of at most {@link RAW_MOST} readings in the raw form; returns how many, and how many parts were in the slot form. */
async function rewriteRaw(): Promise<{ raw: number; parts: number }> {
  const docs = await t.store.seriesDays.find({ r: { $exists: false } }).toArray();
  const replacements = [];
  for (const doc of docs) {
    const form = rawFormDocument(fullContentOf(doc), RAW_MOST, doc.v);
    if (form === null) continue;
    const { hours: _hours, q: _q, recent: _recent, ...kept } = doc as SeriesDayDocument & Record<string, unknown>;
    replacements.push({ replaceOne: { filter: { _id: doc._id }, replacement: { ...kept, ...form } as unknown as SeriesDayDocument } });
  }
  if (replacements.length > 0)
    expect((await t.store.seriesDays.bulkWrite(replacements, { ordered: false })).modifiedCount).toBe(replacements.length);
  return { raw: replacements.length, parts: docs.length };
}

let slotAnswers: unknown[];

beforeAll(async () => {
  t = await openTestApp('raw-form', { journal: false, rawReadings: 0 });
  await record(FIRST);
  expect(await t.settle()).toBe(FIRST.length);
  await record(SECOND);
  expect(await t.settle()).toBe(SECOND.length);
  slotAnswers = await answers();
}, 600_000);
afterAll(async () => t?.close());

describe('documents in the raw form', { timeout: 600_000 }, () => {
  it('the slot form answers the counts and sums of a plain loop', () => {
    CASES.forEach((c, i) => {
      if (c.plain === undefined) return;
      const selected = flights.filter(c.plain.select);
      const groups = (slotAnswers[i] as { buckets: { buckets: { count: number; sum: number }[] }[] }).buckets;
      const buckets = groups.flatMap((group) => group.buckets);
      expect(
        buckets.reduce((sum, b) => sum + b.count, 0),
        c.name,
      ).toBe(selected.length);
      expect(
        buckets.reduce((sum, b) => sum + b.sum, 0),
        c.name,
      ).toBe(selected.reduce((sum, f) => sum + f[c.plain!.field], 0));
      expect(selected.length, c.name).toBeGreaterThan(10);
    });
  });

  it('answer every query as the same parts in the slot form, then compacted, and into a rollup', async () => {
    const { raw, parts } = await rewriteRaw();
    // Most route-days of an eighth of the file hold a few flights.
    expect(raw).toBeGreaterThan(parts * 0.9);
    const stored = await t.store.seriesDays.findOne({ r: { $exists: true } });
    expect(stored?.hours).toBeUndefined();
    expect(stored?.q).toBeUndefined();
    expect(stored?.r?.length).toBe(stored?.readings);

    const rawAnswers = await answers();
    CASES.forEach((c, i) => {
      expectSameAnswer(rawAnswers[i], slotAnswers[i], c.name);
    });

    // A compaction reads the raw parts in Node and merges them with the slot-form parts.
    const compacted = await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 });
    expect(compacted.days).toBeGreaterThan(0);
    expect(compacted.merged).toBeGreaterThan(compacted.documents);
    const afterCompaction = await answers();
    CASES.forEach((c, i) => {
      expectSameAnswer(afterCompaction[i], slotAnswers[i], `${c.name}, compacted`);
    });

    // Raw again, then a rollup built from the raw parts answers the daily buckets.
    expect((await rewriteRaw()).raw).toBeGreaterThan(0);
    const defined = await t.graphql(`mutation { defineRollup(metric: "flights", name: "by_origin", tagKeys: ["origin"]) { state } }`);
    expect(defined.errors).toBeUndefined();
    await backfillRollup(t.store, 'flights', 'by_origin', { graceMs: 0 });
    const daily = CASES.findIndex((c) => c.name.startsWith('DAY buckets of whole UTC days'));
    const fromRollup = await t.graphql(CASES[daily]!.query, CASES[daily]!.variables);
    expect(fromRollup.errors).toBeUndefined();
    expect((fromRollup as { extensions?: { reads?: { rollup: string | null }[] } }).extensions?.reads?.[0]?.rollup).toBe('by_origin');
    expectSameAnswer(fromRollup.data, slotAnswers[daily], 'daily buckets from the rollup');
  });
});

describe('folds and compactions writing the raw form', { timeout: 600_000 }, () => {
  let written: TestApp;
  afterAll(async () => written?.close());

  it('write parts and documents of at most RAW_READINGS readings in the raw form, which answer as the slot form', async () => {
    written = await openTestApp('raw-form-written', { journal: false, rawReadings: WRITTEN_MOST });
    await record(FIRST, written);
    expect(await written.settle()).toBe(FIRST.length);
    await record(SECOND, written);
    expect(await written.settle()).toBe(SECOND.length);
    const parts = await written.store.seriesDays.find({}, { projection: { readings: 1, r: 1, hours: 1 } }).toArray();
    for (const part of parts) {
      // Raw exactly when a part holds at most WRITTEN_MOST readings.
      expect(Array.isArray(part.r), `a part of ${part.readings} readings`).toBe((part.readings ?? 0) <= WRITTEN_MOST);
      expect(part.hours === undefined).toBe(Array.isArray(part.r));
    }
    expect(parts.some((part) => !Array.isArray(part.r))).toBe(true);
    expect(parts.some((part) => Array.isArray(part.r))).toBe(true);
    const folded = await answers(written);
    CASES.forEach((c, i) => {
      expectSameAnswer(folded[i], slotAnswers[i], `${c.name}, written raw`);
    });

    // Every day (a compaction takes a bounded number of days), then once more: deletes the parts the last one replaced.
    while ((await compactOnce(written.store, written.store.holder, { afterFolds: 1, graceMs: 0 })).compaction !== null);
    await compactOnce(written.store, written.store.holder, { afterFolds: 1, graceMs: 0 });
    const documents = await written.store.seriesDays.find({}, { projection: { series: 1, date: 1, readings: 1, r: 1 } }).toArray();
    const perSeriesDay = new Map<string, number>();
    for (const f of flights) {
      const key = `${f.origin}>${f.destination}:${Math.floor(f.time / 86_400_000)}`;
      perSeriesDay.set(key, (perSeriesDay.get(key) ?? 0) + 1);
    }
    // One document per series-day, as many as a plain loop finds, each raw exactly when it holds at most WRITTEN_MOST readings.
    expect(documents).toHaveLength(perSeriesDay.size);
    for (const doc of documents) expect(Array.isArray(doc.r)).toBe((doc.readings ?? 0) <= WRITTEN_MOST);
    const rawCount = documents.filter((doc) => Array.isArray(doc.r)).length;
    expect(rawCount).toBe([...perSeriesDay.values()].filter((n) => n <= WRITTEN_MOST).length);
    expect(rawCount).toBeGreaterThan(0);
    expect(rawCount).toBeLessThan(documents.length);
    const compacted = await answers(written);
    CASES.forEach((c, i) => {
      expectSameAnswer(compacted[i], slotAnswers[i], `${c.name}, written raw and compacted`);
    });
  });

  it('answer large values exactly: raw values are doubles, so squares do not become 64-bit integers', async () => {
    // One reading a fold: each a raw part. Squares of 2e9 (an int32) pass 2^63 when added up as integers.
    const D = Date.UTC(2024, 4, 1);
    const sent = [
      { time: D + 10 * 3_600_000 + 60_000, value: 2_000_000_000 },
      { time: D + 10 * 3_600_000 + 120_000, value: 2_000_000_000 },
      { time: D + 10 * 3_600_000 + 180_000, value: -1_500_000_000 },
      { time: D + 86_400_000 + 12 * 3_600_000, value: 2_000_000_000 },
      { time: D + 86_400_000 + 13 * 3_600_000, value: 1_000_000_000 },
    ];
    for (const reading of sent) {
      const answer = await written.graphql(RECORD, {
        readings: [
          {
            metric: 'big',
            tags: [{ key: 'host', value: 'a' }],
            time: new Date(reading.time).toISOString(),
            fields: [{ name: 'v', value: reading.value }],
          },
        ],
      });
      expect(answer.errors).toBeUndefined();
      expect(await written.settle()).toBe(1);
    }
    const parts = await written.store.seriesDays.find({ metric: 'big' }).toArray();
    expect(parts).toHaveLength(5);
    expect(parts.every((part) => Array.isArray(part.r))).toBe(true);
    const stats = (values: number[]) => {
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
      return { count: values.length, sum: values.reduce((a, b) => a + b, 0), stddev: Math.sqrt(variance) };
    };
    const hourly = await written.graphql<{ buckets: { buckets: { count: number; sum: number; stddev: number }[] }[] }>(
      `{ buckets(metric: "big", field: "v", granularity: HOUR, from: "2024-05-01T10:00:00Z", to: "2024-05-01T11:00:00Z") { buckets { count sum stddev } } }`,
    );
    expect(hourly.errors).toBeUndefined();
    const hour = hourly.data!.buckets[0]!.buckets[0]!;
    const expectedHour = stats(sent.slice(0, 3).map((r) => r.value));
    expect([hour.count, hour.sum]).toEqual([expectedHour.count, expectedHour.sum]);
    expect(closeTo(hour.stddev, expectedHour.stddev), `${hour.stddev} vs ${expectedHour.stddev}`).toBe(true);
    // A ragged range: its first day from the documents, its second whole (from a day summary), merged.
    const total = await written.graphql<{ aggregate: { count: number; sum: number; stddev: number }[] }>(
      `{ aggregate(metric: "big", field: "v", from: "2024-05-01T06:00:00Z", to: "2024-05-03T00:00:00Z") { count sum stddev } }`,
    );
    expect(total.errors).toBeUndefined();
    const all = total.data!.aggregate[0]!;
    const expectedAll = stats(sent.map((r) => r.value));
    expect([all.count, all.sum]).toEqual([expectedAll.count, expectedAll.sum]);
    expect(closeTo(all.stddev, expectedAll.stddev), `${all.stddev} vs ${expectedAll.stddev}`).toBe(true);
  });

  it('build no hour slots into a rollup from raw documents of days past the hour horizon', async () => {
    // Hours and minutes kept 30 days as of 2001-03-01: days before 2001-01-30 lose them.
    const now = Date.parse('2001-03-01T00:00:00Z');
    const horizon = new Date(now - 30 * 86_400_000);
    await setRetention(written.store, 'flights', { minutes: 30, hours: 30, days: null }, new Date(now));
    await applyRetention(written.store, now);
    const before = { metric: 'flights', date: { $lt: horizon } };
    expect(await written.store.seriesDays.countDocuments({ ...before, r: { $exists: true } })).toBeGreaterThan(0);
    expect(await written.store.seriesDays.countDocuments({ ...before, hours: { $exists: true } })).toBe(0);
    const defined = await written.graphql(`mutation { defineRollup(metric: "flights", name: "by_origin", tagKeys: ["origin"]) { state } }`);
    expect(defined.errors).toBeUndefined();
    await backfillRollup(written.store, 'flights', 'by_origin', { graceMs: 0 });
    const rollupDocs = written.store.db.collection<SeriesDayDocument>(rollupCollectionName('flights', ['origin']));
    // Past the horizon the rollup holds day totals only, as its sources in the slot form do; after it, hours too.
    const withHours = async (date: Record<string, Date>) => {
      const docs = await rollupDocs.find({ date }, { projection: { hours: 1 } }).toArray();
      return { docs: docs.length, withHours: docs.filter((doc) => Object.keys(doc.hours ?? {}).length > 0).length };
    };
    const past = await withHours({ $lt: horizon });
    expect(past.docs).toBeGreaterThan(0);
    expect(past.withHours).toBe(0);
    const kept = await withHours({ $gte: horizon });
    expect(kept.withHours).toBe(kept.docs);
    expect(kept.docs).toBeGreaterThan(0);
  });
});
