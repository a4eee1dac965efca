/**
 * Two server instances on one database, each with its own cache of the series it has
 * registered: a deletion made through one must not leave the other writing series-day
 * documents that the series registry does not list (grouped queries and the series list
 * find series through the registry).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const ONE_HOUR = 3_600_000;

describe('series registrations cached by another instance', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    // A cache time far longer than the test: only the registry generation can make A register again.
    a = await openTestApp('registry_cache', { registryCacheTtlMs: ONE_HOUR });
    b = await openTestApp('registry_cache', { registryCacheTtlMs: ONE_HOUR, database: a.store.db.databaseName });
  });

  afterAll(async () => {
    await b.store.client.close();
    await a.close();
  });

  const record = (app: TestApp, metric: string, host: string, value: number) =>
    app.graphql<{ recordReadings: { recorded: number } }>(
      `mutation ($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`,
      { readings: [{ metric, tags: [{ key: 'host', value: host }], time: '2024-01-01T10:00:00Z', fields: [{ name: 'v', value }] }] },
    );

  const byHost = async (app: TestApp, metric: string) => {
    const answer = await app.graphql<{ aggregate: { tags: { key: string; value: string }[]; count: number; sum: number }[] }>(
      `{ aggregate(metric: "${metric}", field: "v", from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z", groupBy: ["host"]) { tags { key value } count sum } }`,
    );
    expect(answer.errors).toBeUndefined();
    return answer.data!.aggregate.map((row) => [row.tags[0]!.value, row.count, row.sum]);
  };

  const seriesList = async (app: TestApp, metric: string) => {
    const answer = await app.graphql<{ series: { tags: { value: string }[] }[] }>(`{ series(metric: "${metric}") { tags { value } } }`);
    expect(answer.errors).toBeUndefined();
    return answer.data!.series.map((series) => series.tags[0]!.value).sort();
  };

  it('registers a series again after another instance deleted its metric', async () => {
    expect((await record(a, 'cache_metric', 'h1', 5)).data?.recordReadings.recorded).toBe(1);
    const deleted = await b.graphql<{ deleteMetric: { series: number } }>(`mutation { deleteMetric(metric: "cache_metric") { series } }`);
    expect(deleted.data?.deleteMetric.series).toBe(1);
    expect((await record(a, 'cache_metric', 'h1', 7)).data?.recordReadings.recorded).toBe(1);

    expect(await b.store.series.countDocuments({ metric: 'cache_metric' })).toBe(1);
    expect(await byHost(b, 'cache_metric')).toEqual([['h1', 1, 7]]);
    expect(await seriesList(b, 'cache_metric')).toEqual(['h1']);
  });

  it('registers a series again after another instance deleted the series', async () => {
    await record(a, 'cache_series', 'h1', 1);
    await record(a, 'cache_series', 'h2', 2);
    const deleted = await b.graphql<{ deleteSeries: { series: number } }>(
      `mutation { deleteSeries(id: "cache_series,host=h1") { series } }`,
    );
    expect(deleted.errors).toBeUndefined();
    expect(deleted.data?.deleteSeries.series).toBe(1);
    await record(a, 'cache_series', 'h1', 10);

    expect(await b.store.series.countDocuments({ metric: 'cache_series' })).toBe(2);
    expect(await byHost(b, 'cache_series')).toEqual([
      ['h1', 1, 10],
      ['h2', 1, 2],
    ]);
    expect(await seriesList(b, 'cache_series')).toEqual(['h1', 'h2']);
  });
});
