/**
 * Atomicity: many writers, several store instances (as several server processes would
 * have), all recording into the same series and minute of a day that has no document
 * yet. Every level must end with exact counts and sums, the earliest and latest reading,
 * sketches counting every reading and the latest readings: no lost update, no duplicate
 * document, for both bucket layouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentLayout } from '../../src/model/day-document.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { recordBatch } from '../../src/engine/record.ts';
import { setMetricStatistics } from '../../src/storage/registry.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { randomBytes } from 'node:crypto';
import { testMongoUri } from '../helpers/db.ts';

const WRITERS = 60;
const STORES = 4;

describe.each<DocumentLayout>(['sparse', 'preallocated'])('%s layout', (layout) => {
  let stores: Store[];
  const dbName = `test_atomic_${layout}_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stores = await Promise.all(Array.from({ length: STORES }, () => openStore(testMongoUri(), dbName, { defaultLayout: layout })));
  });
  afterAll(async () => {
    await stores[0]!.db.dropDatabase();
    await Promise.all(stores.map((store) => store.client.close()));
  });

  it(`${WRITERS} concurrent writers into one new series and minute lose nothing`, async () => {
    // Sketches at every level (minutes too), set before the first reading.
    await setMetricStatistics(stores[0]!, 'cpu', { sketchLevels: ['day', 'hour', 'minute'], sketchFields: null, latestReadings: 50 });
    // Multiples of 1/4: every sum and sum of squares below is exact in binary floating point.
    const values = Array.from({ length: WRITERS }, (_, i) => (i % 2 === 0 ? 1 : -1) * (i * 1.5 + 0.25));
    // Seconds of the minute in an order unrelated to the values; readings 0 and 1 share the
    // earliest millisecond, readings 17 and 18 the latest.
    const seconds = values.map((_, i) => (i === 1 ? 0 : i === 18 ? 59 : (i * 7) % 60));
    const times = seconds.map((second) => Date.UTC(2024, 4, 1, 13, 45, second));
    await Promise.all(
      values.map((value, i) => {
        const readings = validateReadings(
          [
            {
              metric: 'cpu',
              tags: [{ key: 'host', value: 'h1' }],
              time: new Date(times[i]!),
              fields: [
                { name: 'usage', value },
                { name: 'count', value: 1 },
              ],
            },
          ],
          { maxBatchSize: 1, receivedAt: 0 },
        );
        return recordBatch(stores[i % STORES]!, readings, { batchId: `w${i}`, receivedAt: 0 });
      }),
    );

    const docs = await stores[0]!.buckets.find({ metric: 'cpu' }).toArray();
    expect(docs).toHaveLength(1);
    const doc = docs[0]!;
    let sum = 0;
    let sq = 0;
    for (const v of values) {
      sum += v;
      sq += v * v;
    }
    const expected = { n: WRITERS, min: Math.min(...values), max: Math.max(...values) };
    for (const stats of [doc.fields.usage, doc.hours['13']?.fields.usage, doc.hours['13']?.minutes['45']?.usage]) {
      expect(stats).toBeDefined();
      expect({ n: stats!.n, min: stats!.min, max: stats!.max }).toEqual(expected);
      expect(stats!.sum).toBe(sum);
      expect(stats!.sq).toBe(sq);
    }
    expect(doc.hours['13']?.minutes['45']?.count?.sum).toBe(WRITERS);
    expect(doc.first).toEqual(new Date(Math.min(...times)));
    expect(doc.last).toEqual(new Date(Math.max(...times)));

    // First and last reading of every level: earliest time (ties: smallest value), latest time (ties: largest value).
    let first = 0;
    let last = 0;
    for (let i = 1; i < WRITERS; i++) {
      if (times[i]! < times[first]! || (times[i] === times[first] && values[i]! < values[first]!)) first = i;
      if (times[i]! > times[last]! || (times[i] === times[last] && values[i]! > values[last]!)) last = i;
    }
    const levels = {
      day: doc.fields.usage,
      hour: doc.hours['13']?.fields.usage,
      minute: doc.hours['13']?.minutes['45']?.usage,
    };
    for (const [level, stats] of Object.entries(levels)) {
      expect({ level, first: stats?.first, last: stats?.last }).toEqual({
        level,
        first: { t: new Date(times[first]!), v: values[first] },
        last: { t: new Date(times[last]!), v: values[last] },
      });
    }

    // Each level's sketch counts every reading once, in bins of the readings' signs (`p…` positive, `m…` negative).
    const positive = values.filter((v) => v > 0).length;
    const sketches = {
      day: doc.q?.fields?.usage,
      hour: doc.q?.hours?.['13']?.fields?.usage,
      minute: doc.q?.hours?.['13']?.minutes?.['45']?.usage,
    };
    for (const [level, bins] of Object.entries(sketches)) {
      expect(bins, level).toBeDefined();
      let total = 0;
      let positives = 0;
      let negatives = 0;
      for (const [key, count] of Object.entries(bins!)) {
        total += count;
        if (key.startsWith('p')) positives += count;
        if (key.startsWith('m')) negatives += count;
      }
      expect({ level, total, positives, negatives }).toEqual({ level, total: WRITERS, positives: positive, negatives: WRITERS - positive });
      expect(bins, level).toEqual(sketches.day);
    }
    expect(Object.values(doc.q?.hours?.['13']?.minutes?.['45']?.count ?? {}).reduce((a, b) => a + b, 0)).toBe(WRITERS);

    // The latest readings: the 50 newest by time, oldest first, and the number of readings.
    expect(doc.readings).toBe(WRITERS);
    const newest = values
      .map((value, i) => ({ t: times[i]!, value }))
      .sort((a, b) => a.t - b.t)
      .slice(-50);
    expect(doc.recent?.length).toBe(50);
    const stored = doc.recent!.map((r) => ({ t: r.t.getTime(), value: r.f.usage, count: r.f.count }));
    expect(stored.map((r) => r.t)).toEqual(newest.map((r) => r.t));
    // Readings of the same millisecond may be kept in either order.
    const byValue = (a: { t: number; value?: number }, b: { t: number; value?: number }) => a.t - b.t || a.value! - b.value!;
    expect([...stored].sort(byValue)).toEqual(newest.map((r) => ({ ...r, count: 1 })).sort(byValue));
    expect(await stores[0]!.series.countDocuments({ metric: 'cpu' })).toBe(1);
    expect(await stores[0]!.metrics.findOne({ _id: 'cpu' })).toMatchObject({ layout, fields: expect.arrayContaining(['usage', 'count']) });
  });

  it('concurrent batches over many minutes and two days sum exactly at every level', async () => {
    const batches = Array.from({ length: 24 }, (_, b) =>
      Array.from({ length: 50 }, (_, i) => ({
        metric: 'mem',
        tags: [{ key: 'host', value: `h${i % 3}` }],
        time: new Date(Date.UTC(2024, 4, 1, 23, 0) + ((b * 50 + i) % 120) * 60_000),
        fields: [{ name: 'used', value: b * 100 + i }],
      })),
    );
    await Promise.all(
      batches.map((batch, b) =>
        recordBatch(stores[b % STORES]!, validateReadings(batch, { maxBatchSize: 50, receivedAt: 0 }), { batchId: `b${b}`, receivedAt: 0 }),
      ),
    );
    const all = batches.flat();
    const docs = await stores[0]!.buckets.find({ metric: 'mem' }).toArray();
    expect(docs).toHaveLength(6); // 3 hosts x 2 days
    for (const doc of docs) {
      const mine = all.filter(
        (r) =>
          `h${r.tags[0]!.value.slice(1)}` === doc.tags.host && r.time.getTime() - (r.time.getTime() % 86_400_000) === doc.date.getTime(),
      );
      expect(doc.fields.used?.n).toBe(mine.length);
      expect(doc.fields.used?.sum).toBe(mine.reduce((s, r) => s + r.fields[0]!.value, 0));
      let hourTotal = 0;
      let minuteTotal = 0;
      for (const hour of Object.values(doc.hours)) {
        hourTotal += hour.fields.used?.n ?? 0;
        for (const minute of Object.values(hour.minutes)) minuteTotal += minute.used?.n ?? 0;
      }
      expect([hourTotal, minuteTotal]).toEqual([mine.length, mine.length]);
    }
  });
});
