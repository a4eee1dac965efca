/**
 * Property-based fuzzing of the API's input (fast-check): any generated batch of
 * readings or query either succeeds or fails with a documented error code, a refused
 * batch writes nothing, and an accepted one stores exactly what it was sent.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

let t: TestApp;
beforeAll(async () => {
  t = await openTestApp('fuzz', { maxBatchSize: 20, maxBuckets: 2000 });
});
afterAll(async () => t.close());

const documented = new Set<string>(Object.values(ErrorCode));

/** Names: mostly valid, sometimes breaking one rule (operator, path, too long, reserved, empty, non-ASCII). */
const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('cpu', 'mem', 'host', 'usage', 'f_1', 'a-b', 'X') },
  { weight: 1, arbitrary: fc.constantFrom('', '$gt', 'a.b', '__proto__', 'constructor', 'x'.repeat(65), 'é', ' a', '1abc') },
);
/** Tag values: mostly short text, sometimes empty, too long, or with unpaired surrogates. */
const tagValue = fc.oneof(
  { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(257), '\ud800', 'a\udfffb', '\ud83d\ude00', 'a=b,c d') },
);
/** Times: mostly valid RFC 3339 in 2024, sometimes out of range or malformed. */
const time = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2024, 0, 3) }).map((ms) => new Date(ms).toISOString()) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '1969-12-31T23:59:59Z',
      '9999-01-01T00:00:00Z',
      '9999-12-31T23:59:30Z',
      'yesterday',
      '2024-02-30T00:00:00Z',
      '2024-01-01T10:00:00+05:45',
    ),
  },
);
/** Field values: mostly ordinary numbers, sometimes huge, tiny or at the bound. */
const value = fc.oneof(
  { weight: 6, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(1e150, -1e150, 1.0000001e150, 1e200, -1e308, 5e-324, -0) },
);
const reading = fc.record(
  {
    metric: name,
    tags: fc.array(fc.record({ key: name, value: tagValue }), { maxLength: 3 }),
    time,
    fields: fc.array(fc.record({ name, value }), { minLength: 0, maxLength: 3 }),
  },
  { requiredKeys: ['metric', 'fields'] },
);

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) { recordReadings(readings: $readings, batchId: $batchId) { recorded applied } }`;
const COUNT = `query($metric: String!, $field: String!) { aggregate(metric: $metric, field: $field, from: "1970-01-01T00:00:00Z", to: "9999-01-01T00:00:00Z") { count sum } }`;

describe('fuzzed input', () => {
  it('a batch is either stored whole or refused with a documented code and nothing written', async () => {
    let runs = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(reading, { minLength: 1, maxLength: 25 }),
        fc.option(fc.string({ maxLength: 12 })),
        async (readings, batchId) => {
          runs += 1;
          const before = await databaseSnapshot(t.store.db);
          const response = await t.graphql<{ recordReadings: { recorded: number; applied: number } }>(RECORD, { readings, batchId });
          if (response.errors) {
            for (const error of response.errors) expect(documented, error.message).toContain(error.extensions?.code);
            expect(await databaseSnapshot(t.store.db)).toBe(before);
            return;
          }
          accepted += 1;
          expect(response.data?.recordReadings).toEqual({ recorded: readings.length, applied: readings.length });
        },
      ),
      { numRuns: 60, seed: 20261123 },
    );
    expect(runs).toBe(60);
    expect(accepted).toBeGreaterThan(0);
  });

  it('an accepted batch stores exactly its readings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: -1e150, max: 1e150, noNaN: true }), { minLength: 1, maxLength: 20 }),
        fc.uuid(),
        async (values, id) => {
          const metric = `exact_${id.replace(/-/g, '_')}`;
          const readings = values.map((v, i) => ({
            metric,
            time: new Date(Date.UTC(2024, 0, 1) + i * 61_000).toISOString(),
            fields: [{ name: 'v', value: v }],
          }));
          const response = await t.graphql(RECORD, { readings, batchId: id });
          expect(response.errors).toBeUndefined();
          const again = await t.graphql(RECORD, { readings, batchId: id });
          expect(again.errors).toBeUndefined();
          const stored = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(COUNT, { metric, field: 'v' });
          let sum = 0;
          for (const v of values) sum += v;
          expect(stored.data?.aggregate[0]?.count).toBe(values.length);
          expect(Math.abs(stored.data!.aggregate[0]!.sum - sum)).toBeLessThanOrEqual(
            1e-9 * Math.max(1, ...values.map(Math.abs)) * values.length,
          );
        },
      ),
      { numRuns: 25, seed: 7 },
    );
  });

  it('a query either answers or fails with a documented code', async () => {
    const granularity = fc.constantFrom('MINUTE', 'FIVE_MINUTES', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR', 'FORTNIGHT');
    const bound = fc.oneof(time, fc.constantFrom('1970-01-01T00:00:00Z', '2024-01-01T00:00:00Z', '9999-01-01T00:00:00Z'));
    const where = fc.array(fc.record({ key: name, in: fc.array(tagValue, { maxLength: 3 }) }), { maxLength: 2 });
    await fc.assert(
      fc.asyncProperty(
        name,
        name,
        granularity,
        bound,
        bound,
        where,
        fc.array(name, { maxLength: 2 }),
        fc.constantFrom('NULL', 'NONE'),
        async (metric, field, g, from, to, w, groupBy, fill) => {
          const response = await t.graphql(
            `query($m: String!, $f: String!, $g: Granularity!, $from: Time!, $to: Time!, $w: [TagFilter!], $by: [String!], $fill: Fill) {
            buckets(metric: $m, field: $f, granularity: $g, from: $from, to: $to, where: $w, groupBy: $by, fill: $fill) { tags { key value } buckets { start count avg stddev } }
            aggregate(metric: $m, field: $f, from: $from, to: $to, where: $w, groupBy: $by) { count variance }
          }`,
            { m: metric, f: field, g, from, to, w, by: groupBy, fill },
          );
          for (const error of response.errors ?? []) expect(documented, error.message).toContain(error.extensions?.code);
        },
      ),
      { numRuns: 120, seed: 11 },
    );
  });
});
