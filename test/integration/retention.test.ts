/**
 * Retention: readings on ten days, a policy of minutes 3 days, hours 6 days, days 8 days,
 * applied at a chosen `now`. Checked against plain loops over the readings sent: what
 * each level's removal changed in the stored documents, that queries needing removed
 * minute or hour slots are refused with DETAIL_EXPIRED and the time detail begins, that
 * hour and day buckets still equal the loop (from the series and from a rollup), that
 * days past the day horizon are gone, that readings older than that are refused with
 * nothing written, that late readings into days without minutes or hours leave none
 * behind, and that a second pass changes nothing.
 *
 * Retention works on the stored documents: each batch is folded (`settle`) before the
 * next is sent, so a series-day has one part per batch that wrote to it, and the plain
 * loops count parts (`host|day|fold`).
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionJob } from '../../src/jobs/retention-job.ts';
import { JobScheduler } from '../../src/jobs/scheduler.ts';
import { applyRetention, type RetentionRemoval } from '../../src/storage/expire.ts';
import { backfillRollup, findRollups } from '../../src/storage/rollups.ts';
import { CollectionName } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { readVisible } from '../../src/storage/fold-state.ts';

const METRIC = 'sensor';
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const START = Date.UTC(2024, 2, 1);
const HOSTS = ['h1', 'h2', 'h3'];
/** The pass runs on 2024-03-11 at 05:00 UTC: minutes are kept from Mar 8, hours from Mar 5, days from Mar 3. */
const NOW = START + 10 * DAY + 5 * HOUR;
const MINUTE_FROM = START + 7 * DAY;
const HOUR_FROM = START + 4 * DAY;
const DAY_FROM = START + 2 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

interface Sent {
  host: string;
  time: number;
  value: number;
}

/** A stored part of a series-day (or rollup group-day) document: written whole by fold `f`. */
type Part = SeriesDayDocument & { f?: number };

/** A reading sent, with the number of the fold that wrote it into a part of its series-day. */
interface Folded extends Sent {
  fold: number;
}

/** `count` readings from `seed` on, spread over ten days and three hosts, values with repeats and negatives. */
function readingsOf(count: number, seed: number): Sent[] {
  return Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    return {
      host: HOSTS[k % 3]!,
      time: START + ((k * 7919) % (10 * 1440)) * MINUTE + ((k * 13) % 60) * 1000,
      value: ((k * 37) % 181) - 40,
    };
  });
}

const asInput = (readings: readonly Sent[]) =>
  readings.map((r) => ({
    metric: METRIC,
    tags: [{ key: 'host', value: r.host }],
    time: iso(r.time),
    fields: [{ name: 'value', value: r.value }],
  }));

interface Stats {
  start: string;
  count: number;
  sum: number;
  min: number;
  max: number;
}

/** Buckets of `width` ms over `[from, to)` by a plain loop over `readings` (only those of `host` when given). */
function expectedBuckets(readings: readonly Sent[], width: number, from: number, to: number, host?: string): Stats[] {
  const buckets = new Map<number, Stats>();
  for (const r of readings) {
    if (r.time < from || r.time >= to || (host !== undefined && r.host !== host)) continue;
    const start = r.time - (r.time % width);
    const bucket = buckets.get(start) ?? { start: iso(start), count: 0, sum: 0, min: Infinity, max: -Infinity };
    bucket.count += 1;
    bucket.sum += r.value;
    bucket.min = Math.min(bucket.min, r.value);
    bucket.max = Math.max(bucket.max, r.value);
    buckets.set(start, bucket);
  }
  return [...buckets.entries()].sort(([a], [b]) => a - b).map(([, bucket]) => bucket);
}

/** Distinct parts of series-day documents (`host|day|fold`) of `readings` whose day lies in `[from, to)`. */
function documentsIn(readings: readonly Folded[], from: number, to: number): number {
  const keys = new Set<string>();
  for (const r of readings) {
    const day = r.time - (r.time % DAY);
    if (day >= from && day < to) keys.add(`${r.host}|${day}|${r.fold}`);
  }
  return keys.size;
}

/** Distinct days of `readings` in `[from, to)`: the whole-metric rollup's documents. */
function daysIn(readings: readonly Sent[], from: number, to: number): number {
  return new Set(readings.map((r) => r.time - (r.time % DAY)).filter((day) => day >= from && day < to)).size;
}

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const BUCKETS = `query($granularity: Granularity!, $from: Time!, $to: Time!, $where: [TagFilter!]) {
  buckets(metric: "sensor", field: "value", granularity: $granularity, from: $from, to: $to, where: $where, fill: NONE) {
    buckets { start count sum min max }
  }
}`;
const AGGREGATE = `query($from: Time!, $to: Time!) { aggregate(metric: "sensor", field: "value", from: $from, to: $to) { count sum } }`;
const SERIES_MINUTES = `query($from: Time!, $to: Time!) {
  series(metric: "sensor") { buckets(field: "value", granularity: MINUTE, from: $from, to: $to) { count } }
}`;
const SET = `mutation($minutes: Int, $hours: Int, $days: Int) {
  setRetention(metric: "sensor", minutes: $minutes, hours: $hours, days: $days) { retention { minutes hours days } }
}`;
const RETENTION = `{ metric(name: "sensor") { firstReadingAt retention { minutes hours days setAt minuteDetailFrom hourDetailFrom dataFrom } } }`;

type Answer = {
  data?: { buckets: { buckets: Stats[] }[] } | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: { reads?: { rollup: string | null }[] };
};

describe('retention', { timeout: 120_000 }, () => {
  let t: TestApp;
  const sent: Folded[] = [];
  /** Records a batch and, unless told not to, folds it (one fold: one part per series-day it writes to). */
  const record = async (readings: Sent[], options: { settle?: boolean } = {}) => {
    const answer = await t.graphql(RECORD, { readings: asInput(readings) });
    expect(answer.errors).toBeUndefined();
    if (options.settle === false) return;
    expect(await t.settle()).toBe(readings.length);
    const fold = await readVisible(t.store);
    sent.push(...readings.map((r) => ({ ...r, fold })));
  };
  const buckets = async (granularity: string, from: number, to: number, host?: string) =>
    (await t.graphql(BUCKETS, {
      granularity,
      from: iso(from),
      to: iso(to),
      where: host === undefined ? null : [{ key: 'host', in: [host] }],
    })) as Answer;
  /** Asserts a bucket answer equals the loop's (sums to 1e-6). */
  const expectBuckets = (answer: Answer, wanted: Stats[]) => {
    expect(answer.errors).toBeUndefined();
    const got = answer.data!.buckets.flatMap((group) => group.buckets);
    expect(got.map(({ sum: _s, ...rest }) => rest)).toEqual(wanted.map(({ sum: _s, ...rest }) => rest));
    for (const [i, bucket] of got.entries()) expect(bucket.sum).toBeCloseTo(wanted[i]!.sum, 6);
  };
  const expired = (answer: { errors?: { extensions?: Record<string, unknown> }[] }, level: string, availableFrom: number) => {
    expect(answer.errors?.[0]?.extensions).toMatchObject({
      code: 'DETAIL_EXPIRED',
      level,
      availableFrom: iso(availableFrom),
      inputPath: 'from',
    });
  };
  let removals: RetentionRemoval[];

  beforeAll(async () => {
    // What retention removes from the slot form is what this checks; a document in the raw
    // form keeps its readings, as the slot form keeps its latest readings, until its day goes.
    t = await openTestApp('retention', { journal: false, rawReadings: 0 });
    const readings = readingsOf(900, 0);
    for (let i = 0; i < readings.length; i += 300) await record(readings.slice(i, i + 300));
    // Three folds: most series-days have a part of each.
    expect(new Set(sent.map((r) => r.fold)).size).toBe(3);
    expect(await t.store.seriesDays.countDocuments({ metric: METRIC })).toBe(documentsIn(sent, 0, Infinity));
    expect(documentsIn(sent, 0, Infinity)).toBeGreaterThan(2 * 30);
    const defined = await t.graphql(`mutation { defineRollup(metric: "sensor", name: "all", tagKeys: []) { state } }`);
    expect(defined.errors).toBeUndefined();
    await backfillRollup(t.store, METRIC, 'all', { graceMs: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses bad policies with INVALID_ARGUMENT and writes nothing', async () => {
    const before = await databaseSnapshot(t.store.db);
    for (const [variables, path] of [
      [{ minutes: -1 }, 'minutes'],
      [{ minutes: 0 }, 'minutes'],
      [{ minutes: 30, hours: 10 }, 'hours'],
      [{ hours: 10 }, 'hours'],
      [{ minutes: 3, hours: 6, days: 5 }, 'days'],
      [{ days: 100_000 }, 'days'],
    ] as const) {
      const answer = await t.graphql(SET, variables);
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_ARGUMENT', inputPath: path });
    }
    const badName = await t.graphql(`mutation { setRetention(metric: "a.b", minutes: 1) { name } }`);
    expect(badName.errors?.[0]?.extensions?.code).toBe('INVALID_NAME');
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('sets a policy that changes nothing until a pass applies it', async () => {
    const set = await t.graphql(SET, { minutes: 3, hours: 6, days: 8 });
    expect(set.errors).toBeUndefined();
    expect(set.data).toEqual({ setRetention: { retention: { minutes: 3, hours: 6, days: 8 } } });
    const answer = await buckets('MINUTE', MINUTE_FROM - HOUR, MINUTE_FROM + HOUR);
    expectBuckets(answer, expectedBuckets(sent, MINUTE, MINUTE_FROM - HOUR, MINUTE_FROM + HOUR));
  });

  it('removes each level up to its horizon, by a plain count of the documents', async () => {
    removals = await applyRetention(t.store, NOW);
    expect(
      removals.map(({ metric, level, horizon, documents, rollupDocuments }) => ({
        metric,
        level,
        horizon: horizon.getTime(),
        documents,
        rollupDocuments,
      })),
    ).toEqual([
      {
        metric: METRIC,
        level: 'day',
        horizon: DAY_FROM,
        documents: documentsIn(sent, 0, DAY_FROM),
        rollupDocuments: daysIn(sent, 0, DAY_FROM),
      },
      {
        metric: METRIC,
        level: 'hour',
        horizon: HOUR_FROM,
        documents: documentsIn(sent, DAY_FROM, HOUR_FROM),
        rollupDocuments: daysIn(sent, DAY_FROM, HOUR_FROM),
      },
      {
        metric: METRIC,
        level: 'minute',
        horizon: MINUTE_FROM,
        documents: documentsIn(sent, HOUR_FROM, MINUTE_FROM),
        // The rollup's quarter hours of those days go with the minutes.
        rollupDocuments: daysIn(sent, HOUR_FROM, MINUTE_FROM),
      },
    ]);
    expect(documentsIn(sent, 0, DAY_FROM)).toBeGreaterThan(0);

    const docs = await t.store.seriesDays.find({ metric: METRIC }).toArray();
    expect(docs.length).toBe(documentsIn(sent, DAY_FROM, Infinity));
    const perDay = new Map<string, number>();
    for (const doc of docs) {
      const day = doc.date.getTime();
      const hours = Object.values(doc.hours ?? {});
      if (day < HOUR_FROM) {
        expect(doc.hours).toBeUndefined();
        expect(doc.q?.hours).toBeUndefined();
        expect(Object.keys(doc.q?.fields ?? {})).toEqual(['value']);
      } else if (day < MINUTE_FROM) {
        expect(hours.length).toBeGreaterThan(0);
        expect(hours.every((hour) => hour.minutes === undefined && hour.fields.value !== undefined)).toBe(true);
        // Quarter-hour sketches go with the minute slots.
        expect(Object.values(doc.q?.hours ?? {}).every((hour) => hour.minutes === undefined && hour.quarters === undefined)).toBe(true);
      } else {
        expect(hours.every((hour) => Object.keys(hour.minutes ?? {}).length > 0)).toBe(true);
        expect(Object.values(doc.q?.hours ?? {}).every((hour) => Object.keys(hour.quarters ?? {}).length > 0)).toBe(true);
      }
      const fold = (doc as Part).f;
      expect(doc.fields.value!.n).toBe(
        sent.filter((r) => r.host === doc.tags.host && r.time - (r.time % DAY) === day && r.fold === fold).length,
      );
      const key = `${doc.tags.host}|${day}`;
      perDay.set(key, (perDay.get(key) ?? 0) + doc.fields.value!.n);
    }
    // The parts of each series-day add up to its readings.
    for (const [key, n] of perDay) {
      const [host, day] = key.split('|');
      expect(n, key).toBe(sent.filter((r) => r.host === host && r.time - (r.time % DAY) === Number(day)).length);
    }
    // Day summaries and their day sketches go with the days, and the days kept keep theirs.
    for (const name of [CollectionName.summaries, CollectionName.sketches]) {
      const dates = (await t.store.db.collection(name).distinct('date', { metric: METRIC })) as Date[];
      expect(dates.length, name).toBeGreaterThan(0);
      expect(
        dates.every((date) => date.getTime() >= DAY_FROM),
        name,
      ).toBe(true);
    }
    const [rollup] = await findRollups(t.store, [METRIC]);
    const rolled = await t.store.db.collection(rollup!.collection).find({}).toArray();
    expect(rolled.length).toBe(daysIn(sent, DAY_FROM, Infinity));
    for (const doc of rolled) {
      expect(doc.hours === undefined).toBe(doc.date.getTime() < HOUR_FROM);
      // Quarter hours only from the minute horizon on, and in every hour with readings there.
      const quartered = Object.values(doc.hours ?? {}).filter((hour) => (hour as { quarters?: unknown }).quarters !== undefined).length;
      if (doc.date.getTime() < MINUTE_FROM) expect(quartered).toBe(0);
      else expect(quartered).toBe(Object.keys(doc.hours ?? {}).length);
    }
  });

  it('tells where each level begins', async () => {
    const answer = await t.graphql<{ metric: { firstReadingAt: string; retention: Record<string, unknown> } }>(RETENTION);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.metric.retention).toMatchObject({
      minutes: 3,
      hours: 6,
      days: 8,
      minuteDetailFrom: iso(MINUTE_FROM),
      hourDetailFrom: iso(HOUR_FROM),
      dataFrom: iso(DAY_FROM),
    });
    const earliest = Math.min(...sent.filter((r) => r.time >= DAY_FROM).map((r) => r.time));
    expect(answer.data!.metric.firstReadingAt).toBe(iso(earliest));
  });

  it('refuses queries that need removed minute or hour slots, naming where they begin', async () => {
    expired(await buckets('MINUTE', MINUTE_FROM - HOUR, MINUTE_FROM + HOUR), 'MINUTE', MINUTE_FROM);
    expired(await buckets('FIFTEEN_MINUTES', HOUR_FROM, HOUR_FROM + HOUR, 'h1'), 'MINUTE', MINUTE_FROM);
    expired(await buckets('HOUR', HOUR_FROM - HOUR, HOUR_FROM + HOUR), 'HOUR', HOUR_FROM);
    // Before the day horizon nothing is left: minute and hour detail begins at the later horizons.
    expired(await buckets('HOUR', START, START + HOUR), 'HOUR', HOUR_FROM);
    // A range edge inside an hour reads minute slots there.
    expired(await t.graphql(AGGREGATE, { from: iso(HOUR_FROM + 12 * HOUR + 30 * MINUTE), to: iso(NOW) }), 'MINUTE', MINUTE_FROM);
    expired(await t.graphql(SERIES_MINUTES, { from: iso(MINUTE_FROM - MINUTE), to: iso(MINUTE_FROM + MINUTE) }), 'MINUTE', MINUTE_FROM);
  });

  it('answers the detail that is left exactly, from the series and from the rollup', async () => {
    const end = START + 11 * DAY;
    expectBuckets(
      await buckets('MINUTE', MINUTE_FROM, MINUTE_FROM + 2 * HOUR),
      expectedBuckets(sent, MINUTE, MINUTE_FROM, MINUTE_FROM + 2 * HOUR),
    );
    for (const host of [undefined, 'h2']) {
      const hourly = await buckets('HOUR', HOUR_FROM, end, host);
      expectBuckets(hourly, expectedBuckets(sent, HOUR, HOUR_FROM, end, host));
      expect(hourly.extensions?.reads?.[0]?.rollup).toBe(host === undefined ? 'all' : null);
      // Days before the day horizon are gone: the loop counts only the days kept.
      const daily = await buckets('DAY', START, end, host);
      expectBuckets(daily, expectedBuckets(sent, DAY, DAY_FROM, end, host));
      expect(daily.extensions?.reads?.[0]?.rollup).toBe(host === undefined ? 'all' : null);
    }
    const total = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(AGGREGATE, { from: iso(START), to: iso(end) });
    expect(total.data!.aggregate[0]!.count).toBe(sent.filter((r) => r.time >= DAY_FROM).length);
  });

  it('changes nothing when run again', async () => {
    const before = await databaseSnapshot(t.store.db);
    expect(await applyRetention(t.store, NOW)).toEqual([]);
    expect(await applyRetention(t.store, NOW + 4 * HOUR)).toEqual([]);
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('refuses readings older than the kept days and writes nothing', async () => {
    const before = await databaseSnapshot(t.store.db);
    const answer = await t.graphql(RECORD, {
      readings: asInput([
        { host: 'h1', time: MINUTE_FROM + HOUR, value: 1 },
        { host: 'h1', time: DAY_FROM - MINUTE, value: 2 },
      ]),
    });
    expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'READING_EXPIRED', inputPath: 'readings[1].time' });
    const single = await t.graphql(`mutation($reading: ReadingInput!) { recordReading(reading: $reading) { recorded } }`, {
      reading: asInput([{ host: 'h9', time: START, value: 3 }])[0],
    });
    expect(single.errors?.[0]?.extensions).toMatchObject({ code: 'READING_EXPIRED', inputPath: 'reading.time' });
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('keeps no minute or hour slots of late readings into days that lost them', async () => {
    const lateMinute = { host: 'h1', time: HOUR_FROM + DAY + 10 * HOUR + 15 * MINUTE, value: 500 };
    const lateHour = { host: 'h2', time: DAY_FROM + 3 * HOUR, value: -500 };
    const end = START + 11 * DAY;
    const answers = async (readings: readonly Sent[]) => {
      expectBuckets(await buckets('HOUR', HOUR_FROM, end, 'h1'), expectedBuckets(readings, HOUR, HOUR_FROM, end, 'h1'));
      expectBuckets(await buckets('DAY', START, end), expectedBuckets(readings, DAY, DAY_FROM, end));
      expectBuckets(await buckets('DAY', START, end, 'h2'), expectedBuckets(readings, DAY, DAY_FROM, end, 'h2'));
    };
    // Before the fold the readings are answered from the log's tail.
    await record([lateMinute, lateHour], { settle: false });
    await answers([...sent, lateMinute, lateHour]);
    const parts = await t.store.seriesDays.countDocuments({ metric: METRIC });
    expect(await t.settle()).toBe(2);
    const fold = await readVisible(t.store);
    sent.push({ ...lateMinute, fold }, { ...lateHour, fold });
    // The fold wrote one part per series-day, trimmed to what the days keep.
    expect(await t.store.seriesDays.countDocuments({ metric: METRIC })).toBe(parts + 2);
    const minuteDocs = await t.store.seriesDays
      .find({ series: { $exists: true }, 'tags.host': 'h1', date: new Date(HOUR_FROM + DAY) })
      .toArray();
    expect(minuteDocs.find((doc) => (doc as Part).f === fold)?.fields.value?.sum).toBe(500);
    for (const doc of minuteDocs) {
      expect(Object.keys(doc.hours).length).toBeGreaterThan(0);
      expect(Object.values(doc.hours).every((hour) => hour.minutes === undefined)).toBe(true);
      expect(Object.values(doc.q?.hours ?? {}).every((hour) => hour.minutes === undefined && hour.quarters === undefined)).toBe(true);
    }
    const hourDocs = await t.store.seriesDays.find({ 'tags.host': 'h2', date: new Date(DAY_FROM) }).toArray();
    expect(hourDocs.find((doc) => (doc as Part).f === fold)?.fields.value?.sum).toBe(-500);
    // No hour slots (a part written whole into such a day has an empty `hours`, retention unsets it).
    const noHours = (doc: Part) => Object.keys(doc.hours ?? {}).length + Object.keys(doc.q?.hours ?? {}).length;
    for (const doc of hourDocs) expect(noHours(doc)).toBe(0);
    const [rollup] = await findRollups(t.store, [METRIC]);
    const rolled = await t.store.db
      .collection<Part>(rollup!.collection)
      .find({ date: new Date(DAY_FROM) })
      .sort({ f: 1 })
      .toArray();
    // The backfilled document of the day and the late fold's part.
    expect(rolled.map((doc) => doc.f === fold)).toEqual([false, true]);
    for (const doc of rolled) expect(noHours(doc)).toBe(0);
    await answers(sent);
  });

  it('runs on a schedule with the clock it is given, logging what it removed', async () => {
    const lines: unknown[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const jobs = new JobScheduler(logger);
    jobs.start(retentionJob(t.store, { everySeconds: 3600, now: () => NOW + DAY }));
    for (let i = 0; i < 200 && lines.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await jobs.stop();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, job: 'retention', msg: 'Retention pass removed expired data' });
    const removed = (lines[0] as { removed: { level: string; horizon: string; documents: number }[] }).removed;
    expect(removed.map(({ level, horizon, documents }) => ({ level, horizon, documents }))).toEqual([
      { level: 'day', horizon: iso(DAY_FROM + DAY), documents: documentsIn(sent, DAY_FROM, DAY_FROM + DAY) },
      { level: 'hour', horizon: iso(HOUR_FROM + DAY), documents: documentsIn(sent, HOUR_FROM, HOUR_FROM + DAY) },
      { level: 'minute', horizon: iso(MINUTE_FROM + DAY), documents: documentsIn(sent, MINUTE_FROM, MINUTE_FROM + DAY) },
    ]);
  });
});
