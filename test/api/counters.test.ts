/**
 * Declaring counters over GraphQL (`setMetricKind`, `Metric.kind`): the scope, metric
 * prefix and name checks with their codes, nothing written when refused; and what a
 * counter query costs against MAX_BUCKETS (one more bucket per series and bucket).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { createTokens, useTokensOnce } from '../helpers/tokens.ts';

const SET_KIND = `mutation($metric: String!, $kind: MetricKind!) { setMetricKind(metric: $metric, kind: $kind) { name kind } }`;
const codeOf = (response: GraphQLResponse<unknown>) => response.errors?.[0]?.extensions?.code;

describe('setMetricKind', () => {
  let t: TestApp;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    t = await openTestApp('counters_api', { auth: 'tokens' });
    tokens = await createTokens(t.store, [
      ['admin', 'admin', []],
      ['reader', 'read', []],
      ['writer', 'write', []],
      ['cpu-admin', 'admin', ['cpu']],
    ]);
    // First use of each token records lastUsedAt: done before any snapshot.
    await useTokensOnce(t, tokens);
  });
  afterAll(async () => t.close());

  /** Runs `request`, expects it refused with `code` (and `inputPath` when given) and the database exactly as before. */
  async function expectRefused(code: string, request: () => Promise<GraphQLResponse<unknown>>, inputPath?: string): Promise<void> {
    const before = await databaseSnapshot(t.store.db);
    const response = await request();
    expect(codeOf(response)).toBe(code);
    if (inputPath !== undefined) expect(response.errors?.[0]?.extensions?.inputPath).toBe(inputPath);
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  }

  it('refuses tokens without the admin scope, or without the metric among their prefixes: FORBIDDEN, nothing written', async () => {
    for (const token of [tokens.reader, tokens.writer]) {
      await expectRefused('FORBIDDEN', () => t.graphql(SET_KIND, { metric: 'cpu_requests', kind: 'COUNTER' }, { token }));
    }
    await expectRefused('FORBIDDEN', () =>
      t.graphql(SET_KIND, { metric: 'mem_requests', kind: 'COUNTER' }, { token: tokens['cpu-admin'] }),
    );
    await expectRefused('UNAUTHENTICATED', () => t.graphql(SET_KIND, { metric: 'cpu_requests', kind: 'COUNTER' }, { token: null }));
  });

  it('refuses a bad metric name with INVALID_NAME and an unknown kind, nothing written', async () => {
    await expectRefused(
      'INVALID_NAME',
      () => t.graphql(SET_KIND, { metric: 'no$metric', kind: 'COUNTER' }, { token: tokens.admin }),
      'metric',
    );
    await expectRefused('INVALID_NAME', () => t.graphql(SET_KIND, { metric: '', kind: 'COUNTER' }, { token: tokens.admin }), 'metric');
    await expectRefused('BAD_USER_INPUT', () => t.graphql(SET_KIND, { metric: 'cpu_requests', kind: 'RATE' }, { token: tokens.admin }));
    await expectRefused('GRAPHQL_VALIDATION_FAILED', () =>
      t.graphql('mutation { setMetricKind(metric: "cpu_requests", kind: TOTAL) { kind } }', {}, { token: tokens.admin }),
    );
  });

  it('declares a counter, creating the metric, and declares it a gauge again; a metric never declared is a gauge', async () => {
    const declared = await t.graphql(SET_KIND, { metric: 'cpu_requests', kind: 'COUNTER' }, { token: tokens['cpu-admin'] });
    expect(declared).toEqual({ data: { setMetricKind: { name: 'cpu_requests', kind: 'COUNTER' } } });
    const entry = await t.store.metrics.findOne({ _id: 'cpu_requests' });
    expect(entry).toMatchObject({ kind: 'counter', fields: [], tagKeys: [] });
    expect(entry).not.toHaveProperty('layout');
    // Idempotent: the same answer, the same entry.
    expect(await t.graphql(SET_KIND, { metric: 'cpu_requests', kind: 'COUNTER' }, { token: tokens.admin })).toEqual(declared);
    expect(await t.store.metrics.findOne({ _id: 'cpu_requests' })).toEqual(entry);

    const recorded = await t.graphql(
      'mutation { recordReading(reading: {metric: "cpu_usage", fields: [{name: "user", value: 1}]}) { recorded } }',
      {},
      { token: tokens.writer },
    );
    expect(recorded.errors).toBeUndefined();
    const kinds = await t.graphql(
      '{ a: metric(name: "cpu_requests") { kind } b: metric(name: "cpu_usage") { kind } }',
      {},
      { token: tokens.reader },
    );
    expect(kinds).toEqual({ data: { a: { kind: 'COUNTER' }, b: { kind: 'GAUGE' } } });

    const back = await t.graphql(SET_KIND, { metric: 'cpu_requests', kind: 'GAUGE' }, { token: tokens.admin });
    expect(back).toEqual({ data: { setMetricKind: { name: 'cpu_requests', kind: 'GAUGE' } } });
  });
});

describe('what a counter query costs', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await openTestApp('counters_cost', { maxBuckets: 100 });
    expect((await t.graphql(SET_KIND, { metric: 'served', kind: 'COUNTER' })).errors).toBeUndefined();
    const readings = ['a', 'b', 'c'].map((host, i) => ({
      metric: 'served',
      tags: [{ key: 'host', value: host }],
      time: '2024-01-01T06:00:00Z',
      fields: [{ name: 'n', value: i }],
    }));
    expect(
      (await t.graphql('mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }', { r: readings })).errors,
    ).toBeUndefined();
  });
  afterAll(async () => t.close());

  const hourly = (to: string, selection: string) =>
    `{ buckets(metric: "served", field: "n", granularity: HOUR, from: "2024-01-01", to: "${to}") { buckets { ${selection} } } }`;

  it('counts one more bucket per series and bucket for the increase: TOO_MANY_BUCKETS where the plain query fits', async () => {
    // One day: 24 buckets, and 3 series x 24 for the increase: 96 of 100.
    expect((await t.graphql(hourly('2024-01-02', 'count increase'))).errors).toBeUndefined();
    // Two days: 48 buckets fit, 48 + 3 x 48 do not.
    expect((await t.graphql(hourly('2024-01-03', 'count'))).errors).toBeUndefined();
    const refused = await t.graphql(hourly('2024-01-03', 'count rate'));
    expect(codeOf(refused)).toBe('TOO_MANY_BUCKETS');
    expect(refused.errors?.[0]?.message).toContain('3 series x 48 buckets');
    // The same through the statistic and through columns.
    const statistic =
      '{ buckets(metric: "served", field: "n", granularity: HOUR, from: "2024-01-01", to: "2024-01-03", statistic: INCREASE) { buckets { value } } }';
    expect(codeOf(await t.graphql(statistic))).toBe('TOO_MANY_BUCKETS');
    const columns =
      '{ buckets(metric: "served", field: "n", granularity: HOUR, from: "2024-01-01", to: "2024-01-03") { columns { increase } } }';
    expect(codeOf(await t.graphql(columns))).toBe('TOO_MANY_BUCKETS');
  });
});
