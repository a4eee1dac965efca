/**
 * The series limit per metric (`MAX_SERIES_PER_METRIC`, docs/access-and-limits.md,
 * "Cardinality"): a write that would give a metric more series is refused with
 * TOO_MANY_SERIES and writes nothing, through GraphQL and line protocol alike; series
 * already registered and other metrics are not held back; a deleted series frees its
 * place; an entry made before the count existed is counted from the registry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

const LIMIT = 10;
const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const T0 = Date.UTC(2024, 5, 1);

/** One reading of metric `metric` for each host of `hosts`. */
const readings = (metric: string, hosts: readonly string[], minute = 0) =>
  hosts.map((host) => ({
    metric,
    tags: [{ key: 'host', value: host }],
    time: new Date(T0 + minute * 60_000).toISOString(),
    fields: [{ name: 'load', value: 1 }],
  }));
const hosts = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `h${from + i}`);

describe('series limit per metric', { timeout: 120_000 }, () => {
  let t: TestApp;
  const record = (batch: ReturnType<typeof readings>) => t.graphql<{ recordReadings: { recorded: number } }>(RECORD, { readings: batch });
  const seriesOf = (metric: string) => t.store.series.countDocuments({ metric });
  /** Expects `write` to be refused with TOO_MANY_SERIES and to leave the database as it was. */
  const expectRefused = async (write: () => Promise<string | undefined>) => {
    const before = await databaseSnapshot(t.store.db);
    expect(await write()).toBe('TOO_MANY_SERIES');
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  };

  beforeAll(async () => {
    t = await openTestApp('series_limit', { maxSeriesPerMetric: LIMIT, journal: false });
  });
  afterAll(async () => t?.close());

  it('refuses a batch that would pass the limit, whole, and keeps taking known series and other metrics', async () => {
    expect((await record(readings('cpu', hosts(0, 8)))).errors).toBeUndefined();
    expect(await seriesOf('cpu')).toBe(8);
    // 3 new series with known ones: 11 in all.
    await expectRefused(async () => (await record(readings('cpu', hosts(5, 11), 1))).errors?.[0]?.extensions?.code);
    const refused = await record(readings('cpu', hosts(5, 11), 1));
    expect(refused.errors?.[0]?.message).toBe(
      'Metric "cpu" would have 11 series; a metric may have at most 10 (MAX_SERIES_PER_METRIC); nothing of the batch was written',
    );
    // Up to the limit, known series, and a metric of its own.
    expect((await record(readings('cpu', hosts(6, 10), 2))).errors).toBeUndefined();
    expect((await record(readings('cpu', hosts(0, 10), 3))).errors).toBeUndefined();
    expect((await record(readings('mem', hosts(0, 10), 3))).errors).toBeUndefined();
    expect([await seriesOf('cpu'), await seriesOf('mem')]).toEqual([10, 10]);
    expect((await t.store.metrics.findOne({ _id: 'cpu' }))?.seriesCount).toBe(10);
    await expectRefused(async () => (await record(readings('cpu', ['h99'], 4))).errors?.[0]?.extensions?.code);
  });

  it('refuses line protocol the same way, with HTTP 400', async () => {
    await expectRefused(async () => {
      const response = await t.app.fetch('http://yoga/api/v2/write?org=o&bucket=b&precision=s', {
        method: 'POST',
        body: `cpu,host=h42 load=1 ${T0 / 1000 + 300}\n`,
      });
      expect(response.status).toBe(400);
      return ((await response.json()) as { extensions?: { code?: string } }).extensions?.code;
    });
  });

  it('frees the place of a deleted series, and counts an entry without a count from the registry', async () => {
    const deleted = await t.graphql(`mutation { deleteSeries(id: "cpu,host=h0") { series } }`);
    expect(deleted.errors).toBeUndefined();
    expect((await t.store.metrics.findOne({ _id: 'cpu' }))?.seriesCount).toBe(9);
    expect((await record(readings('cpu', ['h10'], 5))).errors).toBeUndefined();
    expect(await seriesOf('cpu')).toBe(10);
    // As an entry made before the count existed: counted from the registry (10), so one more is refused.
    await t.store.metrics.updateOne({ _id: 'cpu' }, { $unset: { seriesCount: '' } });
    await expectRefused(async () => (await record(readings('cpu', ['h11'], 6))).errors?.[0]?.extensions?.code);
    await t.store.metrics.updateOne({ _id: 'mem' }, { $unset: { seriesCount: '' } });
    expect((await t.graphql(`mutation { deleteSeries(id: "mem,host=h0") { series } }`)).errors).toBeUndefined();
    expect((await record(readings('mem', ['h20'], 6))).errors).toBeUndefined();
    expect((await t.store.metrics.findOne({ _id: 'mem' }))?.seriesCount).toBe(10);
  });
});
