/**
 * Atomicity: many writers, several store instances (as several server processes would
 * have), all recording into the same series and minute of a day that has no document
 * yet, each batch acknowledged by its own entry of the ingest log. Queries answer every
 * reading from the log's tail before anything is folded; the store instances then fold
 * at once (one of them holds the lease), and every level must end with exact counts and
 * sums, the earliest and latest reading, sketches counting every reading and the latest
 * readings: no lost reading, no reading folded twice. Writers
 * and folders running at the same time leave several parts per series-day, which add up
 * to exactly the readings sent at every level.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriesId, seriesKey } from '../../src/model/series.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { foldAll, foldOnce } from '../../src/storage/fold.ts';
import { ingestLog } from '../../src/storage/ingest-log.ts';
import { setMetricStatistics } from '../../src/storage/registry.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { randomBytes } from 'node:crypto';
import { testMongoUri } from '../helpers/db.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';
import { latestReadings, seriesReadingTimes } from '../../src/storage/latest.ts';
import { readVisible } from '../../src/storage/fold-state.ts';
import { overWholeDocuments } from '../helpers/pipelines.ts';

const WRITERS = 60;
const STORES = 4;

/** A stored part: a series-day document with the number of the fold that wrote it. */
type Part = SeriesDayDocument & { f?: number };

/**
 * Folds everything from every store instance at once, as several servers' folders would:
 * one holds the lease and folds, the others find it taken.
 * @returns the readings folded, over all of them.
 */
async function foldFromEveryStore(stores: readonly Store[]): Promise<number> {
  const folded = await Promise.all(stores.map((store) => foldAll(store, store.holder)));
  return folded.reduce((a, b) => a + b, 0);
}

describe('concurrent writers and folders', () => {
  let stores: Store[];
  const dbName = `test_atomic_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    // No bounds of the unfolded log: the tests fold themselves (and date their batches at receivedAt 0).
    stores = await Promise.all(
      Array.from({ length: STORES }, () => openStore(testMongoUri(), dbName, { ingest: { maxTailReadings: 0, maxTailSeconds: 0 } })),
    );
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
    const outcomes = await Promise.all(
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
    expect(outcomes.map((outcome) => [outcome.applied, outcome.alreadyApplied])).toEqual(values.map(() => [1, 0]));
    let sum = 0;
    let sq = 0;
    for (const v of values) {
      sum += v;
      sq += v * v;
    }
    const expected = { n: WRITERS, min: Math.min(...values), max: Math.max(...values) };
    const series = seriesId(seriesKey({ metric: 'cpu', tags: [{ key: 'host', value: 'h1' }] }));
    const newest = values
      .map((value, i) => ({ t: times[i]!, value }))
      .sort((a, b) => a.t - b.t)
      .slice(-50);
    // Readings of the same millisecond may be kept in either order.
    const byValue = (a: { t: number; value?: number }, b: { t: number; value?: number }) => a.t - b.t || a.value! - b.value!;

    /** What queries answer, read through a given store instance: every level's statistics, the latest readings and the edges. */
    const expectAnswers = async (store: Store) => {
      const stats = (path: string) => ({
        [`${path}n`]: { $sum: `$${path}.n` },
        [`${path}sum`]: { $sum: `$${path}.sum` },
        [`${path}sq`]: { $sum: `$${path}.sq` },
        [`${path}min`]: { $min: `$${path}.min` },
        [`${path}max`]: { $max: `$${path}.max` },
      });
      const paths = ['fields.usage', 'hours.13.fields.usage', 'hours.13.minutes.45.usage'];
      const [row] = await aggregateBuckets<Record<string, number>>(
        store,
        overWholeDocuments(
          'cpu',
          ['usage', 'count'],
          [{ $group: { _id: null, ...Object.assign({}, ...paths.map(stats)), count: { $sum: '$hours.13.minutes.45.count.sum' } } }],
        ),
        {},
        { metric: 'cpu' },
      );
      for (const path of paths) {
        expect({
          path,
          n: row![`${path}n`],
          sum: row![`${path}sum`],
          sq: row![`${path}sq`],
          min: row![`${path}min`],
          max: row![`${path}max`],
        }).toEqual({
          path,
          n: WRITERS,
          sum,
          sq,
          min: expected.min,
          max: expected.max,
        });
      }
      expect(row!.count).toBe(WRITERS);
      const latest = await latestReadings(store, series, 50);
      expect(latest.map((r) => r.t)).toEqual(newest.map((r) => r.t).reverse());
      expect(latest.map((r) => ({ t: r.t, value: r.f.usage, count: r.f.count })).sort(byValue)).toEqual(
        newest.map((r) => ({ ...r, count: 1 })).sort(byValue),
      );
      expect(await seriesReadingTimes(store, [series], 'first')).toEqual([new Date(Math.min(...times))]);
      expect(await seriesReadingTimes(store, [series], 'last')).toEqual([new Date(Math.max(...times))]);
    };

    // Acknowledged: one log entry per batch, nothing folded, no series-day document yet;
    // every store instance answers every reading from the tail.
    const entries = await ingestLog(stores[0]!).find({ metrics: 'cpu' }).toArray();
    expect(entries.map((entry) => String(entry._id)).sort()).toEqual(values.map((_, i) => `w${i}`).sort());
    expect(entries.every((entry) => entry.readings === 1 && (entry.fold ?? null) === null)).toBe(true);
    expect(await stores[0]!.seriesDays.countDocuments({ metric: 'cpu' })).toBe(0);
    for (const store of stores) await expectAnswers(store);

    // Every instance folds at once: the readings are folded once, by one fold, into one part.
    expect(await foldFromEveryStore(stores)).toBe(WRITERS);
    const visible = await readVisible(stores[0]!);
    expect(await ingestLog(stores[0]!).distinct('fold', { metrics: 'cpu' })).toEqual([visible]);
    const docs = (await stores[0]!.seriesDays.find({ metric: 'cpu' }).toArray()) as Part[];
    expect(docs).toHaveLength(1);
    const doc = docs[0]!;
    expect(doc.f).toBe(visible);
    // Written whole: only the slots that hold readings.
    expect(Object.keys(doc.hours)).toEqual(['13']);
    expect(Object.keys(doc.hours['13']!.minutes ?? {})).toEqual(['45']);
    for (const stats of [doc.fields.usage, doc.hours['13']?.fields.usage, doc.hours['13']?.minutes?.['45']?.usage]) {
      expect(stats).toBeDefined();
      expect({ n: stats!.n, min: stats!.min, max: stats!.max }).toEqual(expected);
      expect(stats!.sum).toBe(sum);
      expect(stats!.sq).toBe(sq);
    }
    expect(doc.hours['13']?.minutes?.['45']?.count?.sum).toBe(WRITERS);
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
      minute: doc.hours['13']?.minutes?.['45']?.usage,
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
    expect(doc.recent?.length).toBe(50);
    const stored = doc.recent!.map((r) => ({ t: r.t.getTime(), value: r.f.usage, count: r.f.count }));
    expect(stored.map((r) => r.t)).toEqual(newest.map((r) => r.t));
    expect([...stored].sort(byValue)).toEqual(newest.map((r) => ({ ...r, count: 1 })).sort(byValue));
    expect(await stores[0]!.series.countDocuments({ metric: 'cpu' })).toBe(1);
    expect(await stores[0]!.metrics.findOne({ _id: 'cpu' })).toMatchObject({ fields: expect.arrayContaining(['usage', 'count']) });

    // The same answers from the folded part, and the batches sent again are recognised without writing.
    for (const store of stores) await expectAnswers(store);
    const again = await Promise.all(
      values.map((value, i) =>
        recordBatch(
          stores[(i + 1) % STORES]!,
          validateReadings(
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
          ),
          { batchId: `w${i}`, receivedAt: 0 },
        ),
      ),
    );
    expect(again.map((outcome) => [outcome.applied, outcome.alreadyApplied])).toEqual(values.map(() => [0, 1]));
    expect(await ingestLog(stores[0]!).countDocuments({ metrics: 'cpu' })).toBe(WRITERS);
    expect(await foldFromEveryStore(stores)).toBe(0);
    expect(await stores[0]!.seriesDays.countDocuments({ metric: 'cpu' })).toBe(1);
    await expectAnswers(stores[1]!);
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
    const all = batches.flat();
    const dayOf = (ms: number) => ms - (ms % 86_400_000);
    // By a plain loop: count and sum per series-day (`host|day`) at the day level, and per
    // hour and minute slot (`host|day|hour` and `host|day|hour|minute`).
    const loop = new Map<string, { n: number; sum: number }>();
    const add = (key: string, value: number) => {
      const acc = loop.get(key) ?? { n: 0, sum: 0 };
      acc.n += 1;
      acc.sum += value;
      loop.set(key, acc);
    };
    for (const r of all) {
      const ms = r.time.getTime();
      const day = `${r.tags[0]!.value}|${dayOf(ms)}`;
      add(day, r.fields[0]!.value);
      add(`${day}|${r.time.getUTCHours()}`, r.fields[0]!.value);
      add(`${day}|${r.time.getUTCHours()}|${r.time.getUTCMinutes()}`, r.fields[0]!.value);
    }
    expect([...loop.keys()].filter((key) => key.split('|').length === 2)).toHaveLength(6); // 3 hosts x 2 days

    // Writers in two waves, every store instance folding all the while (one holds the
    // lease, the others find it taken); the first wave is folded completely before the
    // second, so every series-day gets parts of at least two folds. The last 4 batches
    // are sent once the folders stopped: they are in the tail for the first check.
    let writing = true;
    const folders = stores.map(async (store) => {
      while (writing) {
        await foldOnce(store, store.holder);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    const send = (from: number, to: number) =>
      Promise.all(
        batches.slice(from, to).map((batch, i) =>
          recordBatch(stores[(from + i) % STORES]!, validateReadings(batch, { maxBatchSize: 50, receivedAt: 0 }), {
            batchId: `b${from + i}`,
            receivedAt: 0,
          }),
        ),
      );
    const unfolded = () => ingestLog(stores[0]!).countDocuments({ metrics: 'mem', fold: null });
    try {
      await send(0, 12);
      // Folded completely before the second wave. One call is not enough: the holder's own
      // folder may be under way with the same lease, and then its foldAll returns at once.
      for (let round = 0; round < 200 && (await unfolded()) > 0; round++) {
        await foldFromEveryStore(stores);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await unfolded()).toBe(0);
      await send(12, 20);
    } finally {
      writing = false;
      await Promise.all(folders);
    }
    await send(20, 24);
    expect(await ingestLog(stores[0]!).countDocuments({ metrics: 'mem', fold: null })).toBeGreaterThanOrEqual(4);

    /** Count and sum per series-day, hour and minute as queries read them (visible parts plus the tail), keyed as the loop's. */
    const answered = async (store: Store) => {
      const rows = await aggregateBuckets<{
        _id: { host: string; date: Date };
        n: number;
        sum: number;
        hours: Record<string, SeriesDayDocument['hours'][string]>[];
        raw: NonNullable<SeriesDayDocument['r']>[];
      }>(
        store,
        overWholeDocuments(
          'mem',
          ['used'],
          [
            {
              $group: {
                _id: { host: '$tags.host', date: '$date' },
                n: { $sum: '$fields.used.n' },
                sum: { $sum: '$fields.used.sum' },
                hours: { $push: { $ifNull: ['$hours', {}] } },
                // Documents in the raw form keep their readings instead of slots.
                raw: { $push: { $ifNull: ['$r', []] } },
              },
            },
          ],
        ),
        {},
        { metric: 'mem' },
      );
      const got = new Map<string, { n: number; sum: number }>();
      const put = (key: string, n: number, sum: number) => {
        const acc = got.get(key) ?? { n: 0, sum: 0 };
        acc.n += n;
        acc.sum += sum;
        got.set(key, acc);
      };
      for (const row of rows) {
        const day = `${row._id.host}|${row._id.date.getTime()}`;
        put(day, row.n, row.sum);
        for (const hours of row.hours) {
          for (const [hour, slot] of Object.entries(hours)) {
            put(`${day}|${hour}`, slot.fields.used!.n, slot.fields.used!.sum);
            for (const [minute, stats] of Object.entries(slot.minutes ?? {}))
              put(`${day}|${hour}|${minute}`, stats.used!.n, stats.used!.sum);
            // Packed minutes (`mc`): each minute's count and sum at its index.
            slot.mc?.n.forEach((n, minute) => {
              if (n > 0) put(`${day}|${hour}|${minute}`, n, slot.mc!.f.used!.sum[minute]!);
            });
          }
        }
        for (const readings of row.raw) {
          for (const reading of readings) {
            const value = reading.f.used!;
            put(`${day}|${reading.t.getUTCHours()}`, 1, value);
            put(`${day}|${reading.t.getUTCHours()}|${reading.t.getUTCMinutes()}`, 1, value);
          }
        }
      }
      return got;
    };
    // Before the last fold: folded parts and the tail together answer exactly.
    for (const store of stores) expect(await answered(store)).toEqual(loop);

    await foldFromEveryStore(stores);
    const entries = await ingestLog(stores[0]!).find({ metrics: 'mem' }).toArray();
    const visible = await readVisible(stores[0]!);
    expect(entries).toHaveLength(24);
    expect(entries.every((entry) => typeof entry.fold === 'number' && entry.fold <= visible)).toBe(true);
    expect(entries.reduce((n, entry) => n + entry.readings, 0)).toBe(all.length);

    // The parts: several per series-day, one per fold that took its readings, adding up to the loop at every level.
    const docs = (await stores[0]!.seriesDays.find({ metric: 'mem' }).toArray()) as Part[];
    const partsOf = new Map<string, Part[]>();
    for (const doc of docs) {
      const key = `${doc.tags.host}|${doc.date.getTime()}`;
      partsOf.set(key, [...(partsOf.get(key) ?? []), doc]);
    }
    expect(partsOf.size).toBe(6);
    for (const [key, parts] of partsOf) {
      expect(parts.length, key).toBeGreaterThanOrEqual(2);
      const folds = parts.map((part) => part.f!);
      expect(new Set(folds).size, key).toBe(parts.length);
      expect(folds.every((f) => f >= 1 && f <= visible)).toBe(true);
      const foldsOfDay = new Set(
        entries
          .filter((entry) =>
            batches[Number(String(entry._id).slice(1))]!.some((r) => `${r.tags[0]!.value}|${dayOf(r.time.getTime())}` === key),
          )
          .map((entry) => entry.fold),
      );
      expect(new Set(folds), key).toEqual(foldsOfDay);
    }
    const stored = new Map<string, { n: number; sum: number }>();
    const put = (key: string, n: number, sum: number) => {
      const acc = stored.get(key) ?? { n: 0, sum: 0 };
      acc.n += n;
      acc.sum += sum;
      stored.set(key, acc);
    };
    for (const doc of docs) {
      const day = `${doc.tags.host}|${doc.date.getTime()}`;
      put(day, doc.fields.used!.n, doc.fields.used!.sum);
      expect(doc.readings).toBe(doc.fields.used!.n);
      for (const reading of doc.r ?? []) {
        put(`${day}|${reading.t.getUTCHours()}`, 1, reading.f.used!);
        put(`${day}|${reading.t.getUTCHours()}|${reading.t.getUTCMinutes()}`, 1, reading.f.used!);
      }
      for (const [hour, slot] of Object.entries(doc.hours ?? {})) {
        put(`${day}|${hour}`, slot.fields.used!.n, slot.fields.used!.sum);
        for (const [minute, stats] of Object.entries(slot.minutes ?? {})) put(`${day}|${hour}|${minute}`, stats.used!.n, stats.used!.sum);
        slot.mc?.n.forEach((n, minute) => {
          if (n > 0) put(`${day}|${hour}|${minute}`, n, slot.mc!.f.used!.sum[minute]!);
        });
      }
    }
    expect(stored).toEqual(loop);
    // And the same answers from the parts alone.
    for (const store of stores) expect(await answered(store)).toEqual(loop);
    expect(await stores[0]!.series.countDocuments({ metric: 'mem' })).toBe(3);
  });
});
