/**
 * The chart chain as the engine runs it, on the database: bucket pipeline, shaping of
 * the buckets with readings, fill, transform, and the comparison with the day before;
 * against the same answer computed here from the raw readings.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { bucketsPipeline, type BucketRow } from '../../src/query/buckets-pipeline.ts';
import { fillBuckets, type FillMode } from '../../src/query/fill.ts';
import { granularity } from '../../src/query/granularity.ts';
import { compareWithPrevious, shiftedRange } from '../../src/query/offset.ts';
import { shapeBucketGroups } from '../../src/query/shape.ts';
import { transformBuckets, type Statistic, type Transform } from '../../src/query/transforms.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { closeTo } from '../helpers/reference.ts';
import { testMongoUri } from '../helpers/db.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const HOSTS = ['h1', 'h2'];

/** Readings of two hosts over two days, every 7 to 97 minutes, integer loads; none between 05:00 and 08:00 on either day. */
function readings() {
  const out: { host: string; time: number; load: number }[] = [];
  let seed = 42;
  const next = () => (seed = (seed * 48_271) % 2_147_483_647);
  for (const host of HOSTS) {
    for (let t = Date.UTC(2001, 0, 1); t < Date.UTC(2001, 0, 3); t += (7 + (next() % 91)) * MINUTE) {
      const hour = new Date(t).getUTCHours();
      if (hour >= 5 && hour < 8) continue;
      out.push({ host, time: t, load: next() % 100 });
    }
  }
  return out;
}
const RAW = readings();

/** The hour spans of `[from, to)`: from the hour holding `from` up to the last one starting before `to`. */
const hourSpans = (from: number, to: number) => {
  const spans: { start: Date; end: Date; partial: boolean; localStart: string }[] = [];
  for (let t = from - (from % HOUR); t < to; t += HOUR)
    spans.push({ start: new Date(t), end: new Date(t + HOUR), partial: false, localStart: new Date(t).toISOString() });
  return spans;
};

/** Reference: per span, the mean load of `host` in the part of the span inside the range (null when none). */
function referenceMeans(host: string, range: { from: number; to: number }) {
  return hourSpans(range.from, range.to).map(({ start, end }) => {
    const lo = Math.max(start.getTime(), range.from);
    const hi = Math.min(end.getTime(), range.to);
    const loads = RAW.filter((r) => r.host === host && r.time >= lo && r.time < hi).map((r) => r.load);
    return loads.length === 0 ? null : loads.reduce((s, v) => s + v, 0) / loads.length;
  });
}

/** Reference LINEAR fill by index (hour spans are equally long), then a moving average of 3 non-null values. */
function referenceChart(means: (number | null)[]) {
  const filled = means.map((v, i) => {
    if (v !== null) return v;
    let a = i - 1;
    while (a >= 0 && means[a] === null) a--;
    let b = i + 1;
    while (b < means.length && means[b] === null) b++;
    if (a < 0 || b >= means.length) return null;
    return (means[a]! * (b - i) + means[b]! * (i - a)) / (b - a);
  });
  return filled.map((v, i) => {
    if (v === null) return null;
    const window = filled
      .slice(0, i + 1)
      .filter((x): x is number => x !== null)
      .slice(-3);
    return window.reduce((s, x) => s + x, 0) / window.length;
  });
}

describe('fill, transform and comparison on pipeline results', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(testMongoUri(), `test_chart_${randomBytes(4).toString('hex')}`);
    const inputs = RAW.map((r) => ({
      metric: 'cpu',
      tags: [{ key: 'host', value: r.host }],
      time: new Date(r.time),
      fields: [{ name: 'load', value: r.load }],
    }));
    await recordBatch(store, validateReadings(inputs, { maxBatchSize: inputs.length, receivedAt: 0 }), { receivedAt: 0 });
  });
  afterAll(async () => {
    await store.db.dropDatabase();
    await store.client.close();
  });

  /** The engine's chain for one period: pipeline, shaping (buckets with readings), fill, transform; by host. */
  async function chart(range: { from: number; to: number }, fill: FillMode, transform: Transform, statistic: Statistic = 'avg') {
    const hourly = granularity('HOUR');
    const rows = await aggregateBuckets<BucketRow>(
      store,
      bucketsPipeline({
        scope: { metric: 'cpu' },
        fields: ['load'],
        ...range,
        granularity: hourly,
        grouping: { by: 'tags', keys: ['host'] },
      }),
    );
    const groups = shapeBucketGroups(rows, { ...range, cut: hourly.cut, fill: 'NONE', groupBy: ['host'] });
    const spans = hourSpans(range.from, range.to);
    return {
      spans,
      byHost: new Map(
        groups.map((group) => [
          group.tags[0]!.value,
          transformBuckets(fillBuckets(spans, group.buckets, fill), { statistic, transform, range }),
        ]),
      ),
    };
  }

  it('LINEAR fill, 3-bucket moving average of avg, compared with the day before, ragged range', async () => {
    const range = { from: Date.UTC(2001, 0, 2, 0, 30), to: Date.UTC(2001, 0, 2, 12, 0) };
    const earlier = shiftedRange(range, { amount: 1, unit: 'DAY' });
    expect(earlier).toEqual({ from: Date.UTC(2001, 0, 1, 0, 30), to: Date.UTC(2001, 0, 1, 12, 0) });
    const transform: Transform = { kind: 'movingAverage', window: 3 };
    const now = await chart(range, 'LINEAR', transform);
    const before = await chart(earlier, 'LINEAR', transform);
    for (const host of HOSTS) {
      const compared = compareWithPrevious(
        { spans: now.spans, buckets: now.byHost.get(host)! },
        { spans: before.spans, buckets: before.byHost.get(host)! },
      );
      const expectedNow = referenceChart(referenceMeans(host, range));
      const expectedBefore = referenceChart(referenceMeans(host, earlier));
      const means = referenceMeans(host, range);
      expect(compared).toHaveLength(12);
      // The gap 05:00 to 08:00 is filled, and marked so.
      expect(compared.map((b) => b.filled)).toEqual(means.map((m) => m === null));
      expect(compared.slice(5, 8).every((b) => b.filled && b.count === 0 && b.avg !== null)).toBe(true);
      compared.forEach((b, i) => {
        const [v, p] = [expectedNow[i]!, expectedBefore[i]!];
        expect(closeTo(b.value, v), `value ${i}`).toBe(true);
        expect(closeTo(b.previous, p), `previous ${i}`).toBe(true);
        expect(closeTo(b.change, v === null || p === null ? null : v - p), `change ${i}`).toBe(true);
        expect(b.previousStart).toEqual(before.spans[i]!.start);
      });
      // Some values of either day are null (no readings yet at the start of the range).
      expect(expectedBefore.some((p) => p === null) || expectedNow.some((v) => v === null)).toBe(true);
    }
  });

  it('rate of count over a ragged range: readings per second of the part of each hour inside it', async () => {
    const range = { from: Date.UTC(2001, 0, 1, 10, 45), to: Date.UTC(2001, 0, 1, 13, 20) };
    const { byHost } = await chart(range, 'ZERO', { kind: 'rate' }, 'count');
    const rates = byHost.get('h1')!.map((b) => b.value);
    const spans = hourSpans(range.from, range.to);
    const expected = spans.map(({ start, end }) => {
      const lo = Math.max(start.getTime(), range.from);
      const hi = Math.min(end.getTime(), range.to);
      const count = RAW.filter((r) => r.host === 'h1' && r.time >= lo && r.time < hi).length;
      return count / ((hi - lo) / 1000);
    });
    expect(rates).toHaveLength(4);
    rates.forEach((rate, i) => {
      expect(closeTo(rate, expected[i]!), `rate ${i}`).toBe(true);
    });
    expect(expected.some((rate) => rate > 0)).toBe(true);
  });
});
