/**
 * Database commands per request: how many round trips each kind of chart costs, counted
 * from the driver's command events, with every answer checked against a plain loop over
 * the readings sent. A plain collection of one document per reading answers each of
 * these charts with one `aggregate` (a `$match` on an index and a `$group`); the project
 * adds a fixed few: the metric's registry entry, the visible fold number and the read of
 * the unfolded log (the tail), whatever the range.
 *
 * The data: metric `cpu`, 20 hosts, four fields, a reading a minute from 10:00 UTC, one
 * hour on 2024-02-29 and three hours on 2024-03-01, folded; then ten minutes of ten
 * hosts left unfolded in the log. Host h19 records `temp` on 2024-02-29 only; host h20
 * reports half an hour of 2024-02-29 and nothing after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createApp } from '../../src/server/yoga.ts';
import { openTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.ts';

const HOSTS = 20;
const FIELDS = ['usage_user', 'usage_system', 'usage_idle', 'temp'] as const;
const MINUTE_MS = 60_000;
const host = (i: number) => `h${String(i).padStart(2, '0')}`;
/** A reading as the mutation takes it, with its time in ms for the plain loops. */
interface Sent {
  host: string;
  time: number;
  fields: { name: string; value: number }[];
}
const sent: Sent[] = [];
/** A value of field number `f` of host `h` at `minute` of the data (distinct enough that sums and maxima tell readings apart). */
const readingValue = (h: number, minute: number, f: number) => ((h * 7 + minute * 13 + f * 31) % 97) + f / 4;

let t: TestApp;

/** Records a reading a minute of `fields` for `hosts`, `count` minutes from `from` (ISO, UTC). */
async function record(from: string, count: number, hosts: number[], fields: number[]) {
  const start = Date.parse(from);
  const readings: Sent[] = [];
  for (const h of hosts)
    for (let m = 0; m < count; m++) {
      const time = start + m * MINUTE_MS;
      readings.push({
        host: host(h),
        time,
        fields: fields.map((f) => ({ name: FIELDS[f]!, value: readingValue(h, time / MINUTE_MS, f) })),
      });
    }
  for (let i = 0; i < readings.length; i += 5000) {
    const batch = readings.slice(i, i + 5000).map((r) => ({
      metric: 'cpu',
      tags: [{ key: 'host', value: r.host }],
      time: new Date(r.time).toISOString(),
      fields: r.fields,
    }));
    const response = await t.graphql<{ recordReadings: { recorded: number } }>(
      `mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`,
      { r: batch },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.recordReadings.recorded).toBe(batch.length);
  }
  sent.push(...readings);
}

beforeAll(async () => {
  t = await openTestApp('commands', { journal: false });
  const hosts = Array.from({ length: HOSTS }, (_, i) => i);
  await record('2024-02-29T10:00:00Z', 60, hosts, [0, 1, 2, 3]);
  // h20 stopped reporting on 2024-02-29: its newest day is not the metric's.
  await record('2024-02-29T10:30:00Z', 30, [HOSTS], [0, 1, 2, 3]);
  await record('2024-03-01T10:00:00Z', 180, hosts.slice(0, -1), [0, 1, 2, 3]);
  await record('2024-03-01T10:00:00Z', 180, hosts.slice(-1), [0, 1, 2]);
  await t.settle();
  await record('2024-03-01T13:00:00Z', 10, hosts.slice(0, 10), [0, 1, 2]);
}, 120_000);
afterAll(async () => t?.close());

/**
 * The commands of `query` (after one warm-up run of it, so the registry cache is warm)
 * and its answer. The refresh of the process's read pin (`update read_pins`) is left
 * out: it runs on a clock (at most every `PIN_REFRESH_MS / 2`), not per request.
 */
async function counted<T>(query: string): Promise<{ data: T; targets: string[] }> {
  expect((await t.graphql(query)).errors).toBeUndefined();
  t.resetCommands();
  const response = await t.graphql<T>(query);
  expect(response.errors).toBeUndefined();
  return { data: response.data!, targets: t.targets.filter((target) => target !== 'update read_pins').sort() };
}

/** Count, sum and max of `field` of `hostName` per bucket of `width` ms over [from, to), by a plain loop; empty buckets left out. */
function plainBuckets(hostName: string, field: string, from: number, to: number, width: number) {
  const buckets = new Map<number, { count: number; sum: number; max: number }>();
  for (const reading of sent) {
    const value = reading.fields.find((entry) => entry.name === field)?.value;
    if (reading.host !== hostName || value === undefined || reading.time < from || reading.time >= to) continue;
    const start = from + Math.floor((reading.time - from) / width) * width;
    const bucket = buckets.get(start) ?? { count: 0, sum: 0, max: Number.NEGATIVE_INFINITY };
    bucket.count += 1;
    bucket.sum += value;
    bucket.max = Math.max(bucket.max, value);
    buckets.set(start, bucket);
  }
  return [...buckets].sort(([a], [b]) => a - b).map(([start, b]) => ({ start: new Date(start).toISOString(), ...b }));
}

/** What every read of series-day documents costs besides its pipeline: the metric's entry, the visible fold number and the tail. */
const FIXED = ['aggregate ingest_log', 'find fold_state', 'find metrics'];

describe('commands per request', () => {
  it('answers MINUTE buckets over 3 hours of one series with one pipeline and the fixed three', async () => {
    const from = Date.parse('2024-03-01T10:30:00Z');
    const to = from + 3 * 3_600_000;
    const { data, targets } = await counted<{ buckets: { buckets: { start: string; count: number; sum: number; max: number }[] }[] }>(
      `{ buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, where: [{key: "host", in: "h03"}], from: "${new Date(from).toISOString()}", to: "${new Date(to).toISOString()}", fill: NONE) { buckets { start count sum max } } }`,
    );
    const expected = plainBuckets('h03', 'usage_user', from, to, MINUTE_MS);
    // 10:30 to 13:10: the folded minutes and the ten in the tail.
    expect(expected).toHaveLength(160);
    expect(data.buckets).toHaveLength(1);
    expect(data.buckets[0]!.buckets.map((b) => ({ ...b, sum: Number(b.sum.toFixed(9)) }))).toEqual(
      expected.map((b) => ({ ...b, sum: Number(b.sum.toFixed(9)) })),
    );
    // 160 rows arrive in the reply to `aggregate` itself: no `getMore`.
    expect(targets).toEqual(['aggregate series_days', ...FIXED].sort());
  });

  it('answers HOUR buckets over 2 days of one series with one pipeline, the fixed three and the rollups look-up beside them', async () => {
    const from = Date.parse('2024-02-29T00:00:00Z');
    const to = from + 2 * 86_400_000;
    const { data, targets } = await counted<{ buckets: { buckets: { start: string; count: number; sum: number; max: number }[] }[] }>(
      `{ buckets(metric: "cpu", field: "temp", granularity: HOUR, where: [{key: "host", in: "h07"}], from: "${new Date(from).toISOString()}", to: "${new Date(to).toISOString()}", fill: NONE) { buckets { start count sum max } } }`,
    );
    const expected = plainBuckets('h07', 'temp', from, to, 3_600_000);
    expect(expected.map((b) => b.count)).toEqual([60, 60, 60, 60]);
    expect(data.buckets[0]!.buckets.map((b) => ({ ...b, sum: Number(b.sum.toFixed(9)) }))).toEqual(
      expected.map((b) => ({ ...b, sum: Number(b.sum.toFixed(9)) })),
    );
    // A range without minutes may be answered by a rollup: its definitions are read
    // beside the metric's entry (no wait of their own), none here.
    expect(targets).toEqual(['aggregate series_days', 'find rollups', ...FIXED].sort());
  });

  it("answers the latest value of four fields of every host with one read of the metric's last hour, and per series only for those it does not answer", async () => {
    const query = `{ ${FIELDS.map(
      (field) => `${field}: latestValues(metric: "cpu", field: "${field}", groupBy: ["host"]) { tags { value } latest { time value } }`,
    ).join('\n')} }`;
    const { data, targets } =
      await counted<Record<string, { tags: { value: string }[]; latest: { time: string; value: number } }[]>>(query);
    for (const field of FIELDS) {
      const latest = new Map<string, { time: number; value: number }>();
      for (const reading of sent) {
        const value = reading.fields.find((entry) => entry.name === field)?.value;
        const best = latest.get(reading.host);
        if (value !== undefined && (best === undefined || reading.time > best.time))
          latest.set(reading.host, { time: reading.time, value });
      }
      const expected = [...latest]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, best]) => ({ tags: [{ value: name }], latest: { time: new Date(best.time).toISOString(), value: best.value } }));
      expect(expected).toHaveLength(HOSTS + 1);
      expect(data[field]).toEqual(expected);
    }
    // h19's `temp` stopped on 2024-02-29: its latest comes from there, the tail's from 13:09.
    expect(data.temp!.find((group) => group.tags[0]!.value === 'h19')!.latest.time).toBe('2024-02-29T10:59:00.000Z');
    expect(data.usage_user!.find((group) => group.tags[0]!.value === 'h00')!.latest.time).toBe('2024-03-01T13:09:00.000Z');
    expect(data.temp!.find((group) => group.tags[0]!.value === 'h20')!.latest.time).toBe('2024-02-29T10:59:00.000Z');
    const pipelines = targets.filter((target) => target === 'aggregate series_days').length;
    // Every host is asked, so one read of the metric's documents of its latest folded
    // day (2024-03-01) whose last reading is at most an hour before the metric's
    // (12:59): it answers h00 to h18, every field. h19's `temp` is absent from that day:
    // its documents from that day on, then its newest day holding `temp` and that day's
    // parts; h20 has none from that day: the same three. Asked per host, the same answer
    // took 21 + 2 + 2 = 25; field by field, with two look-ups each, 2 x 21 x 4 = 168.
    expect(pipelines).toBe(1 + 3 + 3);
    // One registry list per alias; one view, one tail read and one read of the metric's
    // entry (its latest reading) for all of them.
    expect(targets.filter((target) => target !== 'aggregate series_days')).toEqual(
      ['find series', 'find series', 'find series', 'find series', 'find fold_state', 'aggregate ingest_log', 'find metrics'].sort(),
    );
  });

  it('stops the latest values of many series with QUERY_TIMEOUT when QUERY_TIMEOUT_MS is 1, not an internal error', async () => {
    const app = createApp({
      store: t.store,
      logger: pino({ level: 'silent' }),
      limits: { maxBatchSize: 10_000, maxBuckets: 100_000 },
      auth: { mode: 'off', corsOrigins: [] },
      requestLimits: { queryTimeoutMs: 1 },
    });
    const query = `{ ${FIELDS.map((field) => `${field}: latestValues(metric: "cpu", field: "${field}", groupBy: ["host"]) { latest { value } }`).join('\n')} }`;
    const response = await app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as GraphQLResponse<unknown>;
    expect(body.errors?.length).toBeGreaterThan(0);
    expect([...new Set(body.errors!.map((error) => error.extensions?.code))]).toEqual(['QUERY_TIMEOUT']);
  });
});
