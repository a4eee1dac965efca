/**
 * The API of the optional statistics: `Query.latestValues` (the current value of a
 * field per group, against a plain loop over the readings sent; groups without the
 * field left out; a series whose newest document predates latest values makes its
 * group's value null, never a wrong one), and the budget of percentile queries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;

interface Sent {
  host: string;
  rack: string;
  time: number;
  temp?: number;
  load?: number;
}

/** Readings over three days, four hosts on two racks; host d never sends `temp`. */
const sent: Sent[] = [];
for (let i = 0; i < 120; i++) {
  const host = 'abcd'[i % 4]!;
  const time = Date.UTC(2024, 2, 1) + i * 37 * 60_000 + (i % 7) * 1000;
  sent.push({ host, rack: host < 'c' ? 'r1' : 'r2', time, ...(host === 'd' ? {} : { temp: (i * 13) % 41 }), load: i });
}

const LATEST = `query($where: [TagFilter!], $groupBy: [String!], $field: String!) {
  latestValues(metric: "machines", field: $field, where: $where, groupBy: $groupBy) { tags { key value } latest { time value } }
}`;

/** The reference: the latest reading of `field` among `rows` (ties at one time: the largest value). */
function latestOf(rows: Sent[], field: 'temp' | 'load') {
  let best: { time: number; value: number } | null = null;
  for (const row of rows) {
    const value = row[field];
    if (value === undefined) continue;
    if (best === null || row.time > best.time || (row.time === best.time && value > best.value)) best = { time: row.time, value };
  }
  return best === null ? null : { time: new Date(best.time).toISOString(), value: best.value };
}

beforeAll(async () => {
  t = await openTestApp('latest_values', { journal: false });
  const readings = sent.map((row) => ({
    metric: 'machines',
    tags: [
      { key: 'host', value: row.host },
      { key: 'rack', value: row.rack },
    ],
    time: new Date(row.time).toISOString(),
    fields: [...(row.temp === undefined ? [] : [{ name: 'temp', value: row.temp }]), { name: 'load', value: row.load! }],
  }));
  const answer = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`, { r: readings });
  expect(answer.errors).toBeUndefined();
});
afterAll(async () => t.close());

describe('latestValues', () => {
  it('answers the latest reading per group, as a plain loop over the readings', async () => {
    const answer = await t.graphql<{ latestValues: unknown[] }>(LATEST, { groupBy: ['rack'], field: 'temp' });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.latestValues).toEqual(
      ['r1', 'r2'].map((rack) => ({
        tags: [{ key: 'rack', value: rack }],
        latest: latestOf(
          sent.filter((row) => row.rack === rack),
          'temp',
        ),
      })),
    );
  });

  it('leaves out groups without the field and honours where', async () => {
    const answer = await t.graphql<{ latestValues: { tags: { value: string }[] }[] }>(LATEST, {
      groupBy: ['host'],
      field: 'temp',
      where: [{ key: 'rack', in: ['r2'] }],
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.latestValues).toEqual([
      {
        tags: [{ key: 'host', value: 'c' }],
        latest: latestOf(
          sent.filter((row) => row.host === 'c'),
          'temp',
        ),
      },
    ]);
  });

  it('answers one group without groupBy', async () => {
    const answer = await t.graphql<{ latestValues: unknown[] }>(LATEST, { field: 'load' });
    expect(answer.data?.latestValues).toEqual([{ tags: [], latest: latestOf(sent, 'load') }]);
  });

  it('refuses a bad field name with INVALID_NAME', async () => {
    const answer = await t.graphql(LATEST, { field: 'no.dots' });
    expect(answer.errors?.[0]?.extensions?.code).toBe('INVALID_NAME');
  });

  it('answers null for a group whose newest document predates latest values', async () => {
    // Make host a's newest document look like one written before layout version 2: fold the
    // acknowledged readings into series-day documents first (one batch, one fold: one part a day).
    expect(await t.settle()).toBe(sent.length);
    const newest = await t.store.seriesDays.find({ 'tags.host': 'a' }).sort({ date: -1 }).limit(1).next();
    expect(await t.store.seriesDays.countDocuments({ 'tags.host': 'a', date: newest!.date })).toBe(1);
    await t.store.seriesDays.updateOne({ _id: newest!._id }, { $unset: { v: '' } });
    const answer = await t.graphql<{ latestValues: { tags: { value: string }[]; latest: unknown }[] }>(LATEST, {
      groupBy: ['rack'],
      field: 'temp',
    });
    expect(answer.data?.latestValues.map((group) => group.latest)).toEqual([
      null,
      latestOf(
        sent.filter((row) => row.rack === 'r2'),
        'temp',
      ),
    ]);
  });
});

describe('the budget of percentile queries', () => {
  it('counts a bucket with percentiles as 10 buckets of MAX_BUCKETS, and nothing runs when refused', async () => {
    const small = await openTestApp('percentile_budget', { journal: false, maxBuckets: 100 });
    try {
      // 24 HOUR buckets: 24 without percentiles, 240 with them.
      const query = (selection: string) =>
        `{ buckets(metric: "m", field: "x", from: "2024-03-01", to: "2024-03-02", granularity: HOUR) { buckets { count ${selection} } } }`;
      expect((await small.graphql(query('avg'))).errors).toBeUndefined();
      small.resetCommands();
      const refused = await small.graphql(query('p95'));
      expect(refused.errors?.[0]?.extensions?.code).toBe('TOO_MANY_BUCKETS');
      expect(small.commands.filter((name) => name === 'aggregate')).toEqual([]);
      const statistic = await small.graphql(
        `{ buckets(metric: "m", field: "x", from: "2024-03-01", to: "2024-03-02", granularity: HOUR, statistic: P95) { buckets { value } } }`,
      );
      expect(statistic.errors?.[0]?.extensions?.code).toBe('TOO_MANY_BUCKETS');
    } finally {
      await small.close();
    }
  });
});
