/**
 * Packed minutes (`PackedMinutes`: an hour's minute slots as arrays per field, the
 * minute's count and first and last times kept once), read by every query as the same
 * minutes in the object form, through GraphQL against the test server.
 *
 * Dense readings (three hosts, two fields every 10 s over two UTC days, integer values,
 * so sums are exact) are recorded and folded with packing off, then compacted. Host
 * `c` leaves out field `b` in one reading of 7 in its first hours (those hours cannot
 * be packed: the fields' counts differ), and a few readings fall alone in late hours
 * (too few minutes to pack). The answers of a set of queries (UTC minutes, five
 * minutes and hours, Asia/Kolkata hours and Asia/Kathmandu days cut inside hours,
 * aggregates over ragged ranges; counts, sums, extremes, first and last readings,
 * standard deviations, percentiles) are checked against a plain loop over the readings.
 * Then every document is rewritten with its minutes packed by `packHours`, and every
 * answer must stay the same (sums and means to 1e-9 relative, everything else exactly);
 * then a compaction reads the packed documents back in Node and merges them with new
 * parts, and the answers still equal a plain loop. Last, a database written with packing
 * on: its compacted documents are packed exactly where a plain loop says an hour can
 * be, and answer the same; retention of minutes removes packed minutes too.
 *
 * No folder runs in the background (test/helpers/app.ts): folds happen where the test calls them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRetention, setRetention } from '../../src/storage/expire.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { expectSameAnswer } from '../helpers/reference.ts';
import { type SeriesDayDocument, DEFAULT_PACKED_MINUTES } from '../../src/documents/series-day.ts';
import { packHours } from '../../src/documents/packed-minutes.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const D0 = Date.UTC(2024, 2, 10);
const HOUR = 3_600_000;
const HOSTS = ['a', 'b', 'c'];

/** One reading as the test sends it and the plain loop reads it: fields `a` and (mostly) `b`, integers. */
interface Sent {
  host: string;
  time: number;
  a: number;
  b?: number;
}

/**
 * Three hosts every 10 s from 20:00 on the first day to 03:00 on the second (seven
 * hours across midnight), values a deterministic random walk; host `c` leaves out `b`
 * in one reading of 7 before 22:00; then a reading of each host alone at 05:07 and 09:41
 * on the second day.
 */
function readings(): Sent[] {
  const out: Sent[] = [];
  let seed = 7;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const walk = new Map(HOSTS.map((host) => [host, { a: 50, b: 20 }]));
  for (let time = D0 + 20 * HOUR; time < D0 + 27 * HOUR; time += 10_000) {
    HOSTS.forEach((host, i) => {
      const w = walk.get(host)!;
      w.a = Math.max(0, Math.min(100, w.a + Math.round(next() * 10 - 5)));
      w.b = Math.max(-50, Math.min(50, w.b + Math.round(next() * 6 - 3)));
      const gap = host === 'c' && time < D0 + 22 * HOUR && (time / 10_000) % 7 === 0;
      out.push({ host, time: time + i * 1000, a: w.a, ...(gap ? {} : { b: w.b }) });
    });
  }
  for (const time of [D0 + 29 * HOUR + 7 * 60_000, D0 + 33 * HOUR + 41 * 60_000]) {
    HOSTS.forEach((host, i) => {
      out.push({ host, time: time + i * 1000, a: 10 + i, b: -i });
    });
  }
  return out;
}

const SENT = readings();

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const BUCKETS = `query($field: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!], $zone: String) {
  buckets(metric: "cpu", field: $field, granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, timeZone: $zone, fill: NONE) {
    tags { key value }
    buckets { start count sum min max avg stddev first { time value } last { time value } p50 }
  }
}`;
const AGGREGATE = `query($field: String!, $from: Time!, $to: Time!, $groupBy: [String!]) {
  aggregate(metric: "cpu", field: $field, from: $from, to: $to, groupBy: $groupBy) {
    tags { key value } count sum min max avg stddev first { time value } last { time value }
  }
}`;

const iso = (ms: number) => new Date(ms).toISOString();

/** A query of the set, and the readings (with the field) a plain loop checks its counts, sums, minima and maxima on. */
interface Case {
  name: string;
  query: string;
  variables: Record<string, unknown>;
  field: 'a' | 'b';
  select: (r: Sent) => boolean;
}

const within = (from: number, to: number, hosts?: string[]) => (r: Sent) =>
  r.time >= from && r.time < to && (hosts === undefined || hosts.includes(r.host));

const CASES: Case[] = [
  {
    name: 'MINUTE buckets of one host over a ragged two hours',
    query: BUCKETS,
    variables: {
      field: 'a',
      granularity: 'MINUTE',
      from: iso(D0 + 20.5 * HOUR + 7 * 60_000),
      to: iso(D0 + 22.5 * HOUR),
      where: [{ key: 'host', in: ['a'] }],
    },
    field: 'a',
    select: within(D0 + 20.5 * HOUR + 7 * 60_000, D0 + 22.5 * HOUR, ['a']),
  },
  {
    name: 'FIVE_MINUTES buckets grouped by host across midnight, field b (host c leaves some out)',
    query: BUCKETS,
    variables: {
      field: 'b',
      granularity: 'FIVE_MINUTES',
      from: iso(D0 + 21 * HOUR + 13 * 60_000),
      to: iso(D0 + 25 * HOUR + 3 * 60_000),
      groupBy: ['host'],
    },
    field: 'b',
    select: within(D0 + 21 * HOUR + 13 * 60_000, D0 + 25 * HOUR + 3 * 60_000),
  },
  {
    name: 'HOUR buckets of two hosts over the whole range',
    query: BUCKETS,
    variables: { field: 'a', granularity: 'HOUR', from: iso(D0), to: iso(D0 + 48 * HOUR), where: [{ key: 'host', in: ['a', 'c'] }] },
    field: 'a',
    select: within(D0, D0 + 48 * HOUR, ['a', 'c']),
  },
  {
    name: 'HOUR buckets in Asia/Kolkata (+05:30): every hour cut at :30 UTC',
    query: BUCKETS,
    variables: {
      field: 'b',
      granularity: 'HOUR',
      from: iso(D0 + 19.5 * HOUR),
      to: iso(D0 + 27.5 * HOUR),
      zone: 'Asia/Kolkata',
      where: [{ key: 'host', in: ['c'] }],
    },
    field: 'b',
    select: within(D0 + 19.5 * HOUR, D0 + 27.5 * HOUR, ['c']),
  },
  {
    name: 'DAY buckets in Asia/Kathmandu (+05:45): days cut at 18:15 UTC',
    query: BUCKETS,
    variables: {
      field: 'a',
      granularity: 'DAY',
      from: iso(D0 - 5.75 * HOUR),
      to: iso(D0 + 48 * HOUR - 5.75 * HOUR),
      zone: 'Asia/Kathmandu',
      groupBy: ['host'],
    },
    field: 'a',
    select: within(D0 - 5.75 * HOUR, D0 + 48 * HOUR - 5.75 * HOUR),
  },
  {
    name: 'an aggregate grouped by host over a ragged range',
    query: AGGREGATE,
    variables: { field: 'a', from: iso(D0 + 20 * HOUR + 17 * 60_000), to: iso(D0 + 26 * HOUR + 44 * 60_000), groupBy: ['host'] },
    field: 'a',
    select: within(D0 + 20 * HOUR + 17 * 60_000, D0 + 26 * HOUR + 44 * 60_000),
  },
  {
    name: 'an aggregate of field b over minutes on both sides of an hour',
    query: AGGREGATE,
    variables: { field: 'b', from: iso(D0 + 21 * HOUR + 58 * 60_000), to: iso(D0 + 22 * HOUR + 3 * 60_000) },
    field: 'b',
    select: within(D0 + 21 * HOUR + 58 * 60_000, D0 + 22 * HOUR + 3 * 60_000),
  },
];

/** A bucket or aggregate row as the cases ask for it (the fields the plain loop checks). */
interface Row {
  count: number;
  sum: number;
  min: number;
  max: number;
  first: { time: string; value: number } | null;
  last: { time: string; value: number } | null;
}

/** The rows of an answer, whichever query it is. */
function rowsOf(data: unknown): Row[] {
  const answer = data as { buckets?: { buckets: Row[] }[]; aggregate?: Row[] };
  return answer.aggregate ?? (answer.buckets ?? []).flatMap((group) => group.buckets);
}

async function record(app: TestApp, rows: readonly Sent[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const batch = rows.slice(i, i + 1000).map((r) => ({
      metric: 'cpu',
      tags: [{ key: 'host', value: r.host }],
      time: iso(r.time),
      fields: [{ name: 'a', value: r.a }, ...(r.b === undefined ? [] : [{ name: 'b', value: r.b }])],
    }));
    const answer = await app.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings: batch });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.recordReadings.recorded).toBe(batch.length);
  }
}

async function answers(app: TestApp): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const c of CASES) {
    const answer = await app.graphql(c.query, c.variables);
    expect(answer.errors, c.name).toBeUndefined();
    out.push(answer.data);
  }
  return out;
}

/** Checks each case's total count, sum, extremes and its first and last reading against a plain loop over `sent`. */
function expectPlain(got: unknown[], sent: readonly Sent[], label: string): void {
  CASES.forEach((c, i) => {
    const selected = sent.filter((r) => c.select(r) && r[c.field] !== undefined);
    const values = selected.map((r) => r[c.field]!);
    const rows = rowsOf(got[i]);
    const name = `${c.name} (${label})`;
    expect(selected.length, name).toBeGreaterThan(5);
    expect(
      rows.reduce((sum, row) => sum + row.count, 0),
      name,
    ).toBe(selected.length);
    expect(
      rows.reduce((sum, row) => sum + row.sum, 0),
      name,
    ).toBe(values.reduce((a, b) => a + b, 0));
    expect(Math.min(...rows.map((row) => row.min)), name).toBe(Math.min(...values));
    expect(Math.max(...rows.map((row) => row.max)), name).toBe(Math.max(...values));
    const firstTime = Math.min(...rows.map((row) => Date.parse(row.first!.time)));
    const lastTime = Math.max(...rows.map((row) => Date.parse(row.last!.time)));
    expect(firstTime, name).toBe(Math.min(...selected.map((r) => r.time)));
    expect(lastTime, name).toBe(Math.max(...selected.map((r) => r.time)));
  });
}

/** Rewrites every document of `app` with its minutes packed where they can be (`packHours`, at least `least` minutes); returns the hours packed. */
async function rewritePacked(app: TestApp, least: number): Promise<number> {
  const docs = await app.store.seriesDays.find({ hours: { $exists: true } }).toArray();
  let packed = 0;
  const replacements = [];
  for (const doc of docs) {
    const copy = structuredClone(doc) as SeriesDayDocument & Record<string, unknown>;
    packHours(copy, least);
    const count = Object.values(copy.hours).filter((hour) => hour.mc !== undefined).length;
    if (count === 0) continue;
    packed += count;
    replacements.push({ replaceOne: { filter: { _id: doc._id }, replacement: copy } });
  }
  if (replacements.length > 0) expect((await app.store.seriesDays.bulkWrite(replacements)).modifiedCount).toBe(replacements.length);
  return packed;
}

/**
 * Whether hour `hour` (counted from the first day's midnight) of `host` can be packed by
 * a plain loop's reckoning: at least the default number of minutes, every reading with
 * both fields (the hours here with readings hold their minutes from :00 on, no gaps).
 */
function packable(sent: readonly Sent[], host: string, hour: number): boolean {
  const inHour = sent.filter((r) => r.host === host && Math.floor((r.time - D0) / HOUR) === hour);
  const minutes = new Set(inHour.map((r) => Math.floor(r.time / 60_000)));
  return minutes.size >= DEFAULT_PACKED_MINUTES && inHour.every((r) => r.b !== undefined);
}

let t: TestApp;
let unpacked: unknown[];

beforeAll(async () => {
  t = await openTestApp('packed-minutes', { journal: false, packedMinutes: 0 });
  await record(t, SENT);
  expect(await t.settle()).toBe(SENT.length);
  while ((await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 })).compaction !== null);
  unpacked = await answers(t);
}, 600_000);
afterAll(async () => t?.close());

describe('packed minutes', { timeout: 600_000 }, () => {
  it('the object form answers the counts, sums, extremes, first and last readings of a plain loop', () => {
    expectPlain(unpacked, SENT, 'object form');
  });

  it('answer every query as the same minutes in the object form, and compact with new parts', async () => {
    const packed = await rewritePacked(t, 4);
    // Seven hours of three hosts, but for host c's first two: 19 hours packed.
    expect(packed).toBe(19);
    const stored = await t.store.seriesDays.findOne({ 'hours.21.mc': { $exists: true } });
    expect(stored?.hours['21']?.minutes).toBeUndefined();
    expect(stored?.hours['21']?.mc?.n).toHaveLength(60);
    const got = await answers(t);
    CASES.forEach((c, i) => {
      expectSameAnswer(got[i], unpacked[i], c.name);
    });

    // New readings into packed hours (a second reading in some minutes), folded and compacted with the packed documents.
    const late: Sent[] = [];
    for (let minute = 0; minute < 120; minute += 3)
      late.push({ host: 'a', time: D0 + 21 * HOUR + minute * 60_000 + 5_500, a: minute % 17, b: -minute % 11 });
    await record(t, late);
    expect(await t.settle()).toBe(late.length);
    expectPlain(await answers(t), [...SENT, ...late], 'packed documents and new parts');
    while ((await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 0 })).compaction !== null);
    expectPlain(await answers(t), [...SENT, ...late], 'packed, then compacted with new parts');
  });
});

describe('folds and compactions writing packed minutes', { timeout: 600_000 }, () => {
  let written: TestApp;
  afterAll(async () => written?.close());

  it('pack exactly the hours that can be, answer as the object form, and lose them to retention', async () => {
    written = await openTestApp('packed-minutes-written', { journal: false });
    await record(written, SENT);
    expect(await written.settle()).toBe(SENT.length);
    while ((await compactOnce(written.store, written.store.holder, { afterFolds: 1, graceMs: 0 })).compaction !== null);
    await compactOnce(written.store, written.store.holder, { afterFolds: 1, graceMs: 0 });
    const docs = await written.store.seriesDays.find({ metric: 'cpu' }).toArray();
    // One document per host and day.
    expect(docs).toHaveLength(6);
    for (const doc of docs) {
      const day = Math.round((doc.date.getTime() - D0) / (24 * HOUR));
      for (const [hour, slot] of Object.entries(doc.hours)) {
        const expected = packable(SENT, doc.tags.host!, day * 24 + Number(hour));
        expect(slot.mc !== undefined, `${doc.tags.host} day ${day} hour ${hour}`).toBe(expected);
        expect(slot.minutes === undefined).toBe(expected);
      }
    }
    const got = await answers(written);
    CASES.forEach((c, i) => {
      expectSameAnswer(got[i], unpacked[i], `${c.name}, written packed`);
    });

    // Minutes kept one day: the first day's minutes go, packed or not.
    await setRetention(written.store, 'cpu', { minutes: 1, hours: null, days: null }, new Date(D0 + 2 * 24 * HOUR));
    await applyRetention(written.store, D0 + 2 * 24 * HOUR);
    const first = await written.store.seriesDays.find({ metric: 'cpu', date: new Date(D0) }).toArray();
    expect(first).toHaveLength(3);
    for (const doc of first) for (const slot of Object.values(doc.hours)) expect([slot.mc, slot.minutes]).toEqual([undefined, undefined]);
    const second = await written.store.seriesDays.countDocuments({
      metric: 'cpu',
      date: new Date(D0 + 24 * HOUR),
      'hours.1.mc': { $exists: true },
    });
    expect(second).toBe(3);
  });
});
