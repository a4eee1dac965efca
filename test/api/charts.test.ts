/**
 * Chart-ready answers through the API: ranking, fill modes, transforms, comparison
 * with an earlier period, the flat form and epoch-millisecond bounds. Expected values
 * come from plain loops over the readings sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const HOUR = 3_600_000;
const START = Date.UTC(2024, 2, 4); // a Monday
const HOSTS = ['a', 'b', 'c', 'd'];

/** Readings of 4 hosts over 2 days; host a has nothing from 05:00 to 09:00 on either day; integer values. */
const RAW = (() => {
  const out: { host: string; time: number; v: number }[] = [];
  HOSTS.forEach((host, h) => {
    for (let k = 0; k < 2 * 24 * 4; k++) {
      const time = START + k * 15 * 60_000 + h * 60_000;
      const hour = new Date(time).getUTCHours();
      if (host === 'a' && hour >= 5 && hour < 9) continue;
      out.push({ host, time, v: ((k * 7 + h * 13) % 23) + h * 5 });
    }
  });
  return out;
})();

let t: TestApp;
beforeAll(async () => {
  t = await openTestApp('charts');
  const readings = RAW.map((r) => ({
    metric: 'load',
    tags: [{ key: 'host', value: r.host }],
    time: new Date(r.time).toISOString(),
    fields: [{ name: 'v', value: r.v }],
  }));
  const answer = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r, batchId: "charts") { recorded } }`, {
    r: readings,
  });
  expect(answer.errors).toBeUndefined();
});
afterAll(async () => t.close());

/** Per hour of day 1 (24 hours from START), count and sum of host `host`'s readings, by a plain loop. */
function hourly(host: string, from = START, hours = 24) {
  return Array.from({ length: hours }, (_, i) => {
    const values = RAW.filter((r) => r.host === host && r.time >= from + i * HOUR && r.time < from + (i + 1) * HOUR).map((r) => r.v);
    const sum = values.reduce((s, v) => s + v, 0);
    return { start: from + i * HOUR, count: values.length, sum, avg: values.length ? sum / values.length : null };
  });
}

const DAY1 = { from: new Date(START).toISOString(), to: new Date(START + 24 * HOUR).toISOString() };

describe('ranking', () => {
  it('keeps the top groups by a statistic, computed in the pipeline', async () => {
    const answer = await t.graphql<{ aggregate: { tags: { value: string }[]; avg: number }[] }>(
      `{ aggregate(metric: "load", field: "v", from: "${DAY1.from}", to: "${DAY1.to}", groupBy: ["host"], orderBy: {statistic: AVG}, limit: 2) { tags { value } avg } }`,
    );
    expect(answer.errors).toBeUndefined();
    const means = HOSTS.map((host) => {
      const values = RAW.filter((r) => r.host === host && r.time < START + 24 * HOUR).map((r) => r.v);
      return { host, avg: values.reduce((s, v) => s + v, 0) / values.length };
    }).sort((x, y) => y.avg - x.avg);
    expect(answer.data!.aggregate.map((row) => row.tags[0]!.value)).toEqual(means.slice(0, 2).map((m) => m.host));
    answer.data!.aggregate.forEach((row, i) => {
      expect(row.avg).toBeCloseTo(means[i]!.avg, 9);
    });
  });

  it('ranks bucket lists too, ascending when asked', async () => {
    const answer = await t.graphql<{ buckets: { tags: { value: string }[]; buckets: { count: number }[] }[] }>(
      `{ buckets(metric: "load", field: "v", granularity: DAY, from: "${DAY1.from}", to: "${DAY1.to}", groupBy: ["host"], orderBy: {statistic: COUNT, direction: ASC}, limit: 1) { tags { value } buckets { count } } }`,
    );
    expect(answer.errors).toBeUndefined();
    // Host a has 96 quarter-hourly readings a day but none for 4 hours (16): the fewest, 80.
    expect(answer.data!.buckets).toEqual([{ tags: [{ value: 'a' }], buckets: [{ count: 80 }] }]);
  });
});

describe('fill and transforms', () => {
  const query = (extra: string, fields = 'start count filled value') =>
    t.graphql<{ buckets: { buckets: { start: string; count: number; filled: boolean; value: number | null }[] }[] }>(
      `{ buckets(metric: "load", field: "v", granularity: HOUR, from: "${DAY1.from}", to: "${DAY1.to}", where: [{key: "host", in: "a"}], ${extra}) { buckets { ${fields} } } }`,
    );

  it('fills the empty hours as asked', async () => {
    const reference = hourly('a');
    const zero = await query('fill: ZERO, statistic: SUM');
    expect(zero.data!.buckets[0]!.buckets.map((b) => [b.count, b.filled, b.value])).toEqual(
      reference.map((r) => [r.count, r.count === 0, r.sum]),
    );
    const previous = await query('fill: PREVIOUS, statistic: SUM');
    let last: number | null = null;
    expect(previous.data!.buckets[0]!.buckets.map((b) => b.value)).toEqual(
      reference.map((r) => {
        if (r.count > 0) last = r.sum;
        return last;
      }),
    );
    const linear = await query('fill: LINEAR, statistic: SUM');
    const sums = reference.map((r) => (r.count > 0 ? r.sum : null));
    const expected = sums.map((v, i) => {
      if (v !== null) return v;
      let a = i - 1;
      while (a >= 0 && sums[a] === null) a--;
      let b = i + 1;
      while (b < sums.length && sums[b] === null) b++;
      return a < 0 || b >= sums.length ? null : sums[a]! + ((sums[b]! - sums[a]!) * (i - a)) / (b - a);
    });
    linear.data!.buckets[0]!.buckets.forEach((bucket, i) => {
      expect(bucket.value).toBeCloseTo(expected[i]!, 9);
    });
    const none = await query('fill: NONE');
    expect(none.data!.buckets[0]!.buckets).toHaveLength(reference.filter((r) => r.count > 0).length);
  });

  it('computes rate, difference, cumulative sum and a moving average of the chosen statistic', async () => {
    const reference = hourly('b');
    const on = (extra: string) =>
      t.graphql<{ buckets: { buckets: { value: number | null }[] }[] }>(
        `{ buckets(metric: "load", field: "v", granularity: HOUR, from: "${DAY1.from}", to: "${DAY1.to}", where: [{key: "host", in: "b"}], ${extra}) { buckets { value } } }`,
      );
    const values = async (extra: string) => (await on(extra)).data!.buckets[0]!.buckets.map((b) => b.value);
    expect(await values('statistic: SUM, transform: RATE')).toEqual(reference.map((r) => r.sum / 3600));
    expect(await values('statistic: COUNT, transform: CUMULATIVE_SUM')).toEqual(
      reference.map((_, i) => reference.slice(0, i + 1).reduce((s, r) => s + r.count, 0)),
    );
    expect(await values('statistic: SUM, transform: DIFFERENCE')).toEqual(
      reference.map((r, i) => (i === 0 ? null : r.sum - reference[i - 1]!.sum)),
    );
    const moving = await values('statistic: SUM, transform: MOVING_AVERAGE, window: 3');
    moving.forEach((v, i) => {
      const window = reference.slice(Math.max(0, i - 2), i + 1).map((r) => r.sum);
      expect(v).toBeCloseTo(window.reduce((s, x) => s + x, 0) / window.length, 9);
    });
  });

  it('compares each hour with the same hour a day before', async () => {
    const day2 = { from: new Date(START + 24 * HOUR).toISOString(), to: new Date(START + 48 * HOUR).toISOString() };
    const answer = await t.graphql<{
      buckets: { buckets: { value: number; previous: number; change: number; previousStart: string }[] }[];
    }>(
      `{ buckets(metric: "load", field: "v", granularity: HOUR, from: "${day2.from}", to: "${day2.to}", where: [{key: "host", in: "c"}], statistic: SUM, compareWith: {amount: 1, unit: DAY}) { buckets { value previous change previousStart } } }`,
    );
    expect(answer.errors).toBeUndefined();
    const now = hourly('c', START + 24 * HOUR);
    const before = hourly('c');
    expect(answer.data!.buckets[0]!.buckets).toEqual(
      now.map((r, i) => ({
        value: r.sum,
        previous: before[i]!.sum,
        change: r.sum - before[i]!.sum,
        previousStart: new Date(before[i]!.start).toISOString(),
      })),
    );
  });
});

describe('flat form and epoch milliseconds', () => {
  it('answers the same buckets as parallel arrays, with epoch-millisecond bounds', async () => {
    const answer = await t.graphql<{
      buckets: {
        buckets: { start: string; count: number; sum: number | null }[];
        columns: { times: number[]; count: number[]; sum: (number | null)[] };
      }[];
    }>(
      `{ buckets(metric: "load", field: "v", granularity: HOUR, from: ${START}, to: ${START + 24 * HOUR}, where: [{key: "host", in: "a"}]) { buckets { start count sum } columns { times count sum } } }`,
    );
    expect(answer.errors).toBeUndefined();
    const [group] = answer.data!.buckets;
    const reference = hourly('a');
    expect(group!.columns.times).toEqual(reference.map((r) => r.start));
    expect(group!.columns.count).toEqual(reference.map((r) => r.count));
    expect(group!.columns.sum).toEqual(reference.map((r) => (r.count ? r.sum : null)));
    expect(group!.buckets.map((b) => Date.parse(b.start))).toEqual(group!.columns.times);
  });
});
