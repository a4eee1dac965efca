/**
 * Bad input: every case gets a GraphQL error with its stable `extensions.code`, and the
 * database is left exactly as it was (compared document by document).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

let t: TestApp;
beforeAll(async () => {
  t = await openTestApp('bad', { maxBatchSize: 50, maxBuckets: 5000 });
  // Some data to protect: a metric with 30 of its 32 fields used.
  const fields = Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, value: i }));
  const response = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`, {
    r: [{ metric: 'wide', tags: [{ key: 'host', value: 'a' }], time: '2024-01-01T00:00:00Z', fields }],
  });
  expect(response.errors).toBeUndefined();
  // A metric with all 64 of its tag keys used, by two series of 32 tags each.
  const tagged = [0, 32].map((offset) => ({
    metric: 'tagged',
    tags: Array.from({ length: 32 }, (_, i) => ({ key: `k${offset + i}`, value: 'v' })),
    time: '2024-01-01T00:00:00Z',
    fields: [{ name: 'x', value: 1 }],
  }));
  const taggedResponse = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`, { r: tagged });
  expect(taggedResponse.errors).toBeUndefined();
});
afterAll(async () => t.close());

const snapshot = () => databaseSnapshot(t.store.db);

const good = (over: Record<string, unknown> = {}) => ({
  metric: 'cpu',
  tags: [{ key: 'host', value: 'a' }],
  time: '2024-01-01T10:00:00Z',
  fields: [{ name: 'usage', value: 1 }],
  ...over,
});
const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;

/** [case, expected code, GraphQL document, variables] */
const writes: [string, string, string, Record<string, unknown>?][] = [
  ['an unparseable time (variable)', 'INVALID_TIME', RECORD, { readings: [good({ time: 'yesterday' })] }],
  [
    'an unparseable time (literal)',
    'INVALID_TIME',
    `mutation { recordReading(reading: {metric: "cpu", time: "2001-13-01T00:00:00Z", fields: [{name: "x", value: 1}]}) { recorded } }`,
  ],
  ['a time before 1970', 'INVALID_TIME', RECORD, { readings: [good({ time: '1969-12-31T23:59:00Z' })] }],
  [
    'an infinite value (literal)',
    'INVALID_FIELD_VALUE',
    `mutation { recordReading(reading: {metric: "cpu", fields: [{name: "x", value: 1e400}]}) { recorded } }`,
  ],
  [
    'an infinite value (variable)',
    'BAD_USER_INPUT',
    `mutation($v: Float!) { recordReading(reading: {metric: "cpu", fields: [{name: "x", value: $v}]}) { recorded } }`,
    { v: 'Infinity' },
  ],
  ['a reading without fields', 'NO_FIELDS', RECORD, { readings: [good({ fields: [] })] }],
  ['an empty tag value', 'INVALID_TAG_VALUE', RECORD, { readings: [good({ tags: [{ key: 'host', value: '' }] })] }],
  [
    'a tag value over 256 characters',
    'INVALID_TAG_VALUE',
    RECORD,
    { readings: [good({ tags: [{ key: 'host', value: 'x'.repeat(257) }] })] },
  ],
  ['a non-string tag value', 'BAD_USER_INPUT', RECORD, { readings: [good({ tags: [{ key: 'host', value: 5 }] })] }],
  ['a metric name that is an operator', 'INVALID_NAME', RECORD, { readings: [good({ metric: '$where' })] }],
  ['an empty metric name', 'INVALID_NAME', RECORD, { readings: [good({ metric: '' })] }],
  ['a metric name of 65 characters', 'INVALID_NAME', RECORD, { readings: [good({ metric: 'm'.repeat(65) })] }],
  ['a tag key that is an operator', 'INVALID_NAME', RECORD, { readings: [good({ tags: [{ key: '$gt', value: 'a' }] })] }],
  ['a field name that is a path', 'INVALID_NAME', RECORD, { readings: [good({ fields: [{ name: 'a.b', value: 1 }] })] }],
  ['a field name __proto__', 'INVALID_NAME', RECORD, { readings: [good({ fields: [{ name: '__proto__', value: 1 }] })] }],
  ['a tag key with a space', 'INVALID_NAME', RECORD, { readings: [good({ tags: [{ key: 'data center', value: 'a' }] })] }],
  [
    'a repeated tag key',
    'DUPLICATE_NAME',
    RECORD,
    {
      readings: [
        good({
          tags: [
            { key: 'host', value: 'a' },
            { key: 'host', value: 'b' },
          ],
        }),
      ],
    },
  ],
  [
    'a repeated field',
    'DUPLICATE_NAME',
    RECORD,
    {
      readings: [
        good({
          fields: [
            { name: 'u', value: 1 },
            { name: 'u', value: 2 },
          ],
        }),
      ],
    },
  ],
  [
    '33 tags',
    'TOO_MANY_NAMES',
    RECORD,
    { readings: [good({ tags: Array.from({ length: 33 }, (_, i) => ({ key: `k${i}`, value: 'v' })) })] },
  ],
  [
    '33 fields',
    'TOO_MANY_NAMES',
    RECORD,
    { readings: [good({ fields: Array.from({ length: 33 }, (_, i) => ({ name: `f${i}`, value: i })) })] },
  ],
  [
    'a metric growing past 32 fields',
    'TOO_MANY_NAMES',
    RECORD,
    {
      readings: [
        good({
          metric: 'wide',
          fields: [
            { name: 'n1', value: 1 },
            { name: 'n2', value: 2 },
            { name: 'n3', value: 3 },
          ],
        }),
      ],
    },
  ],
  [
    'a metric growing past 64 tag keys',
    'TOO_MANY_NAMES',
    RECORD,
    { readings: [good({ metric: 'tagged', tags: [{ key: 'k64', value: 'v' }] })] },
  ],
  ['a value whose square overflows', 'INVALID_FIELD_VALUE', RECORD, { readings: [good({ fields: [{ name: 'usage', value: 1.3e154 }] })] }],
  [
    'a value just over the bound',
    'INVALID_FIELD_VALUE',
    RECORD,
    { readings: [good({ fields: [{ name: 'usage', value: -1.0000001e150 }] })] },
  ],
  [
    'a tag value with an unpaired high surrogate',
    'INVALID_TAG_VALUE',
    RECORD,
    { readings: [good({ tags: [{ key: 'host', value: 'a\ud800' }] })] },
  ],
  [
    'a tag value with an unpaired low surrogate',
    'INVALID_TAG_VALUE',
    RECORD,
    { readings: [good({ tags: [{ key: 'host', value: '\udfff' }] })] },
  ],
  ['a time no query can reach', 'INVALID_TIME', RECORD, { readings: [good({ time: '9999-12-31T23:59:30Z' })] }],
  ['a time at the end of the range', 'INVALID_TIME', RECORD, { readings: [good({ time: '9999-01-01T00:00:00Z' })] }],
  [
    'an empty batch id',
    'INVALID_BATCH_ID',
    `mutation($r: [ReadingInput!]!) { recordReadings(readings: $r, batchId: "") { recorded } }`,
    { r: [good()] },
  ],
  [
    'a batch id with a space',
    'INVALID_BATCH_ID',
    `mutation($r: [ReadingInput!]!) { recordReadings(readings: $r, batchId: "a b") { recorded } }`,
    { r: [good()] },
  ],
  [
    'a batch id of 129 characters',
    'INVALID_BATCH_ID',
    `mutation($r: ReadingInput!, $id: String) { recordReading(reading: $r, batchId: $id) { recorded } }`,
    { r: good(), id: 'x'.repeat(129) },
  ],
  ['a batch over MAX_BATCH_SIZE', 'BATCH_TOO_LARGE', RECORD, { readings: Array.from({ length: 51 }, () => good()) }],
  [
    '49 good readings and a bad last one',
    'INVALID_TAG_VALUE',
    RECORD,
    {
      readings: [
        ...Array.from({ length: 49 }, (_, i) => good({ tags: [{ key: 'host', value: `h${i}` }] })),
        good({ tags: [{ key: 'host', value: '' }] }),
      ],
    },
  ],
  [
    'a good reading of a new metric next to a bad one',
    'INVALID_NAME',
    RECORD,
    { readings: [good({ metric: 'fresh' }), good({ tags: [{ key: 'a.b', value: 'x' }] })] },
  ],
  ['a document that does not parse', 'GRAPHQL_PARSE_FAILED', `mutation { recordReading(reading: {metric: "cpu" `],
  [
    'a field the schema lacks',
    'GRAPHQL_VALIDATION_FAILED',
    `mutation { recordReading(reading: {metric: "cpu", fields: [{name: "x", value: 1}], color: "red"}) { recorded } }`,
  ],
];

const range = { from: '2024-01-01T00:00:00Z', to: '2024-01-02T00:00:00Z' };
const BUCKETS = `query($metric: String!, $field: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!]) {
  buckets(metric: $metric, field: $field, granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy) { buckets { count } }
}`;
const reads: [string, string, string, Record<string, unknown>?][] = [
  ['from equal to to', 'INVALID_RANGE', BUCKETS, { metric: 'cpu', field: 'usage', granularity: 'DAY', from: range.from, to: range.from }],
  ['from after to', 'INVALID_RANGE', BUCKETS, { metric: 'cpu', field: 'usage', granularity: 'DAY', from: range.to, to: range.from }],
  [
    'more buckets than MAX_BUCKETS',
    'TOO_MANY_BUCKETS',
    BUCKETS,
    { metric: 'cpu', field: 'usage', granularity: 'MINUTE', from: '2024-01-01T00:00:00Z', to: '2024-01-05T00:00:00Z' },
  ],
  [
    'a filter key that is an operator',
    'INVALID_NAME',
    BUCKETS,
    { metric: 'cpu', field: 'usage', granularity: 'DAY', ...range, where: [{ key: '$where', in: ['1'] }] },
  ],
  [
    'a groupBy key that is a path',
    'INVALID_NAME',
    BUCKETS,
    { metric: 'cpu', field: 'usage', granularity: 'DAY', ...range, groupBy: ['a.b'] },
  ],
  ['a field that is an operator', 'INVALID_NAME', BUCKETS, { metric: 'cpu', field: '$sum', granularity: 'DAY', ...range }],
  [
    'a repeated groupBy key',
    'DUPLICATE_NAME',
    BUCKETS,
    { metric: 'cpu', field: 'usage', granularity: 'DAY', ...range, groupBy: ['host', 'host'] },
  ],
  ['an unknown granularity', 'BAD_USER_INPUT', BUCKETS, { metric: 'cpu', field: 'usage', granularity: 'FORTNIGHT', ...range }],
  [
    'an aggregate with from after to',
    'INVALID_RANGE',
    `{ aggregate(metric: "cpu", field: "usage", from: "2024-01-02T00:00:00Z", to: "2024-01-01T00:00:00Z") { count } }`,
  ],
  [
    'a filter value with an unpaired surrogate',
    'INVALID_TAG_VALUE',
    BUCKETS,
    { metric: 'cpu', field: 'usage', granularity: 'DAY', ...range, where: [{ key: 'host', in: ['\ud800'] }] },
  ],
  [
    'a range ending after 9999-01-01',
    'INVALID_TIME',
    BUCKETS,
    { metric: 'cpu', field: 'usage', granularity: 'YEAR', from: range.from, to: '9999-01-01T00:01:00Z' },
  ],
  ['a series limit of 0', 'INVALID_ARGUMENT', `{ series(metric: "cpu", limit: 0) { id } }`],
  ['a metric name that is an operator', 'INVALID_NAME', `{ metric(name: "$where") { name } }`],
  ['tag values of a key that is a path', 'INVALID_NAME', `{ tagValues(metric: "cpu", key: "a.b") }`],
  [
    'Series.buckets with from after to',
    'INVALID_RANGE',
    `{ series(metric: "wide") { buckets(field: "f1", granularity: DAY, from: "2024-01-02T00:00:00Z", to: "2024-01-01T00:00:00Z") { count } } }`,
  ],
];

describe('bad input is refused with a stable code and writes nothing', () => {
  it.each([...writes, ...reads])('%s -> %s', async (_case, code, query, variables) => {
    const before = await snapshot();
    const response = await t.graphql(query, variables);
    expect(response.errors?.length).toBeGreaterThan(0);
    expect(response.errors![0]!.extensions?.code).toBe(code);
    expect(response.data ?? null).toSatisfy(
      (data: unknown) => data === null || Object.values(data as object).every((v) => v === null || (Array.isArray(v) && v.length === 0)),
    );
    expect(await snapshot()).toBe(before);
  });

  it('names the argument at fault, whatever rule it broke', async () => {
    const tagValues = await t.graphql(`{ tagValues(metric: "cpu", key: "a.b") }`);
    expect(tagValues.errors![0]!.extensions).toMatchObject({ code: 'INVALID_NAME', inputPath: 'key' });
    const metric = await t.graphql(`{ metric(name: "$where") { name } }`);
    expect(metric.errors![0]!.extensions).toMatchObject({ code: 'INVALID_NAME', inputPath: 'name' });
  });

  it('names where the problem is', async () => {
    const response = await t.graphql(RECORD, {
      readings: [
        good(),
        good({
          tags: [
            { key: 'host', value: 'a' },
            { key: '$x', value: 'b' },
          ],
        }),
      ],
    });
    expect(response.errors![0]!.extensions?.inputPath).toBe('readings[1].tags[1].key');
    expect(response.errors![0]!.message).toMatch(/^readings\[1\]\.tags\[1\]\.key: /);
  });
});
