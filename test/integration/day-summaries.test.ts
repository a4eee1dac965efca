/**
 * Day summaries (docs/design.md, "Day summaries and day sketches"; `documents/summaries.ts`,
 * `aggregateSummarized` in src/storage/aggregate.ts), checked through GraphQL against a real
 * database. Every expected answer comes from a plain loop over the readings the test
 * sent.
 *
 * Readings of metric `trips` (fields `delay` and `distance`, tags `origin` and
 * `destination`; some series lack `origin`) over four UTC days are folded twice (a whole
 * summary per day from the first fold, a fold summary from the second), compacted whole
 * (a whole summary per day), folded again, and more stay in the ingest log (the tail). Queries grouped by one key, filtered on it, or neither, as aggregates and as
 * DAY and MONTH buckets, over whole days and over a ragged range, answer exactly, and
 * `extensions.reads` says how many days summaries answered. Deleting a series voids
 * the summaries of its days: the answers stay exact, read from the documents, until the
 * next whole-day compaction.
 *
 * No folder runs in the background of a test app: folds and compactions happen only
 * where the test calls them.
 */
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CollectionName } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { FOLDS_ID, foldState } from '../../src/storage/fold-state.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const START = Date.UTC(2024, 4, 1);
const ORIGINS = ['AAA', 'BBB', 'C.C', null] as const;
/**
 * Sixteen destinations: 64 series, a few readings each a day, so a day's summaries keep
 * the day sketches of both keys (`SUMMARY_SKETCH_BINS_PER_DOCUMENT`).
 */
const DESTINATIONS = ['XXX', 'YYY', ...Array.from({ length: 14 }, (_, i) => `D${String.fromCharCode(65 + i)}`)];

/** One reading as sent: its tags, time (ms, UTC) and field values (a field may be absent). */
interface Trip {
  origin: string | null;
  destination: string;
  time: number;
  delay?: number;
  distance?: number;
}

/**
 * `count` readings numbered from `seed` over the four days from START: times spread by
 * a prime step, values halves (sums exact in floating point), every eleventh without
 * `delay` and every other seventh without `distance`.
 */
function trips(count: number, seed: number): Trip[] {
  return Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    const trip: Trip = {
      origin: ORIGINS[k % ORIGINS.length]!,
      destination: DESTINATIONS[(k >> 2) % DESTINATIONS.length]!,
      time: START + ((k * 7919) % (4 * 1440)) * 60_000 + (k % 60) * 1000,
    };
    if (k % 11 !== 0) trip.delay = ((k * 37) % 41) - 20 + (k % 2) * 0.5;
    if (k % 7 !== 0 || k % 11 === 0) trip.distance = (k * 13) % 500;
    return trip;
  });
}

let t: TestApp;
const sent: Trip[] = [];

async function record(readings: Trip[]): Promise<void> {
  const answer = await t.graphql<{ recordReadings: { applied: number } }>(
    'mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { applied } }',
    {
      r: readings.map((trip) => ({
        metric: 'trips',
        tags: [...(trip.origin === null ? [] : [{ key: 'origin', value: trip.origin }]), { key: 'destination', value: trip.destination }],
        time: new Date(trip.time).toISOString(),
        fields: [
          ...(trip.delay === undefined ? [] : [{ name: 'delay', value: trip.delay }]),
          ...(trip.distance === undefined ? [] : [{ name: 'distance', value: trip.distance }]),
        ],
      })),
    },
  );
  expect(answer.errors).toBeUndefined();
  expect(answer.data?.recordReadings.applied).toBe(readings.length);
  sent.push(...readings);
}

/** Count, sum, min, max and sum of squares of one field, by a plain loop. */
interface Expected {
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
  sq: number;
}

function statsOf(readings: readonly Trip[], field: 'delay' | 'distance'): Expected {
  const stats: Expected = { count: 0, sum: 0, min: null, max: null, sq: 0 };
  for (const trip of readings) {
    const value = trip[field];
    if (value === undefined) continue;
    stats.count += 1;
    stats.sum += value;
    stats.sq += value * value;
    stats.min = stats.min === null ? value : Math.min(stats.min, value);
    stats.max = stats.max === null ? value : Math.max(stats.max, value);
  }
  return stats;
}

/** The groups a plain loop finds, keyed by the group's origin ('' for the trips without one), only those with readings of `field`. */
function groupsOf(readings: readonly Trip[], field: 'delay' | 'distance'): Map<string, Expected> {
  const groups = new Map<string, Trip[]>();
  for (const trip of readings) {
    const key = trip.origin ?? '';
    groups.set(key, [...(groups.get(key) ?? []), trip]);
  }
  return new Map([...groups].map(([key, list]) => [key, statsOf(list, field)] as const).filter(([, stats]) => stats.count > 0));
}

interface AnswerStats {
  count: number;
  sum: number | null;
  min: number | null;
  max: number | null;
  variance: number | null;
}

type Reads = { extensions?: { reads?: { rollup: string | null; summaryDays?: number; tail?: { readings: number } }[] } };

const AGGREGATE = `query($from: Time!, $to: Time!, $field: String!, $where: [TagFilter!], $groupBy: [String!]) {
  aggregate(metric: "trips", field: $field, from: $from, to: $to, where: $where, groupBy: $groupBy) {
    tags { key value } count sum min max variance
  }
}`;

const BUCKETS = `query($from: Time!, $to: Time!, $field: String!, $where: [TagFilter!], $groupBy: [String!], $granularity: Granularity!) {
  buckets(metric: "trips", field: $field, from: $from, to: $to, where: $where, groupBy: $groupBy, granularity: $granularity, fill: NONE) {
    tags { key value } buckets { start count sum min max variance }
  }
}`;

/** The answer's statistics compared with a plain loop's (variance to 1e-9 relative; count, sum, min and max exactly). */
function expectStats(answer: AnswerStats, expected: Expected, label: string): void {
  expect({ count: answer.count, sum: answer.sum, min: answer.min, max: answer.max }, label).toEqual({
    count: expected.count,
    sum: expected.sum,
    min: expected.min,
    max: expected.max,
  });
  const mean = expected.sum / expected.count;
  expect(answer.variance, label).toBeCloseTo(expected.sq / expected.count - mean * mean, 6);
}

const originOf = (tags: { key: string; value: string }[]) => tags.find((tag) => tag.key === 'origin')?.value ?? '';

/** Checks an aggregate grouped by origin over `[from, to)` against the plain loop; returns the days summaries answered. */
async function checkByOrigin(from: number, to: number, field: 'delay' | 'distance', where?: string[]): Promise<number> {
  const answer = await t.graphql<{ aggregate: (AnswerStats & { tags: { key: string; value: string }[] })[] }>(AGGREGATE, {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    field,
    groupBy: ['origin'],
    ...(where === undefined ? {} : { where: [{ key: 'origin', in: where }] }),
  });
  expect(answer.errors).toBeUndefined();
  const chosen = sent.filter(
    (trip) => trip.time >= from && trip.time < to && (where === undefined || where.includes(trip.origin ?? '\u0000')),
  );
  const expected = groupsOf(chosen, field);
  const got = answer.data!.aggregate.filter((group) => group.count > 0);
  expect(got.map((group) => originOf(group.tags)).sort()).toEqual([...expected.keys()].sort());
  for (const group of got) expectStats(group, expected.get(originOf(group.tags))!, `${field} ${originOf(group.tags)}`);
  return (answer as Reads).extensions?.reads?.[0]?.summaryDays ?? 0;
}

/**
 * Checks an aggregate of `delay` grouped by origin over `[from, to)` with p50 and p95
 * against a plain loop (statistics exactly, each percentile within 1% of the value of rank
 * floor(p/100 x (count - 1)) of the sorted delays, 0 exactly).
 * @returns the days summaries answered, the pipelines run on the series-day documents
 *   that could select a document (the tail's pipelines select none: `{_id: {$in: []}}`),
 *   and the reads of day sketches.
 */
async function checkPercentiles(from: number, to: number): Promise<{ summaryDays: number; documentReads: number; sketchReads: number }> {
  let documentReads = 0;
  let sketchReads = 0;
  const listener = (event: CommandStartedEvent) => {
    if (event.databaseName !== t.store.db.databaseName) return;
    if (event.command.find === CollectionName.sketches) sketchReads += 1;
    if (event.command.aggregate !== CollectionName.seriesDays) return;
    const first = (event.command.pipeline as Record<string, unknown>[])[0]?.$match as Record<string, unknown> | undefined;
    if (JSON.stringify(first) !== JSON.stringify({ _id: { $in: [] } })) documentReads += 1;
  };
  t.store.client.on('commandStarted', listener);
  let answer: Awaited<
    ReturnType<typeof t.graphql<{ aggregate: (AnswerStats & { tags: { key: string; value: string }[]; p50: number; p95: number })[] }>>
  >;
  try {
    answer = await t.graphql(
      `{ aggregate(metric: "trips", field: "delay", from: "${new Date(from).toISOString()}", to: "${new Date(to).toISOString()}",
          groupBy: ["origin"]) { tags { key value } count sum min max variance p50 p95 } }`,
    );
  } finally {
    t.store.client.off('commandStarted', listener);
  }
  expect(answer.errors).toBeUndefined();
  const chosen = sent.filter((trip) => trip.time >= from && trip.time < to);
  const expected = groupsOf(chosen, 'delay');
  expect(answer.data!.aggregate.map((group) => originOf(group.tags)).sort()).toEqual([...expected.keys()].sort());
  for (const group of answer.data!.aggregate) {
    const origin = originOf(group.tags);
    expectStats(group, expected.get(origin)!, `origin ${origin}`);
    const delays = chosen
      .filter((trip) => (trip.origin ?? '') === origin && trip.delay !== undefined)
      .map((trip) => trip.delay!)
      .sort((a, b) => a - b);
    for (const [p, actual] of [
      [50, group.p50],
      [95, group.p95],
    ] as const) {
      const exact = delays[Math.floor((p / 100) * (delays.length - 1))]!;
      if (exact === 0) expect(actual, `origin ${origin} p${p}`).toBe(0);
      else expect(Math.abs(actual - exact) / Math.abs(exact), `origin ${origin} p${p}: ${actual} vs ${exact}`).toBeLessThanOrEqual(0.01);
    }
  }
  return { summaryDays: (answer as Reads).extensions?.reads?.[0]?.summaryDays ?? 0, documentReads, sketchReads };
}

const kinds = async () =>
  (await t.store.db.collection(CollectionName.summaries).find({ metric: 'trips' }).sort({ date: 1, f: 1 }).toArray()).map(
    (summary) => `${((summary.date as Date).getTime() - START) / DAY}:${summary.kind}`,
  );

/** Compacts every day some fold wrote to, whole (the grace period outlives the test). */
async function compactAll(tiered = false): Promise<void> {
  for (;;) {
    const outcome = await compactOnce(t.store, t.store.holder, { afterFolds: 1, graceMs: 3_600_000, tiered });
    if (outcome.compaction === null) break;
  }
}

beforeAll(async () => {
  t = await openTestApp('day-summaries', { journal: false });
}, 120_000);
afterAll(async () => t?.close());

describe('day summaries', () => {
  it('are written by folds: whole by the first fold of a day, then one per fold, and answer exactly', async () => {
    await record(trips(1_500, 0));
    await t.settle();
    await record(trips(700, 5_000));
    await t.settle();
    expect(await kinds()).toEqual(['0:whole', '0:fold', '1:whole', '1:fold', '2:whole', '2:fold', '3:whole', '3:fold']);
    const summaries = await t.store.db.collection(CollectionName.summaries).find({ metric: 'trips' }).toArray();
    for (const summary of summaries) expect(summary.keys).toEqual(['destination', 'origin']);
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(4);
  });

  it('are written whole by the whole-day compaction, whose cleanup deletes the ones it replaced', async () => {
    await compactAll();
    expect((await kinds()).filter((kind) => kind.startsWith('0:'))).toEqual(['0:whole', '0:fold', '0:whole']);
    // Folded after the compaction: a fold summary each day.
    await record(trips(400, 9_000));
    await t.settle();
    // Left in the ingest log: the tail.
    await record(trips(300, 12_000));
    // The cleanup after the grace period deletes what the compaction's summaries replaced.
    await compactOnce(t.store, t.store.holder, { graceMs: 0 });
    expect((await kinds()).filter((kind) => kind.startsWith('0:'))).toEqual(['0:whole', '0:fold']);
  });

  it('answer aggregates grouped by origin exactly, with parts folded after them and the tail', async () => {
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(4);
    expect(await checkByOrigin(START, START + 4 * DAY, 'distance')).toBe(4);
    // A ragged range: its two inner days from summaries, its edges from the documents.
    expect(await checkByOrigin(START + 6 * HOUR, START + 3 * DAY + 5 * HOUR, 'delay')).toBe(2);
    // Filtered on the grouping key (a value with a dot in it among them).
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay', ['AAA', 'C.C'])).toBe(4);
  });

  it('answer an ungrouped aggregate, filtered or not, exactly', async () => {
    for (const where of [undefined, ['BBB']]) {
      const answer = await t.graphql<{ aggregate: AnswerStats[] }>(AGGREGATE, {
        from: new Date(START).toISOString(),
        to: new Date(START + 4 * DAY).toISOString(),
        field: 'delay',
        ...(where === undefined ? {} : { where: [{ key: 'origin', in: where }] }),
      });
      expect(answer.errors).toBeUndefined();
      const chosen = sent.filter((trip) => where === undefined || where.includes(trip.origin ?? ''));
      expectStats(answer.data!.aggregate[0]!, statsOf(chosen, 'delay'), `where ${where}`);
      expect((answer as Reads).extensions?.reads?.[0]?.summaryDays).toBe(4);
    }
    // The widest range a query may ask, from 1970: the four days from summaries, the
    // stretches before and after them read as two document ranges.
    const widest = await t.graphql<{ aggregate: AnswerStats[] }>(AGGREGATE, {
      from: '1970-01-01T00:00:00Z',
      to: '9999-01-01T00:00:00Z',
      field: 'distance',
    });
    expect(widest.errors).toBeUndefined();
    expectStats(widest.data!.aggregate[0]!, statsOf(sent, 'distance'), 'since 1970');
    expect((widest as Reads).extensions?.reads?.[0]?.summaryDays).toBe(4);
  });

  it('answer an aggregate with percentiles from their day sketches, reading no document, p50 and p95 within 1%', async () => {
    const whole = await checkPercentiles(START, START + 4 * DAY);
    expect(whole.summaryDays).toBe(4);
    // Only the tail went through a pipeline on the documents' collection, with no document selected.
    expect(whole.documentReads).toBe(0);
    expect(whole.sketchReads).toBe(1);
    // A ragged range: its two inner days from summaries, its edges from the documents.
    const ragged = await checkPercentiles(START + 6 * HOUR, START + 3 * DAY + 5 * HOUR);
    expect(ragged.summaryDays).toBe(2);
    expect(ragged.documentReads).toBeGreaterThan(0);
  });

  it('read percentiles from the documents on days whose summaries have no day sketches (written before them)', async () => {
    const sketches = t.store.db.collection(CollectionName.sketches);
    const kept = await sketches.find({ metric: 'trips' }).toArray();
    expect(kept.length).toBeGreaterThan(0);
    // Day 1's sketches gone, as a summary written before day sketches has none.
    await sketches.deleteMany({ metric: 'trips', date: new Date(START + DAY) });
    try {
      const read = await checkPercentiles(START, START + 4 * DAY);
      expect(read.summaryDays).toBe(3);
      expect(read.documentReads).toBeGreaterThan(0);
      // Without percentiles, the same day is read from its summaries still.
      expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(4);
    } finally {
      await sketches.deleteMany({ metric: 'trips' });
      await sketches.insertMany(kept);
    }
  });

  it('answer rankings: the first groups by a statistic, in order, as a plain loop ranks them', async () => {
    const ranked = await t.graphql<{ aggregate: (AnswerStats & { tags: { key: string; value: string }[]; avg: number })[] }>(
      `{ aggregate(metric: "trips", field: "delay", from: "${new Date(START).toISOString()}", to: "${new Date(START + 4 * DAY).toISOString()}",
          groupBy: ["origin"], orderBy: {statistic: AVG, direction: DESC}, limit: 2) { tags { key value } count sum min max variance avg } }`,
    );
    expect(ranked.errors).toBeUndefined();
    const expected = [...groupsOf(sent, 'delay')]
      .map(([origin, stats]) => ({ origin, stats, avg: stats.sum / stats.count }))
      .sort((a, b) => b.avg - a.avg || (a.origin < b.origin ? -1 : 1))
      .slice(0, 2);
    expect(ranked.data!.aggregate.map((group) => originOf(group.tags))).toEqual(expected.map((group) => group.origin));
    for (const [i, group] of ranked.data!.aggregate.entries()) expectStats(group, expected[i]!.stats, `rank ${i}`);
    expect((ranked as Reads).extensions?.reads?.[0]?.summaryDays).toBe(4);
    // DAY buckets of the one destination with the fewest readings of distance.
    const fewest = await t.graphql<{ buckets: { tags: { key: string; value: string }[]; buckets: { count: number }[] }[] }>(
      `{ buckets(metric: "trips", field: "distance", from: "${new Date(START).toISOString()}", to: "${new Date(START + 4 * DAY).toISOString()}",
          granularity: DAY, groupBy: ["destination"], orderBy: {statistic: COUNT, direction: ASC}, limit: 1, fill: NONE) { tags { key value } buckets { count } } }`,
    );
    expect(fewest.errors).toBeUndefined();
    const counts = DESTINATIONS.map((destination) => ({
      destination,
      count: sent.filter((trip) => trip.destination === destination && trip.distance !== undefined).length,
    })).sort((a, b) => a.count - b.count || (a.destination < b.destination ? -1 : 1));
    expect(fewest.data!.buckets).toHaveLength(1);
    expect(fewest.data!.buckets[0]!.tags.map((tag) => tag.value)).toEqual([counts[0]!.destination]);
    expect(fewest.data!.buckets[0]!.buckets.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(counts[0]!.count);
    expect((fewest as Reads).extensions?.reads?.[0]?.summaryDays).toBe(4);
  });

  it('answer DAY buckets by destination and MONTH buckets exactly', async () => {
    for (const granularity of ['DAY', 'MONTH'] as const) {
      const from = START + 3 * HOUR;
      const to = START + 4 * DAY;
      const answer = await t.graphql<{
        buckets: { tags: { key: string; value: string }[]; buckets: (AnswerStats & { start: string })[] }[];
      }>(BUCKETS, {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        field: 'distance',
        groupBy: ['destination'],
        granularity,
      });
      expect(answer.errors).toBeUndefined();
      let groups = 0;
      for (const destination of DESTINATIONS) {
        const group = answer.data!.buckets.find((g) => g.tags.some((tag) => tag.value === destination))!;
        const byStart = new Map<number, Trip[]>();
        for (const trip of sent) {
          if (trip.destination !== destination || trip.time < from || trip.time >= to) continue;
          const start = granularity === 'DAY' ? Math.floor(trip.time / DAY) * DAY : Date.UTC(2024, 4, 1);
          byStart.set(start, [...(byStart.get(start) ?? []), trip]);
        }
        expect(group.buckets.map((bucket) => Date.parse(bucket.start))).toEqual([...byStart.keys()].sort((a, b) => a - b));
        for (const bucket of group.buckets) {
          expectStats(bucket, statsOf(byStart.get(Date.parse(bucket.start))!, 'distance'), `${granularity} ${destination} ${bucket.start}`);
        }
        groups += 1;
      }
      expect(groups).toBe(DESTINATIONS.length);
      expect((answer as Reads).extensions?.reads?.[0]?.summaryDays).toBe(3);
    }
  });

  it('are voided with a series on its days, and answer again after the next whole-day compaction', async () => {
    // As if the days had been compacted many times: one large run each, which a
    // compaction in tiers of a few new folds would keep, merging those folds only.
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: Object.fromEntries([0, 1, 2, 3].map((d) => [`runs.${START + d * DAY}`, [{ from: 0, folds: 1_000 }]])) },
    );
    const gone = await t.graphql('mutation($id: ID!) { deleteSeries(id: $id) { __typename } }', {
      id: 'trips,destination=XXX,origin=AAA',
    });
    expect(gone.errors).toBeUndefined();
    sent.splice(0, sent.length, ...sent.filter((trip) => !(trip.origin === 'AAA' && trip.destination === 'XXX')));
    // The deletion folded the tail first (a fold summary), then voided the day.
    expect((await kinds()).filter((kind) => kind.startsWith('0:'))).toEqual(['0:whole', '0:fold', '0:fold', '0:void']);
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(0);
    // A fold after the deletion: its summaries do not answer without a whole one.
    await t.settle();
    await record(trips(200, 15_000));
    await t.settle();
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(0);
    // A day whose summaries a void made answer nothing is merged whole, even by a
    // compaction in tiers (of recent parts only, it could not compose one past the void).
    await compactAll(true);
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(4);
    expect(await checkByOrigin(START, START + 4 * DAY, 'distance', ['AAA', 'BBB'])).toBe(4);
    expect(await checkPercentiles(START, START + 4 * DAY)).toMatchObject({ summaryDays: 4, documentReads: 0 });
  });

  it('are voided with a deleted metric, and a metric of the same name read afresh is exact', async () => {
    const gone = await t.graphql('mutation { deleteMetric(metric: "trips") { __typename } }');
    expect(gone.errors).toBeUndefined();
    const left = await t.store.db.collection(CollectionName.summaries).find({ metric: 'trips' }).toArray();
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((summary) => summary.kind === 'void')).toBe(true);
    expect(await t.store.db.collection(CollectionName.sketches).countDocuments({ metric: 'trips' })).toBe(0);
    sent.splice(0, sent.length);
    await record(trips(300, 20_000));
    await t.settle();
    // Its days were voided: its folds' summaries wait for a whole-day compaction.
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(0);
    await compactAll();
    expect(await checkByOrigin(START, START + 4 * DAY, 'delay')).toBe(4);
  });
});
