/**
 * Exactly-once batches: a batch sent again with its batch id (after success, after a
 * partial application, concurrently) changes nothing that was applied and completes
 * what was not; a reused id is refused. Expected totals come from plain loops over the
 * readings sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { totalsOf } from '../helpers/plain-loop.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { ingestLog } from '../../src/storage/ingest-log.ts';
import { foldDocuments } from '../../src/documents/encode.ts';
import { planContents } from '../../src/documents/from-readings.ts';
import { FOLDS_ID, foldState } from '../../src/storage/fold-state.ts';

interface Outcome {
  batchId: string | null;
  recorded: number;
  applied: number;
  alreadyApplied: number;
}
interface Answer {
  data?: { recordReadings?: Outcome; recordReading?: Outcome } | null;
  errors?: { message: string; extensions?: { code?: string; inputPath?: string } }[];
}

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { batchId recorded applied alreadyApplied }
}`;
const AGGREGATE = `query($metric: String!, $field: String!) {
  aggregate(metric: $metric, field: $field, from: "2024-01-01T00:00:00Z", to: "2024-02-01T00:00:00Z") { count sum min max }
}`;
const HOURS = `query($metric: String!, $field: String!) {
  buckets(metric: $metric, field: $field, granularity: HOUR, from: "2024-01-01T00:00:00Z", to: "2024-01-04T00:00:00Z", fill: NONE) {
    buckets { start count sum }
  }
}`;

interface Sent {
  host: string;
  time: string;
  value: number;
}
/** Readings of `metric` over 3 days, 4 hosts and many minutes: `count` of them, starting at `seed`. */
function readingsOf(count: number, seed: number): Sent[] {
  return Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    return {
      host: `h${k % 4}`,
      time: new Date(Date.UTC(2024, 0, 1) + ((k * 7919) % (3 * 1440)) * 60_000 + (k % 60) * 1000).toISOString(),
      value: (k % 23) - 7.5,
    };
  });
}
const asInput = (metric: string, readings: readonly Sent[]) =>
  readings.map((r) => ({ metric, tags: [{ key: 'host', value: r.host }], time: r.time, fields: [{ name: 'v', value: r.value }] }));

/** count and sum per UTC hour, by a plain loop. */
function expectedHours(readings: readonly Sent[]) {
  const hours = new Map<string, { count: number; sum: number }>();
  for (const r of readings) {
    const hour = `${r.time.slice(0, 13)}:00:00.000Z`;
    const entry = hours.get(hour) ?? { count: 0, sum: 0 };
    entry.count += 1;
    entry.sum += r.value;
    hours.set(hour, entry);
  }
  return [...hours.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([start, entry]) => ({ start, ...entry }));
}

let t: TestApp;
beforeAll(async () => {
  t = await openTestApp('once', { registryCacheTtlMs: 50 });
});
afterAll(async () => t.close());

async function stored(metric: string) {
  const total = await t.graphql<{ aggregate: { count: number; sum: number; min: number; max: number }[] }>(AGGREGATE, {
    metric,
    field: 'v',
  });
  const hours = await t.graphql<{ buckets: { buckets: { start: string; count: number; sum: number }[] }[] }>(HOURS, { metric, field: 'v' });
  return { total: total.data?.aggregate[0] ?? null, hours: hours.data?.buckets[0]?.buckets ?? [] };
}

describe('a batch sent again with its batch id', () => {
  it('is applied once: the retry answers alreadyApplied and writes nothing', async () => {
    const readings = readingsOf(300, 1);
    const first = (await t.graphql(RECORD, { readings: asInput('m1', readings), batchId: 'm1-batch-1' })) as Answer;
    expect(first.errors).toBeUndefined();
    expect(first.data?.recordReadings).toEqual({ batchId: 'm1-batch-1', recorded: 300, applied: 300, alreadyApplied: 0 });
    const before = await databaseSnapshot(t.store.db);
    const again = (await t.graphql(RECORD, { readings: asInput('m1', readings), batchId: 'm1-batch-1' })) as Answer;
    expect(again.data?.recordReadings).toEqual({ batchId: 'm1-batch-1', recorded: 300, applied: 0, alreadyApplied: 300 });
    expect(await databaseSnapshot(t.store.db)).toBe(before);
    const { total, hours } = await stored('m1');
    expect(total).toEqual(totalsOf(readings));
    expect(hours).toEqual(expectedHours(readings));
  });

  it('without a batch id is recorded again (the documented at-least-once behaviour)', async () => {
    const readings = readingsOf(5, 1000);
    for (let i = 0; i < 2; i++) expect(((await t.graphql(RECORD, { readings: asInput('m2', readings) })) as Answer).errors).toBeUndefined();
    expect((await stored('m2')).total?.count).toBe(10);
  });

  it('sent 8 times at once is applied once in all, over documents created by the first write', async () => {
    const readings = readingsOf(400, 2000);
    const answers = (await Promise.all(
      Array.from({ length: 8 }, () => t.graphql(RECORD, { readings: asInput('m3', readings), batchId: 'concurrent' })),
    )) as Answer[];
    for (const answer of answers) {
      expect(answer.errors).toBeUndefined();
      expect(answer.data?.recordReadings?.recorded).toBe(400);
    }
    const applied = answers.map((answer) => answer.data!.recordReadings!.applied);
    expect(applied.reduce((a, b) => a + b, 0)).toBe(400);
    const { total, hours } = await stored('m3');
    expect(total).toEqual(totalsOf(readings));
    expect(hours).toEqual(expectedHours(readings));
  });

  it('is folded once when a fold stopped after writing some of its parts, and a retry writes nothing', async () => {
    const readings = readingsOf(500, 3000);
    const inputs = asInput('m4', readings);
    expect(((await t.graphql(RECORD, { readings: inputs, batchId: 'crashed' })) as Answer).errors).toBeUndefined();
    await t.settle();
    // The state a folder killed mid-fold leaves: the fold recorded as running with its
    // entry stamped, half of its parts inserted, nothing visible yet.
    const state = await foldState(t.store.db).findOne({ _id: FOLDS_ID });
    const seq = state!.visible + 1;
    const second = readingsOf(300, 4000);
    expect(((await t.graphql(RECORD, { readings: asInput('m4', second), batchId: 'crashed-2' })) as Answer).errors).toBeUndefined();
    await foldState(t.store.db).updateOne({ _id: FOLDS_ID }, { $set: { running: { seq, entries: ['crashed-2'] } } });
    await ingestLog(t.store).updateOne({ _id: 'crashed-2' }, { $set: { fold: seq } });
    const valid = validateReadings(
      asInput('m4', second).map((input) => ({ ...input, time: new Date(input.time) })),
      { maxBatchSize: 1000, receivedAt: 0 },
    );
    const parts = foldDocuments(planContents(valid).days, seq);
    await t.store.seriesDays.insertMany(parts.slice(0, Math.floor(parts.length / 2)) as never[]);
    // Queries read the fold's entry from the log, not its invisible parts.
    expect((await stored('m4')).total).toEqual(totalsOf([...readings, ...second]));
    await t.settle();
    expect((await foldState(t.store.db).findOne({ _id: FOLDS_ID }))?.visible).toBe(seq);
    expect(await t.store.seriesDays.countDocuments({ metric: 'm4', f: seq })).toBe(parts.length);
    const { total, hours } = await stored('m4');
    expect(total).toEqual(totalsOf([...readings, ...second]));
    expect(hours).toEqual(expectedHours([...readings, ...second]));
    const again = (await t.graphql(RECORD, { readings: asInput('m4', second), batchId: 'crashed-2' })) as Answer;
    expect(again.data?.recordReadings).toMatchObject({ applied: 0, alreadyApplied: 300 });
    expect((await stored('m4')).total?.count).toBe(800);
  });

  it('is still recognised after it was folded and many batches wrote to the same series-day since', async () => {
    const first = readingsOf(1, 5000);
    expect(((await t.graphql(RECORD, { readings: asInput('m5', first), batchId: 'old' })) as Answer).errors).toBeUndefined();
    for (let i = 0; i < 70; i++) {
      const answer = (await t.graphql(RECORD, { readings: asInput('m5', first), batchId: `later-${i}` })) as Answer;
      expect(answer.errors).toBeUndefined();
      if (i % 20 === 0) await t.settle();
    }
    await t.settle();
    const retry = (await t.graphql(RECORD, { readings: asInput('m5', first), batchId: 'old' })) as Answer;
    expect(retry.data?.recordReadings).toMatchObject({ applied: 0, alreadyApplied: 1 });
    expect((await stored('m5')).total?.count).toBe(71);
  });

  it("gives readings sent without a time the first attempt's time", async () => {
    const mutation = `mutation { recordReading(batchId: "no-time", reading: {metric: "m6", fields: [{name: "v", value: 2}]}) { applied alreadyApplied } }`;
    const first = (await t.graphql(mutation)) as Answer;
    expect(first.data?.recordReading).toEqual({ applied: 1, alreadyApplied: 0 });
    await new Promise((done) => setTimeout(done, 1100));
    const again = (await t.graphql(mutation)) as Answer;
    expect(again.data?.recordReading).toEqual({ applied: 0, alreadyApplied: 1 });
    expect(await ingestLog(t.store).countDocuments({ metrics: 'm6' })).toBe(1);
    await t.settle();
    expect(await t.store.seriesDays.countDocuments({ metric: 'm6' })).toBe(1);
  });

  it('with other readings is refused as BATCH_ID_REUSED and writes nothing', async () => {
    expect(((await t.graphql(RECORD, { readings: asInput('m7', readingsOf(3, 1)), batchId: 'reused' })) as Answer).errors).toBeUndefined();
    const before = await databaseSnapshot(t.store.db);
    const other = (await t.graphql(RECORD, { readings: asInput('m7', readingsOf(3, 2)), batchId: 'reused' })) as Answer;
    expect(other.errors?.[0]?.extensions).toMatchObject({ code: 'BATCH_ID_REUSED', inputPath: 'batchId' });
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('refused for a limit leaves no claim, so the corrected batch can use the id', async () => {
    const tooWide = [
      { metric: 'm8', time: '2024-01-01T00:00:00Z', fields: Array.from({ length: 32 }, (_, i) => ({ name: `f${i}`, value: i })) },
      { metric: 'm8', time: '2024-01-01T00:00:00Z', fields: [{ name: 'extra', value: 1 }] },
    ];
    const refused = (await t.graphql(RECORD, { readings: tooWide, batchId: 'fix-me' })) as Answer;
    expect(refused.errors?.[0]?.extensions?.code).toBe('TOO_MANY_NAMES');
    expect(await ingestLog(t.store).countDocuments({ _id: 'fix-me' })).toBe(0);
    const corrected = (await t.graphql(RECORD, { readings: tooWide.slice(0, 1), batchId: 'fix-me' })) as Answer;
    expect(corrected.data?.recordReadings).toMatchObject({ applied: 1, alreadyApplied: 0 });
  });
});

describe('registries', () => {
  it('are written again by the next batch after their entries were removed from outside', async () => {
    const readings = readingsOf(4, 9000);
    expect(((await t.graphql(RECORD, { readings: asInput('r1', readings), batchId: 'r1-a' })) as Answer).errors).toBeUndefined();
    await t.store.series.deleteMany({ metric: 'r1' });
    await t.store.metrics.deleteOne({ _id: 'r1' });
    await new Promise((done) => setTimeout(done, 100)); // past the test's 50 ms registry cache
    expect(((await t.graphql(RECORD, { readings: asInput('r1', readings), batchId: 'r1-b' })) as Answer).errors).toBeUndefined();
    expect(await t.store.series.countDocuments({ metric: 'r1' })).toBe(4);
    expect(await t.store.metrics.findOne({ _id: 'r1' })).toMatchObject({ fields: ['v'], tagKeys: ['host'] });
  });
});

describe('values at the limits', () => {
  it('keeps every statistic finite for the largest accepted values', async () => {
    const inputs = [1e150, -1e150, 1e150].map((value, i) => ({
      metric: 'big',
      time: `2024-01-01T00:0${i}:00Z`,
      fields: [{ name: 'v', value }],
    }));
    expect(((await t.graphql(RECORD, { readings: inputs, batchId: 'big' })) as Answer).errors).toBeUndefined();
    const answer = await t.graphql<{ aggregate: { count: number; avg: number; stddev: number; variance: number }[] }>(
      `{ aggregate(metric: "big", field: "v", from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z") { count avg stddev variance } }`,
    );
    expect(answer.errors).toBeUndefined();
    const [row] = answer.data!.aggregate;
    // Values 1e150, -1e150, 1e150: mean 1e150/3, population variance 8/9 * 1e300.
    expect(row!.count).toBe(3);
    expect(row!.avg / (1e150 / 3)).toBeCloseTo(1, 12);
    expect(row!.variance / ((8 / 9) * 1e300)).toBeCloseTo(1, 12);
  });

  it('answers a reading at the last recordable minute with a range ending at 9999-01-01', async () => {
    const reading = { metric: 'late', time: '9998-12-31T23:59:00Z', fields: [{ name: 'v', value: 4 }] };
    expect(((await t.graphql(RECORD, { readings: [reading], batchId: 'late' })) as Answer).errors).toBeUndefined();
    const answer = await t.graphql<{ buckets: { buckets: { start: string; end: string; count: number }[] }[] }>(
      `{ buckets(metric: "late", field: "v", granularity: YEAR, from: "9998-06-01T00:00:00Z", to: "9999-01-01T00:00:00Z") { buckets { start end count } } }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.buckets[0]!.buckets).toEqual([{ start: '9998-01-01T00:00:00.000Z', end: '9999-01-01T00:00:00.000Z', count: 1 }]);
  });
});
