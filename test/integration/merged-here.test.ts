/**
 * Documents merged in the server (docs/read-design.md): which reads fetch the documents
 * their pipeline selects and merge the slots here (`extensions.reads[].fetched`), which
 * run the pipeline, and that both answer as a plain loop over the readings sent does:
 * counts, sums, minima, maxima, first and last readings per bucket, over documents in
 * the raw form, in slots with packed minutes, in parts not compacted yet and in the log's
 * tail, with readings on the range's edges.
 *
 * The data: metric `cpu`, host `busy` with a reading every 20 s from 10:00 to 13:00 UTC
 * on 2024-05-06 (slots, packed minutes), hosts `q0` to `q3` with six readings each that
 * day (raw form), some of them exactly on minute starts; all folded, then a second fold
 * of `busy` (a part beside the first), then readings of `busy`, `q0` and `q1` left in
 * the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { recordSent, type Sent } from '../helpers/plain-loop.ts';

const MINUTE = 60_000;
const DAY = Date.UTC(2024, 4, 6);
const AT = (hour: number, minute = 0, second = 0) => DAY + hour * 3_600_000 + minute * MINUTE + second * 1000;

const sent: Sent[] = [];
let t: TestApp;
/** A second server on the same database with `MERGE_HERE_DOCUMENTS` 2: a read selecting more documents runs its pipeline. */
let few: TestApp;

const record = (readings: Sent[]) => recordSent(t, 'cpu', readings, sent);

/** Readings of `host` every `step` ms over [from, to), values distinct enough that sums tell them apart. */
const every = (host: string, from: number, to: number, step: number, seed: number): Sent[] =>
  Array.from({ length: Math.ceil((to - from) / step) }, (_, i) => ({ host, time: from + i * step, value: ((seed + i * 37) % 101) - 20.5 }));

beforeAll(async () => {
  t = await openTestApp('merged_here', { journal: false });
  few = await openTestApp('merged_here', { journal: false, database: t.store.db.databaseName, mergeHereDocuments: 2 });
  await record(every('busy', AT(10), AT(13), 20_000, 1));
  for (const [i, host] of ['q0', 'q1', 'q2', 'q3'].entries()) {
    await record([
      { host, time: AT(10, 5 + i), value: 3 + i },
      { host, time: AT(11, 0), value: -7 - i },
      { host, time: AT(11, 0, 30), value: 11 },
      { host, time: AT(11, 59, 59), value: 0.25 * i },
      { host, time: AT(12, 0), value: 40 + i },
      { host, time: AT(12, 30, 1), value: -1.5 },
    ]);
  }
  await t.settle();
  // A part beside the compacted document of `busy`, then readings left in the log.
  await record(every('busy', AT(13), AT(13, 30), 30_000, 5));
  await t.settle();
  await record([
    ...every('busy', AT(13, 30), AT(13, 40), 15_000, 9),
    { host: 'q0', time: AT(12, 0, 5), value: 99 },
    // Earlier in its minute than the folded reading at 12:30:01: the minute's first reading comes from the tail.
    { host: 'q1', time: AT(12, 30), value: 5 },
  ]);
}, 120_000);
afterAll(async () => {
  await few?.store.client.close();
  await t?.close();
});

type Bucket = {
  start: string;
  count: number;
  sum: number;
  min: number;
  max: number;
  first: { time: string; value: number } | null;
  last: { time: string; value: number } | null;
};
type Read = { rollup: string | null; fetched?: number; tail?: { readings: number } };

/** MINUTE (or HOUR) buckets of `hosts` over [from, to), through `app`: the buckets of each host and where each pipeline read. */
async function ask(app: TestApp, hosts: string[], from: number, to: number, granularity = 'MINUTE') {
  const response = (await app.graphql(
    `query($from: Time!, $to: Time!, $hosts: [String!]!) {
      buckets(metric: "cpu", field: "v", granularity: ${granularity}, from: $from, to: $to, where: [{key: "host", in: $hosts}], groupBy: ["host"], fill: NONE) {
        tags { value } buckets { start count sum min max first { time value } last { time value } }
      }
    }`,
    { from: new Date(from).toISOString(), to: new Date(to).toISOString(), hosts },
  )) as { data?: { buckets: { tags: { value: string }[]; buckets: Bucket[] }[] }; errors?: unknown; extensions?: { reads?: Read[] } };
  expect(response.errors).toBeUndefined();
  const byHost = Object.fromEntries(
    response.data!.buckets.map((group) => [group.tags[0]!.value, group.buckets.map((b) => ({ ...b, sum: Number(b.sum.toFixed(9)) }))]),
  );
  return { byHost, reads: response.extensions?.reads ?? [] };
}

/** The same by a plain loop over the readings sent. */
function loop(hosts: string[], from: number, to: number, width = MINUTE): Record<string, Bucket[]> {
  const out: Record<string, Bucket[]> = {};
  for (const host of hosts) {
    const buckets = new Map<number, Sent[]>();
    for (const r of sent) {
      if (r.host !== host || r.time < from || r.time >= to) continue;
      const start = r.time - (r.time % width);
      buckets.set(start, [...(buckets.get(start) ?? []), r]);
    }
    if (buckets.size === 0) continue;
    out[host] = [...buckets]
      .sort(([a], [b]) => a - b)
      .map(([start, rs]) => {
        const byTime = [...rs].sort((a, b) => a.time - b.time);
        const pair = (r: Sent) => ({ time: new Date(r.time).toISOString(), value: r.value });
        return {
          start: new Date(start).toISOString(),
          count: rs.length,
          sum: Number(rs.reduce((s, r) => s + r.value, 0).toFixed(9)),
          min: Math.min(...rs.map((r) => r.value)),
          max: Math.max(...rs.map((r) => r.value)),
          first: pair(byTime[0]!),
          last: pair(byTime[byTime.length - 1]!),
        };
      });
  }
  return out;
}

describe('documents merged in the server', () => {
  it('merges the documents of a MINUTE chart of raw-form series, a reading on the range end left out', async () => {
    const hosts = ['q0', 'q1', 'q2', 'q3'];
    const { byHost, reads } = await ask(t, hosts, AT(10, 30), AT(12, 0));
    expect(byHost).toEqual(loop(hosts, AT(10, 30), AT(12, 0)));
    // Three readings of each host in [10:30, 12:00): 11:00, 11:00:30 (one minute), 11:59:59; 12:00 is outside.
    expect(Object.values(byHost).map((buckets) => buckets.reduce((n, b) => n + b.count, 0))).toEqual([3, 3, 3, 3]);
    // The four folded documents and the tail's documents of q0 and q1 that day (their readings at 12:00:05 and 12:30 add nothing here).
    expect(reads).toEqual([expect.objectContaining({ rollup: null, fetched: 6 })]);
  });

  it('merges the compacted document, the part beside it and the tail of a host with packed minutes', async () => {
    const { byHost, reads } = await ask(t, ['busy'], AT(12, 45), AT(13, 45));
    const want = loop(['busy'], AT(12, 45), AT(13, 45));
    expect(byHost).toEqual(want);
    // 15 minutes of readings every 20 s, 30 every 30 s, 10 every 15 s (the tail).
    expect(want.busy!.map((b) => b.count).reduce((a, b) => a + b, 0)).toBe(45 + 60 + 40);
    expect(reads).toHaveLength(1);
    expect(reads[0]!.fetched).toBe(3);
    expect(reads[0]!.tail?.readings).toBe(42);
  });

  it('adds the tail of a raw-form host at its minute', async () => {
    const { byHost, reads } = await ask(t, ['q0'], AT(11, 58), AT(12, 2));
    expect(byHost).toEqual(loop(['q0'], AT(11, 58), AT(12, 2)));
    expect(byHost.q0!.find((b) => b.start === new Date(AT(12)).toISOString())).toMatchObject({ count: 2, sum: 139, max: 99 });
    expect(reads[0]!.fetched).toBe(2);
  });

  it("takes a minute's first and last readings from whichever document holds them", async () => {
    const { byHost } = await ask(t, ['q1'], AT(12, 29), AT(12, 31));
    expect(byHost).toEqual(loop(['q1'], AT(12, 29), AT(12, 31)));
    expect(byHost.q1).toEqual([
      expect.objectContaining({
        count: 2,
        first: { time: '2024-05-06T12:30:00.000Z', value: 5 },
        last: { time: '2024-05-06T12:30:01.000Z', value: -1.5 },
      }),
    ]);
  });

  it('runs the pipeline for a selection of more documents than MERGE_HERE_DOCUMENTS, with the same answer', async () => {
    const hosts = ['q0', 'q1', 'q2', 'q3'];
    const merged = await ask(t, hosts, AT(10), AT(12, 1));
    const piped = await ask(few, hosts, AT(10), AT(12, 1));
    expect(merged.reads[0]!.fetched).toBe(6);
    expect(piped.reads[0]!.fetched).toBeUndefined();
    expect(piped.byHost).toEqual(loop(hosts, AT(10), AT(12, 1)));
    expect(merged.byHost).toEqual(piped.byHost);
  });

  it('runs the pipeline for a read of hour slots, and for a day of minutes and more', async () => {
    const hours = await ask(t, ['busy', 'q1'], AT(10), AT(14), 'HOUR');
    expect(hours.reads[0]!.fetched).toBeUndefined();
    expect(hours.byHost).toEqual(loop(['busy', 'q1'], AT(10), AT(14), 3_600_000));
    const long = await ask(t, ['q1'], DAY - 3_600_000, DAY + 86_400_000);
    expect(long.reads[0]!.fetched).toBeUndefined();
    expect(long.byHost).toEqual(loop(['q1'], DAY - 3_600_000, DAY + 86_400_000));
  });
});
