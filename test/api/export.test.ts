/**
 * `GET /export`: a CSV (or NDJSON) export equals the GraphQL answer to the same query
 * value by value, times in the requested zone; it runs under the same token, scopes and
 * limits as `/graphql`, and refuses mutations and queries that make no table.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/manage.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

let t: TestApp;
const tokens: Record<string, string> = {};
const HOSTS = ['web "1", east', 'web-2'];
const FROM = '2024-03-09T00:00:00-05:00';
const TO = '2024-03-12T00:00:00-04:00';

beforeAll(async () => {
  t = await openTestApp('export', { auth: 'tokens', journal: false, maxBuckets: 2000 });
  for (const [name, scopes] of [
    ['admin', 'admin'],
    ['reader', 'read'],
    ['writer', 'write'],
  ] as const) {
    tokens[name] = (await createApiToken(t.store, { name, scopes: [scopes], prefixes: [] })).token;
  }
  // Two hosts, a reading every 50 minutes over three New York days around the change to daylight saving time.
  const start = Date.parse(FROM);
  const readings = [];
  for (let i = 0; start + i * 3_000_000 < Date.parse(TO); i++) {
    readings.push({
      metric: 'ex_cpu',
      tags: [{ key: 'host', value: HOSTS[i % 2]! }],
      time: new Date(start + i * 3_000_000).toISOString(),
      fields: [{ name: 'usage', value: (i % 17) * 1.5 }],
    });
  }
  const recorded = await t.graphql(
    `mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`,
    { r: readings },
    { token: tokens.admin },
  );
  expect(recorded.errors).toBeUndefined();
  for (const token of Object.values(tokens)) expect((await t.graphql('{ __typename }', {}, { token })).errors).toBeUndefined();
});
afterAll(async () => t.close());

/** GETs /export with the given parameters; returns the status, headers and body text. */
async function exportOf(parameters: Record<string, unknown>, options: { token?: string | null; accept?: string } = {}) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(parameters)) search.set(key, typeof value === 'string' ? value : JSON.stringify(value));
  const token = options.token === undefined ? tokens.reader : options.token;
  const response = await t.app.fetch(`http://yoga/export?${search}`, {
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(options.accept ? { accept: options.accept } : {}) },
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const BUCKETS = `query($from: Time!, $to: Time!, $granularity: Granularity!, $tz: String) {
  buckets(metric: "ex_cpu", field: "usage", granularity: $granularity, from: $from, to: $to, groupBy: ["host"], timeZone: $tz) {
    granularity
    tags { key value }
    buckets { start end localStart count sum min max avg first { time value } partial filled }
  }
}`;

interface Bucket {
  start: string;
  end: string;
  localStart: string;
  count: number;
  sum: number | null;
  min: number | null;
  max: number | null;
  avg: number | null;
  first: { time: string; value: number } | null;
  partial: boolean;
  filled: boolean;
}

/** The cell a GraphQL value should become: numbers and booleans as text, null as an empty cell. */
const cell = (value: unknown) => (value === null || value === undefined ? '' : String(value));

describe('a CSV export equals the GraphQL answer value by value', () => {
  it.each([
    ['HOUR', 'America/New_York'],
    ['DAY', 'America/New_York'],
    ['MINUTE', 'UTC'],
  ])('buckets at %s in %s', async (granularity, zone) => {
    const variables =
      granularity === 'MINUTE'
        ? { from: '2024-03-10T05:00:00Z', to: '2024-03-10T10:00:00Z', granularity, tz: zone }
        : { from: FROM, to: TO, granularity, tz: zone };
    const answer = await t.graphql<{ buckets: { granularity: string; tags: { key: string; value: string }[]; buckets: Bucket[] }[] }>(
      BUCKETS,
      variables,
      {
        token: tokens.reader,
      },
    );
    expect(answer.errors).toBeUndefined();
    const response = await exportOf({ query: BUCKETS, variables, format: 'csv', timeZone: zone });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const [header, ...rows] = parse(response.text) as string[][];
    expect(header).toEqual([
      'granularity',
      'host',
      'start',
      'end',
      'localStart',
      'count',
      'sum',
      'min',
      'max',
      'avg',
      'first.time',
      'first.value',
      'partial',
      'filled',
    ]);
    const expected: string[][] = [];
    for (const group of answer.data!.buckets) {
      for (const bucket of group.buckets) {
        expected.push([
          group.granularity,
          group.tags[0]!.value,
          bucket.localStart,
          bucket.end,
          bucket.localStart,
          cell(bucket.count),
          cell(bucket.sum),
          cell(bucket.min),
          cell(bucket.max),
          cell(bucket.avg),
          bucket.first?.time ?? '',
          cell(bucket.first?.value),
          cell(bucket.partial),
          cell(bucket.filled),
        ]);
      }
    }
    expect(rows.length).toBe(expected.length);
    expect(rows.length).toBeGreaterThan(granularity === 'MINUTE' ? 500 : 2);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const want = expected[i]!;
      // Times: the same instants, written in the export's zone (start as the bucket's own localStart).
      for (const column of [3, 10]) {
        expect(row[column] === '' ? '' : Date.parse(row[column]!)).toBe(want[column] === '' ? '' : Date.parse(want[column]!));
        if (zone === 'America/New_York' && row[column] !== '') expect(row[column]).toMatch(/-0[45]:00$/);
        if (zone === 'UTC' && row[column] !== '') expect(row[column]).toMatch(/\+00:00$/);
        row[column] = want[column]!;
      }
      expect(row).toEqual(want);
    }
  });

  it('aggregates as NDJSON by Accept, tags as columns, numbers as numbers', async () => {
    const query = `query Totals($from: Time!, $to: Time!) { aggregate(metric: "ex_cpu", field: "usage", from: $from, to: $to, groupBy: ["host"]) { tags { key value } count sum min max avg } }`;
    const variables = { from: FROM, to: TO };
    const answer = await t.graphql<{
      aggregate: { tags: { value: string }[]; count: number; sum: number; min: number; max: number; avg: number }[];
    }>(query, variables, {
      token: tokens.reader,
    });
    const response = await exportOf({ query, variables, operationName: 'Totals' }, { accept: 'application/x-ndjson' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const rows = response.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toEqual(answer.data!.aggregate.map(({ tags, ...statistics }) => ({ host: tags[0]!.value, ...statistics })));
    expect(rows).toHaveLength(2);

    const csv = await exportOf({ query, variables }, { accept: 'text/csv' });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(parse(csv.text)).toEqual([
      ['host', 'count', 'sum', 'min', 'max', 'avg'],
      ...answer.data!.aggregate.map((g) => [g.tags[0]!.value, g.count, g.sum, g.min, g.max, g.avg].map(String)),
    ]);
  });
});

describe('refusals', () => {
  const query = `{ aggregate(metric: "ex_cpu", field: "usage", from: "${FROM}", to: "${TO}") { count } }`;
  const refused = async (status: number, code: string, parameters: Record<string, unknown>, options?: { token?: string | null }) => {
    const response = await exportOf(parameters, options);
    expect({ status: response.status, code: JSON.parse(response.text).extensions.code }).toEqual({ status, code });
    return JSON.parse(response.text) as { message: string };
  };

  it('the tokens and scopes of /graphql', async () => {
    expect((await exportOf({ query })).status).toBe(200);
    await refused(401, 'UNAUTHENTICATED', { query }, { token: null });
    expect((await refused(403, 'FORBIDDEN', { query }, { token: tokens.writer })).message).toMatch(/"read" scope/);
  });

  it('the limits of /graphql', async () => {
    const minutes = `{ buckets(metric: "ex_cpu", field: "usage", granularity: MINUTE, from: "${FROM}", to: "${TO}") { buckets { count } } }`;
    await refused(400, 'TOO_MANY_BUCKETS', { query: minutes });
  });

  it('a mutation, which it never runs', async () => {
    const before = await databaseSnapshot(t.store.db);
    const mutation = `mutation { recordReading(reading: {metric: "ex_cpu", fields: [{name: "usage", value: 1}]}) { recorded } }`;
    expect((await refused(400, 'INVALID_ARGUMENT', { query: mutation }, { token: tokens.admin })).message).toMatch(
      /runs a query, not a mutation/,
    );
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('queries that make no table, and bad parameters', async () => {
    await refused(400, 'INVALID_ARGUMENT', { query: `{ a: metrics { name } b: metrics { name } }` });
    await refused(400, 'INVALID_ARGUMENT', {
      query: `{ buckets(metric: "ex_cpu", field: "usage", granularity: DAY, from: "${FROM}", to: "${TO}") { columns { times avg } } }`,
    });
    await refused(400, 'GRAPHQL_PARSE_FAILED', { query: '{ aggregate(' });
    await refused(400, 'GRAPHQL_VALIDATION_FAILED', { query: '{ nothing }' });
    await refused(400, 'INVALID_ARGUMENT', { query, format: 'xlsx' });
    await refused(400, 'INVALID_TIME_ZONE', { query, timeZone: 'Mars/Olympus' });
    await refused(400, 'INVALID_ARGUMENT', { query, variables: '[1' });
    await refused(400, 'INVALID_ARGUMENT', {});
  });
});
