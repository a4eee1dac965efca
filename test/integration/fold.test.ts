/**
 * The write path as a log, a fold and reads from both (docs/ingest-design.md), checked
 * end to end through GraphQL against a real database. Every expected answer comes from
 * a plain loop over the readings the test sent, never from the code under test.
 *
 * What it proves:
 * 1. Read-your-writes: a batch is answered by the very next request, with no fold
 *    running (every statistic of `aggregate`, percentiles within the sketches' 1%,
 *    MINUTE/HOUR/DAY buckets, latest values and readings), and `extensions.reads[].tail`
 *    says the answer came from the unfolded log; after a fold the answers are the same
 *    and the tail is empty; with one batch folded and one not, the answers are of both.
 * 2. A fast-check property: any interleaving of new batches, resends of earlier batches
 *    (same batch id), folds of 1 to 50 readings (which split the log at any entry) and
 *    queries answers like a plain loop over the distinct batches recorded so far, and a
 *    resend changes nothing.
 * 3. Two stores on one database, both writing and both folding at once: only the lease
 *    holder folds, every log entry is folded exactly once (one part per series, day and
 *    fold, and the parts' readings add up to the readings sent), readers running during
 *    the folds never miss an acknowledged reading nor count one twice, and both stores
 *    answer exactly afterwards.
 * 4. Crash completion: a fold left `running` with its entries stamped and no part
 *    written (as an earlier version stamped them), under an expired lease, is answered
 *    from the tail, completed by another holder's `foldAll`, and neither the dead holder
 *    calling `foldOnce` afterwards nor a zombie stalled inside a fold while another
 *    holder completed it can flip the visible fold number or add anything twice. A fold
 *    left visible with its entries not stamped yet (`stamping`) is read from its parts
 *    only, and the next holder stamps its entries without folding them again.
 * 5. Start-up gives `foldedAt` to entries an earlier version left stamped by a visible
 *    fold without it (else they would never expire), and to no other; an entry holding
 *    its columns as fields (written before they were packed) is read and folded exactly.
 *
 * No folder runs in the background of a test app (test/helpers/app.ts): folds happen
 * only where a test calls `settle`, `foldOnce` or `foldAll`.
 *
 * Batch ids are unique across the whole file, databases included, so no answer can come
 * from another database's entry of the same id (the tail's cache of decoded log entries,
 * `readingsOf` in src/storage/ingest-log.ts, is one per process, keyed by database, id and
 * arrival).
 */
import fc from 'fast-check';
import { ObjectId, type Collection, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectedBuckets,
  expectPercentile,
  newestFirst,
  type Sent,
  spread as spreadFrom,
  totalsOf as plainTotals,
} from '../helpers/plain-loop.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { foldAll, foldOnce, type FoldOutcome } from '../../src/storage/fold.ts';
import { ingestLog, measureBacklog } from '../../src/storage/ingest-log.ts';
import { ensureIndexes, type Store } from '../../src/storage/store.ts';
import { FOLDS_ID, foldState, STAMP_CHUNK } from '../../src/storage/fold-state.ts';
import { releaseLease } from '../../src/storage/lease.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Every reading of the file lies in the two UTC days from here. */
const START = Date.UTC(2024, 0, 1);
const FROM = new Date(START).toISOString();
const TO = new Date(START + 2 * DAY).toISOString();

// ---------------------------------------------------------------------------------
// GraphQL documents
// ---------------------------------------------------------------------------------

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { batchId recorded applied alreadyApplied }
}`;
const AGGREGATE = `query($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to) {
    count sum min max avg first { time value } last { time value } p50 p90
  }
}`;
const TOTALS = `query($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to) { count sum min max }
}`;
const BUCKETS = `query($metric: String!, $granularity: Granularity!, $from: Time!, $to: Time!) {
  buckets(metric: $metric, field: "v", granularity: $granularity, from: $from, to: $to, fill: NONE) {
    buckets { start count sum }
  }
}`;
const LATEST = `query($metric: String!) {
  metric(name: $metric) { firstReadingAt lastReadingAt }
  all: latestValues(metric: $metric, field: "v") { latest { time value } }
  byHost: latestValues(metric: $metric, field: "v", groupBy: ["host"]) { tags { key value } latest { time value } }
  series(metric: $metric) {
    id firstReadingAt lastReadingAt
    latestValue(field: "v") { time value }
    latest(n: 5) { time value(field: "v") }
  }
}`;

interface TimedValue {
  time: string;
  value: number;
}
interface Totals {
  count: number;
  sum: number;
  min: number;
  max: number;
}
interface Aggregate extends Totals {
  avg: number;
  first: TimedValue | null;
  last: TimedValue | null;
  p50: number | null;
  p90: number | null;
}
interface BucketRow {
  start: string;
  count: number;
  sum: number;
}
/** `extensions.reads[i].tail`: the unfolded log entries a read added, and their readings of the metric. */
interface TailRead {
  entries: number;
  readings: number;
}
interface Answer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
  extensions?: { reads?: { metric: string | null; tail?: TailRead }[] };
}

/** Sends `query` to `app` and returns the whole answer, with its `extensions`, after checking it has no errors. */
async function ask<T>(app: TestApp, query: string, variables: Record<string, unknown>): Promise<Answer<T>> {
  const answer = (await app.graphql<T>(query, variables)) as Answer<T>;
  expect(answer.errors).toBeUndefined();
  return answer;
}

/** The GraphQL input of readings of `metric`. */
const asInput = (metric: string, readings: readonly Sent[]) =>
  readings.map((r) => ({
    metric,
    tags: [{ key: 'host', value: r.host }],
    time: new Date(r.time).toISOString(),
    fields: [{ name: 'v', value: r.value }],
  }));

/** Records `readings` of `metric` through `recordReadings` with `batchId` (none: the server makes the entry's id) and returns its outcome. */
async function record(app: TestApp, metric: string, readings: readonly Sent[], batchId: string | undefined) {
  const answer = await ask<{ recordReadings: { batchId: string; recorded: number; applied: number; alreadyApplied: number } }>(
    app,
    RECORD,
    {
      readings: asInput(metric, readings),
      batchId,
    },
  );
  return answer.data!.recordReadings;
}

/** count, sum, min and max of `metric` over the two days, and the tail its read added (null: no read ran, unknown metric). */
async function totalsOf(app: TestApp, metric: string): Promise<{ totals: Totals | null; tail: TailRead | null }> {
  const answer = await ask<{ aggregate: Totals[] }>(app, TOTALS, { metric, from: FROM, to: TO });
  return { totals: answer.data!.aggregate[0] ?? null, tail: answer.extensions?.reads?.[0]?.tail ?? null };
}

/** The non-empty buckets of `metric` at `granularity` over the two days (count and sum), and the tail its read added. */
async function bucketsOf(app: TestApp, metric: string, granularity: 'MINUTE' | 'HOUR' | 'DAY') {
  const answer = await ask<{ buckets: { buckets: BucketRow[] }[] }>(app, BUCKETS, { metric, granularity, from: FROM, to: TO });
  return { buckets: answer.data!.buckets[0]?.buckets ?? [], tail: answer.extensions?.reads?.[0]?.tail ?? null };
}

// ---------------------------------------------------------------------------------
// Plain loops: the expected answers
// ---------------------------------------------------------------------------------

/** count, sum, min and max of the readings, by a plain loop; null without readings (the API lists no group then). */
const expectedTotals = (readings: readonly Sent[]): Totals | null => (readings.length === 0 ? null : plainTotals(readings));

/**
 * The earliest and the latest reading, by a plain loop, with the schema's tie rules:
 * of several readings in the same millisecond, `first` is the smallest value and `last`
 * the largest.
 */
function expectedEdges(readings: readonly Sent[]): { first: TimedValue; last: TimedValue } {
  let first = readings[0]!;
  let last = readings[0]!;
  for (const r of readings) {
    if (r.time < first.time || (r.time === first.time && r.value < first.value)) first = r;
    if (r.time > last.time || (r.time === last.time && r.value > last.value)) last = r;
  }
  const timed = (r: Sent) => ({ time: new Date(r.time).toISOString(), value: r.value });
  return { first: timed(first), last: timed(last) };
}

// ---------------------------------------------------------------------------------
// 1. Read-your-writes
// ---------------------------------------------------------------------------------

/** {@link spreadFrom} from this file's first day. */
const spread = (count: number, seed: number): Sent[] => spreadFrom(START, count, seed);

describe('read-your-writes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('fold_ryw');
  });
  afterAll(async () => t.close());

  /**
   * Checks every answer about `metric` against plain loops over `readings`, and that
   * each bucket read (aggregate and MINUTE/HOUR/DAY buckets) added `tailReadings`
   * readings from the unfolded log (from at least one entry when there are any).
   */
  async function expectAnswers(metric: string, readings: readonly Sent[], tailReadings: number): Promise<void> {
    const expectTail = (tail: TailRead | null | undefined) => {
      expect(tail).toBeDefined();
      expect(tail!.readings).toBe(tailReadings);
      if (tailReadings > 0) expect(tail!.entries).toBeGreaterThanOrEqual(1);
      else expect(tail!.entries).toBe(0);
    };

    const aggregate = await ask<{ aggregate: Aggregate[] }>(t, AGGREGATE, { metric, from: FROM, to: TO });
    expect(aggregate.data!.aggregate).toHaveLength(1);
    const row = aggregate.data!.aggregate[0]!;
    const totals = expectedTotals(readings)!;
    expect({ count: row.count, sum: row.sum, min: row.min, max: row.max }).toEqual(totals);
    expect(row.avg).toBe(totals.sum / totals.count);
    const { first, last } = expectedEdges(readings);
    expect(row.first).toEqual(first);
    expect(row.last).toEqual(last);
    expectPercentile(row.p50, readings, 50);
    expectPercentile(row.p90, readings, 90);
    expectTail(aggregate.extensions?.reads?.[0]?.tail);

    for (const [granularity, size] of [
      ['MINUTE', MINUTE],
      ['HOUR', HOUR],
      ['DAY', DAY],
    ] as const) {
      const { buckets, tail } = await bucketsOf(t, metric, granularity);
      expect(buckets, granularity).toEqual(expectedBuckets(readings, size));
      expectTail(tail);
    }

    const latest = await ask<{
      metric: { firstReadingAt: string; lastReadingAt: string };
      all: { latest: TimedValue | null }[];
      byHost: { tags: { key: string; value: string }[]; latest: TimedValue | null }[];
      series: {
        id: string;
        firstReadingAt: string;
        lastReadingAt: string;
        latestValue: TimedValue | null;
        latest: { time: string; value: number }[];
      }[];
    }>(t, LATEST, { metric });
    const hosts = [...new Set(readings.map((r) => r.host))].sort();
    const times = readings.map((r) => r.time);
    expect(latest.data!.metric).toEqual({
      firstReadingAt: new Date(Math.min(...times)).toISOString(),
      lastReadingAt: new Date(Math.max(...times)).toISOString(),
    });
    expect(latest.data!.all).toEqual([{ latest: last }]);
    expect(latest.data!.byHost).toEqual(
      hosts.map((host) => ({ tags: [{ key: 'host', value: host }], latest: expectedEdges(newestFirst(readings, host)).last })),
    );
    expect(latest.data!.series).toEqual(
      hosts.map((host) => {
        const own = newestFirst(readings, host);
        const edges = expectedEdges(own);
        return {
          id: `${metric},host=${host}`,
          firstReadingAt: edges.first.time,
          lastReadingAt: edges.last.time,
          latestValue: edges.last,
          latest: own.slice(0, 5).map((r) => ({ time: new Date(r.time).toISOString(), value: r.value })),
        };
      }),
    );
  }

  it('answers a batch in the very next request from the log, and the same after it is folded', async () => {
    const batch = spread(150, 0);
    expect(await record(t, 'ryw', batch, 'ryw-1')).toEqual({ batchId: 'ryw-1', recorded: 150, applied: 150, alreadyApplied: 0 });
    // Nothing folded: every answer comes from the log's tail.
    expect(await t.store.seriesDays.countDocuments({ metric: 'ryw' })).toBe(0);
    await expectAnswers('ryw', batch, 150);

    expect(await t.settle()).toBe(150);
    expect(await t.store.seriesDays.countDocuments({ metric: 'ryw' })).toBeGreaterThan(0);
    await expectAnswers('ryw', batch, 0);
  });

  it('answers folded batches and unfolded ones together', async () => {
    const a = spread(120, 1000);
    const b = spread(80, 1120);
    await record(t, 'ryw_mid', a, 'ryw-mid-a');
    await t.settle();
    expect(await record(t, 'ryw_mid', b, 'ryw-mid-b')).toMatchObject({ applied: 80, alreadyApplied: 0 });
    // A folded, B in the tail.
    await expectAnswers('ryw_mid', [...a, ...b], 80);
    await t.settle();
    await expectAnswers('ryw_mid', [...a, ...b], 0);
    // Readings before and after every folded one, in the tail only: the metric's first
    // and last reading come from the tail until they are folded, then from the registry.
    const times = [...a, ...b].map((r) => r.time);
    const edges: Sent[] = [
      { host: 'h0', time: Math.min(...times) - 1000, value: 3 },
      { host: 'h1', time: Math.max(...times) + 1000, value: -4 },
    ];
    await record(t, 'ryw_mid', edges, 'ryw-mid-edges');
    await expectAnswers('ryw_mid', [...a, ...b, ...edges], 2);
    await t.settle();
    await expectAnswers('ryw_mid', [...a, ...b, ...edges], 0);
  });
});

// ---------------------------------------------------------------------------------
// 2. A property: any interleaving of batches, resends, folds and queries
// ---------------------------------------------------------------------------------

/** One step of a property run. */
type Command =
  /** Record a new batch (hosts as indexes, taken modulo the run's series count). */
  | { kind: 'record'; readings: { host: number; minute: number; second: number; value: number }[] }
  /** Send the `pick`-th (modulo the count) batch recorded so far again, with its batch id. */
  | { kind: 'resend'; pick: number }
  /** One fold of at most `maxReadings` readings (at least one entry). */
  | { kind: 'fold'; maxReadings: number }
  /** Compare the answers with a plain loop. */
  | { kind: 'query' };

/** Commands weighted towards new batches and folds, so most runs have several entries for folds to split. */
const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('record' as const),
      readings: fc.array(
        fc.record({
          host: fc.nat({ max: 2 }),
          minute: fc.nat({ max: 2 * 1440 - 1 }),
          second: fc.nat({ max: 59 }),
          // Quarters between -50 and 50: sums stay exact in floating point.
          value: fc.integer({ min: -200, max: 200 }).map((v) => v / 4),
        }),
        { minLength: 1, maxLength: 30 },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resend' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fold' as const), maxReadings: fc.integer({ min: 1, max: 50 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'query' as const }) },
);

describe('any interleaving of batches, resends, folds and queries', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('fold_property');
  });
  afterAll(async () => t.close());

  it('answers like a plain loop over the distinct batches recorded', { timeout: 180_000 }, async () => {
    let run = 0;
    /** Checks count/sum/min/max and HOUR buckets of `metric` against the batches recorded so far. */
    const expectLoop = async (metric: string, batches: readonly Sent[][]) => {
      const all = batches.flat();
      expect((await totalsOf(t, metric)).totals).toEqual(expectedTotals(all));
      expect((await bucketsOf(t, metric, 'HOUR')).buckets).toEqual(expectedBuckets(all, HOUR));
    };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 3 }),
        fc.array(commandArbitrary, { minLength: 4, maxLength: 12 }),
        async (seriesCount, commands) => {
          // A fresh metric per run (shrinking included): runs do not see each other's readings.
          run += 1;
          const metric = `p${run}`;
          const batches: Sent[][] = [];
          for (const command of commands) {
            switch (command.kind) {
              case 'record': {
                const readings = command.readings.map((r) => ({
                  host: `h${r.host % seriesCount}`,
                  time: START + r.minute * MINUTE + r.second * 1000,
                  value: r.value,
                }));
                const id = `${metric}-${batches.length}`;
                expect(await record(t, metric, readings, id)).toEqual({
                  batchId: id,
                  recorded: readings.length,
                  applied: readings.length,
                  alreadyApplied: 0,
                });
                batches.push(readings);
                break;
              }
              case 'resend': {
                if (batches.length === 0) break;
                const index = command.pick % batches.length;
                const readings = batches[index]!;
                const answer = await record(t, metric, readings, `${metric}-${index}`);
                expect(answer).toEqual({
                  batchId: `${metric}-${index}`,
                  recorded: readings.length,
                  applied: 0,
                  alreadyApplied: readings.length,
                });
                // Nothing new in the log: one entry per distinct batch.
                expect(await ingestLog(t.store).countDocuments({ metrics: metric })).toBe(batches.length);
                break;
              }
              case 'fold': {
                const outcome = await foldOnce(t.store, t.store.holder, { maxReadings: command.maxReadings });
                expect(outcome.leased).toBe(true);
                if (outcome.fold !== null) {
                  // At most maxReadings, unless a single entry is larger.
                  expect(outcome.entries).toBeGreaterThanOrEqual(1);
                  if (outcome.entries > 1) expect(outcome.readings).toBeLessThanOrEqual(command.maxReadings);
                }
                break;
              }
              case 'query':
                await expectLoop(metric, batches);
                break;
            }
          }
          await expectLoop(metric, batches);
          // Folded to the end, the answers are the same and nothing is left in the log.
          await t.settle();
          expect((await measureBacklog(t.store)).readings).toBe(0);
          await expectLoop(metric, batches);
        },
      ),
      { numRuns: 15 },
    );
  });
});

// ---------------------------------------------------------------------------------
// 3. Two stores on one database
// ---------------------------------------------------------------------------------

describe('two stores on one database, both writing and folding', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await openTestApp('fold_two');
    b = await openTestApp('fold_two', { database: a.store.db.databaseName });
  });
  afterAll(async () => {
    await b.store.client.close();
    await a.close();
  });

  it('folds every entry exactly once, by the lease holder only, and both answer exactly', { timeout: 120_000 }, async () => {
    const metric = 'two';
    const BATCHES = 8;
    const SIZE = 25;
    /** Batch id -> readings, for every batch sent. */
    const sent = new Map<string, Sent[]>();
    /** Readings acknowledged so far, and readings of batches whose request has started. */
    let acknowledged = 0;
    let started = 0;
    let writing = 2;

    const writer = async (app: TestApp, name: string, seed: number) => {
      try {
        for (let i = 0; i < BATCHES; i++) {
          const readings = spread(SIZE, seed + i * SIZE);
          const id = `two-${name}-${i}`;
          sent.set(id, readings);
          started += readings.length;
          expect(await record(app, metric, readings, id)).toMatchObject({ applied: SIZE, alreadyApplied: 0 });
          acknowledged += readings.length;
        }
      } finally {
        writing -= 1;
      }
    };
    const outcomes: { holder: string; outcome: FoldOutcome }[] = [];
    /** Calls foldOnce as `app`'s holder, folds of at most `maxReadings`, until the writers are done, and 10 times at least. */
    const folder = async (app: TestApp, maxReadings: number) => {
      for (let i = 0; i < 10 || writing > 0; i++) {
        outcomes.push({ holder: app.store.holder, outcome: await foldOnce(app.store, app.store.holder, { maxReadings }) });
      }
    };
    /**
     * Reads the total count while writes and folds run: never fewer than the readings
     * acknowledged before it began, never more than those whose request had started by
     * its end (a reading missed or counted twice would break one bound or the other).
     */
    const reader = async (app: TestApp) => {
      while (writing > 0) {
        const before = acknowledged;
        const { totals } = await totalsOf(app, metric);
        const count = totals?.count ?? 0;
        expect(count).toBeGreaterThanOrEqual(before);
        expect(count).toBeLessThanOrEqual(started);
      }
    };

    await Promise.all([
      writer(a, 'a', 0),
      writer(b, 'b', 400),
      folder(a, 40),
      folder(a, 60),
      folder(b, 40),
      folder(b, 60),
      reader(a),
      reader(b),
    ]);
    // Fold the rest: only the holder can (foldAll of the other returns at once).
    const rest = (await a.settle()) + (await b.settle());
    expect((await measureBacklog(a.store)).readings).toBe(0);

    // Only the lease holder folded; the other was refused the lease every time.
    const state = await foldState(a.store.db).findOne({ _id: FOLDS_ID });
    const holder = state!.lease!.holder;
    expect([a.store.holder, b.store.holder]).toContain(holder);
    const folded = outcomes.filter(({ outcome }) => outcome.fold !== null);
    expect(folded.length).toBeGreaterThan(0);
    expect(new Set(folded.map((entry) => entry.holder))).toEqual(new Set([holder]));
    const other = holder === a.store.holder ? b.store.holder : a.store.holder;
    for (const { outcome } of outcomes.filter(({ holder }) => holder === other)) {
      expect(outcome).toEqual({ leased: false, fold: null, entries: 0, readings: 0, parts: 0, rollupParts: 0 });
    }

    // Each fold number was made visible once, the folds took every reading once.
    const total = BATCHES * SIZE * 2;
    const foldNumbers = folded.map(({ outcome }) => outcome.fold!);
    expect(new Set(foldNumbers).size).toBe(foldNumbers.length);
    expect(folded.reduce((sum, { outcome }) => sum + outcome.readings, 0) + rest).toBe(total);
    expect(state?.running).toBeNull();

    // Every entry was taken by one visible fold; expected parts: one per (series, day, fold).
    const entries = await ingestLog(a.store)
      .find({}, { projection: { _id: 1, fold: 1 } })
      .toArray();
    expect(entries.map((entry) => String(entry._id)).sort()).toEqual([...sent.keys()].sort());
    const expectedParts = new Set<string>();
    for (const entry of entries) {
      expect(entry.fold).toBeGreaterThanOrEqual(1);
      expect(entry.fold).toBeLessThanOrEqual(state!.visible);
      for (const r of sent.get(String(entry._id))!) {
        expectedParts.add(`${metric},host=${r.host}|${Math.floor(r.time / DAY) * DAY}|${entry.fold}`);
      }
    }
    const keyOf = new Map((await a.store.series.find({ metric }).toArray()).map((series) => [series._id, series.key]));
    const parts = await a.store.seriesDays.find({ metric }, { projection: { series: 1, date: 1, f: 1, readings: 1 } }).toArray();
    const partKeys = parts.map((part) => `${keyOf.get(part.series)}|${part.date.getTime()}|${(part as { f?: number }).f}`);
    expect(parts.length).toBe(expectedParts.size);
    expect(new Set(partKeys)).toEqual(expectedParts);
    expect(parts.reduce((sum, part) => sum + (part.readings ?? 0), 0)).toBe(total);

    // Both stores answer exactly, with nothing from the tail.
    const all = [...sent.values()].flat();
    for (const app of [a, b]) {
      expect(await totalsOf(app, metric)).toEqual({ totals: expectedTotals(all), tail: { entries: 0, readings: 0 } });
      expect((await bucketsOf(app, metric, 'HOUR')).buckets).toEqual(expectedBuckets(all, HOUR));
    }
  });
});

// ---------------------------------------------------------------------------------
// 4. A stopped folder's fold completed by another holder
// ---------------------------------------------------------------------------------

describe('a fold stopped by a crash', () => {
  let t: TestApp;
  const sent: Sent[] = [];
  beforeAll(async () => {
    t = await openTestApp('fold_crash');
  });
  afterAll(async () => t.close());

  /** The fold state document. */
  const stateOf = async () => (await foldState(t.store.db).findOne({ _id: FOLDS_ID }))!;
  /** Checks totals and HOUR buckets of metric `crash` against `sent`, and the readings the read took from the tail. */
  const expectExact = async (tailReadings: number) => {
    const { totals, tail } = await totalsOf(t, 'crash');
    expect(totals).toEqual(expectedTotals(sent));
    expect(tail?.readings).toBe(tailReadings);
    expect((await bucketsOf(t, 'crash', 'HOUR')).buckets).toEqual(expectedBuckets(sent, HOUR));
  };
  /** Parts of fold `f` of metric `crash` that a plain loop expects: one per series and day of `readings`. */
  const partsOf = (readings: readonly Sent[]) => new Set(readings.map((r) => `${r.host}|${Math.floor(r.time / DAY)}`)).size;

  it('is completed by another holder, and the dead holder cannot flip anything afterwards', async () => {
    const first = spread(60, 2000);
    await record(t, 'crash', first, 'crash-1');
    sent.push(...first);
    await t.settle();

    const second = spread(40, 2060);
    const third = spread(30, 2100);
    await record(t, 'crash', second, 'crash-2');
    await record(t, 'crash', third, 'crash-3');
    sent.push(...second, ...third);

    // What a folder of an earlier version left when it stopped after recording `running`
    // and stamping its entries, before inserting any part, and then its lease ran out.
    const before = await stateOf();
    const seq = before.visible + 1;
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { running: { seq, entries: ['crash-2', 'crash-3'] }, lease: { holder: 'dead', until: new Date(0) } } },
    );
    await ingestLog(t.store).updateMany({ _id: { $in: ['crash-2', 'crash-3'] } }, { $set: { fold: seq } });

    // Stamped but not visible: still read from the tail.
    await expectExact(70);

    // Another holder takes the expired lease and completes fold `seq` with the same entries.
    expect(await foldAll(t.store, t.store.holder)).toBe(70);
    const after = await stateOf();
    expect(after.visible).toBe(seq);
    expect(after.running).toBeNull();
    expect(after.lease?.holder).toBe(t.store.holder);
    expect(await t.store.seriesDays.countDocuments({ metric: 'crash', f: seq })).toBe(partsOf([...second, ...third]));
    expect(
      (
        await ingestLog(t.store)
          .find({ _id: { $in: ['crash-2', 'crash-3'] } })
          .toArray()
      ).map((entry) => entry.fold),
    ).toEqual([seq, seq]);
    await expectExact(0);

    // The dead holder comes back: its lease is gone, nothing moves.
    const partsBefore = await t.store.seriesDays.countDocuments({ metric: 'crash' });
    const outcome = await foldOnce(t.store, 'dead');
    expect(outcome).toMatchObject({ leased: false, fold: null });
    expect((await stateOf()).visible).toBe(seq);
    expect(await t.store.seriesDays.countDocuments({ metric: 'crash' })).toBe(partsBefore);
    await expectExact(0);
  });

  it('keeps a zombie stalled inside a fold from inserting or flipping anything after another holder completed it', async () => {
    const fourth = spread(50, 2200);
    await record(t, 'crash', fourth, 'crash-4');
    sent.push(...fourth);
    // The zombie takes a free lease, records its fold, stamps it, then stalls before its parts.
    await releaseLease(t.store, t.store.holder);
    let reached!: () => void;
    const atInsert = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const buckets = new Proxy(t.store.seriesDays, {
      get(target, property) {
        if (property === 'insertMany') {
          return async (...args: Parameters<Collection<Document>['insertMany']>) => {
            reached();
            await gate;
            return (target as unknown as Collection<Document>).insertMany(...args);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const zombieStore: Store = { ...t.store, seriesDays: buckets };
    const zombie = foldOnce(zombieStore, 'zombie');
    await atInsert;
    const stalled = await stateOf();
    const seq = stalled.visible + 1;
    expect(stalled.running).toEqual({ seq, entries: ['crash-4'] });
    expect(stalled.lease?.holder).toBe('zombie');
    await expectExact(50);

    // Its lease runs out; this process's folder takes over and completes the fold.
    await foldState(t.store.db).updateOne({ _id: FOLDS_ID }, { $set: { 'lease.until': new Date(0) } });
    expect(await foldAll(t.store, t.store.holder)).toBe(50);
    expect((await stateOf()).visible).toBe(seq);
    const partsAfter = await t.store.seriesDays.countDocuments({ metric: 'crash' });
    expect(await t.store.seriesDays.countDocuments({ metric: 'crash', f: seq })).toBe(partsOf(fourth));
    await expectExact(0);

    // The zombie wakes up: its parts exist already (skipped), its flip's compare-and-set fails.
    release();
    expect(await zombie).toMatchObject({ leased: false, fold: null });
    const final = await stateOf();
    expect(final.visible).toBe(seq);
    expect(final.running).toBeNull();
    expect(final.lease?.holder).toBe(t.store.holder);
    expect(await t.store.seriesDays.countDocuments({ metric: 'crash' })).toBe(partsAfter);
    await expectExact(0);
  });

  it('leaves the entries of a visible fold not stamped yet out of the tail, and stamps them before the next fold', async () => {
    const fifth = spread(30, 2300);
    await record(t, 'crash', fifth, 'crash-5');
    sent.push(...fifth);
    expect(await foldAll(t.store, t.store.holder)).toBe(30);
    const folded = await stateOf();
    const seq = folded.visible;
    expect(folded.stamping).toBeNull();

    // What a folder leaves when it stops right after its flip, and then its lease runs
    // out: the fold visible, its entries named by `stamping` and not stamped.
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { stamping: { seq, entries: ['crash-5'] }, lease: { holder: 'dead', until: new Date(0) } } },
    );
    await ingestLog(t.store).updateOne({ _id: 'crash-5' }, { $set: { fold: null, foldedAt: null } });

    // Its readings are in the visible parts: read from there only, not from the tail too.
    await expectExact(0);
    const sixth = spread(20, 2330);
    await record(t, 'crash', sixth, 'crash-6');
    sent.push(...sixth);
    await expectExact(20);

    // The next holder stamps the entry first, then folds only the new batch.
    const partsBefore = await t.store.seriesDays.countDocuments({ metric: 'crash' });
    expect(await foldAll(t.store, t.store.holder)).toBe(20);
    const after = await stateOf();
    expect(after.visible).toBe(seq + 1);
    expect(after.stamping).toBeNull();
    expect(await t.store.seriesDays.countDocuments({ metric: 'crash', f: seq + 1 })).toBe(partsOf(sixth));
    expect(await t.store.seriesDays.countDocuments({ metric: 'crash' })).toBe(partsBefore + partsOf(sixth));
    const entries = await ingestLog(t.store)
      .find({ _id: { $in: ['crash-5', 'crash-6'] } }, { sort: { receivedAt: 1 } })
      .toArray();
    expect(entries.map((entry) => [entry._id, entry.fold, entry.foldedAt instanceof Date])).toEqual([
      ['crash-5', seq, true],
      ['crash-6', seq + 1, true],
    ]);
    await expectExact(0);
  });

  it('tells a batch id from a server-made id of the same hex digits while the latter waits to be stamped', async () => {
    const seventh = spread(10, 2400);
    await record(t, 'crash', seventh, undefined);
    sent.push(...seventh);
    expect(await foldAll(t.store, t.store.holder)).toBe(10);
    const seq = (await stateOf()).visible;
    const made = await ingestLog(t.store).findOne({ fold: seq });
    expect(made?._id).toBeInstanceOf(ObjectId);
    const id = made!._id as ObjectId;
    // Its fold visible and its entry not stamped, as a folder stopped after the flip leaves it.
    await foldState(t.store.db).updateOne({ _id: FOLDS_ID }, { $set: { stamping: { seq, entries: [id] } } });
    await ingestLog(t.store).updateOne({ _id: id }, { $set: { fold: null, foldedAt: null } });
    // A client's batch whose id is that ObjectId's hex text is another entry, in the tail.
    const eighth = spread(15, 2420);
    await record(t, 'crash', eighth, id.toHexString());
    sent.push(...eighth);
    await expectExact(15);
    expect(await foldAll(t.store, t.store.holder)).toBe(15);
    await expectExact(0);
  });
});

// ---------------------------------------------------------------------------------
// 5. Start-up on a log an earlier version left
// ---------------------------------------------------------------------------------

describe('start-up on a log an earlier version left', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('fold_start_up');
  });
  afterAll(async () => t.close());

  it('gives foldedAt to entries stamped by a visible fold without it, leaves the others, and drops the old marking index', async () => {
    const log = ingestLog(t.store);
    await foldState(t.store.db).updateOne({ _id: FOLDS_ID }, { $set: { visible: 3 } });
    // Entries as an earlier version left them: stamped by fold 2 (visible) when its folder
    // stopped before marking them, stamped by fold 4 (not visible yet), not taken by a fold,
    // and stamped and marked.
    const marked = new Date(Date.UTC(2024, 0, 1));
    const entry = (id: string, fold: number | null, foldedAt: Date | null) => ({
      _id: id,
      receivedAt: marked,
      metrics: ['old'],
      first: marked,
      last: marked,
      readings: 0,
      fold,
      foldedAt,
    });
    await log.insertMany([
      entry('old-visible', 2, null),
      entry('old-running', 4, null),
      entry('old-unfolded', null, null),
      entry('old-marked', 1, marked),
    ] as never[]);
    await log.createIndex({ foldedAt: 1, fold: 1 }, { name: 'foldedAt_fold' });
    const begin = Date.now();

    await ensureIndexes(t.store.db);

    const after = new Map(
      (await log.find({ _id: { $in: ['old-visible', 'old-running', 'old-unfolded', 'old-marked'] } }).toArray()).map((doc) => [
        doc._id,
        doc.foldedAt,
      ]),
    );
    expect(after.get('old-visible')?.getTime()).toBeGreaterThanOrEqual(begin - 1000);
    expect(after.get('old-running')).toBeNull();
    expect(after.get('old-unfolded')).toBeNull();
    expect(after.get('old-marked')).toEqual(marked);
    expect((await log.indexes()).map((index) => index.name)).not.toContain('foldedAt_fold');
    // A second start-up changes nothing more.
    await ensureIndexes(t.store.db);
    expect((await log.findOne({ _id: 'old-visible' }))?.foldedAt).toEqual(after.get('old-visible'));
  });
});

describe('a log entry written before its columns were packed', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('fold_unpacked');
  });
  afterAll(async () => t.close());

  it('reads and folds an entry that holds its columns as fields, as entries were written before the packing', async () => {
    const log = ingestLog(t.store);
    // A batch through the API registers the metric and its three series, packed.
    const packed = spreadFrom(START, 60, 5000);
    await record(t, 'old_columns', packed, 'old-columns-packed');
    expect((await log.findOne({ _id: 'old-columns-packed' }))?.packed).toBeDefined();
    // An entry of the same series written as before: series, s, t, fields and v as fields.
    const unpacked = spreadFrom(START, 45, 9000);
    const hosts = ['h0', 'h1', 'h2'];
    const times = unpacked.map((r) => r.time);
    await log.insertOne({
      _id: 'old-columns-fields',
      receivedAt: new Date(),
      metrics: ['old_columns'],
      first: new Date(Math.min(...times)),
      last: new Date(Math.max(...times)),
      readings: unpacked.length,
      series: hosts.map((host) => ({ key: `old_columns,host=${host}`, metric: 'old_columns', tags: [{ key: 'host', value: host }] })),
      s: unpacked.map((r) => hosts.indexOf(r.host)),
      t: times,
      fields: ['v'],
      v: [unpacked.map((r) => r.value)],
    });
    const all = [...packed, ...unpacked];
    expect(await totalsOf(t, 'old_columns')).toEqual({ totals: expectedTotals(all), tail: { entries: 2, readings: all.length } });
    expect((await bucketsOf(t, 'old_columns', 'HOUR')).buckets).toEqual(expectedBuckets(all, HOUR));
    expect(await t.settle()).toBe(all.length);
    expect(await totalsOf(t, 'old_columns')).toEqual({ totals: expectedTotals(all), tail: { entries: 0, readings: 0 } });
    expect((await bucketsOf(t, 'old_columns', 'MINUTE')).buckets).toEqual(expectedBuckets(all, MINUTE));
  });
});

describe('stamping a fold of more entries than one update stamps', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('fold_stamp_chunks');
  });
  afterAll(async () => t.close());

  it('stamps every entry of a fold, and a holder stopped after its first update leaves the rest to the next fold', async () => {
    const log = ingestLog(t.store);
    const batches = 2 * STAMP_CHUNK + 3;
    const sent: Sent[] = [];
    for (let i = 0; i < batches; i += 1) {
      const batch = spreadFrom(START, 4, 100 + 4 * i);
      await record(t, 'stamp_chunks', batch, `stamp-${i}`);
      sent.push(...batch);
    }
    const first = await foldOnce(t.store, t.store.holder);
    expect(first.entries).toBe(batches);
    const stamped = await log.find({ _id: { $regex: /^stamp-/ } }).toArray();
    expect(stamped).toHaveLength(batches);
    expect(stamped.filter((entry) => entry.fold === first.fold && entry.foldedAt instanceof Date)).toHaveLength(batches);
    expect((await foldState(t.store.db).findOne({ _id: FOLDS_ID }))?.stamping).toBeNull();
    expect(await totalsOf(t, 'stamp_chunks')).toEqual({ totals: expectedTotals(sent), tail: { entries: 0, readings: 0 } });

    // A fold whose holder stopped after stamping the first STAMP_CHUNK entries.
    const later: Sent[] = [];
    const ids: string[] = [];
    for (let i = 0; i < batches; i += 1) {
      const batch = spreadFrom(START, 3, 500 + 3 * i);
      await record(t, 'stamp_chunks', batch, `stamp-later-${i}`);
      ids.push(`stamp-later-${i}`);
      later.push(...batch);
    }
    const second = await foldOnce(t.store, t.store.holder);
    expect(second.entries).toBe(batches);
    const unstamped = ids.slice(STAMP_CHUNK);
    await log.updateMany({ _id: { $in: unstamped } }, { $set: { fold: null, foldedAt: null } });
    await foldState(t.store.db).updateOne(
      { _id: FOLDS_ID },
      { $set: { stamping: { seq: second.fold!, entries: ids }, lease: { holder: 'dead', until: new Date(0) } } },
    );
    // Read from the parts only while the rest are unstamped.
    const all = [...sent, ...later];
    expect(await totalsOf(t, 'stamp_chunks')).toEqual({ totals: expectedTotals(all), tail: { entries: 0, readings: 0 } });

    // The next fold finds nothing new to fold and stamps the rest.
    expect((await foldOnce(t.store, t.store.holder)).fold).toBeNull();
    const after = await log.find({ _id: { $in: ids } }).toArray();
    expect(after.filter((entry) => entry.fold === second.fold && entry.foldedAt instanceof Date)).toHaveLength(batches);
    expect((await foldState(t.store.db).findOne({ _id: FOLDS_ID }))?.stamping).toBeNull();
    expect(await totalsOf(t, 'stamp_chunks')).toEqual({ totals: expectedTotals(all), tail: { entries: 0, readings: 0 } });
  });
});

describe('a fold of more parts than one slice inserts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('fold_slices');
  });
  afterAll(async () => t.close());

  it('inserts every part of a fold built and sent in slices, and answers exactly', async () => {
    // 9,000 readings over 150 hosts and two days: 300 series-days, in three slices of about 4,000 readings.
    const sent: Sent[] = Array.from({ length: 9000 }, (_, k) => ({
      host: `h${k % 150}`,
      time: START + ((k * 7919) % (2 * 1440)) * MINUTE + (k % 60) * 1000,
      value: (k % 41) - 20 + (k % 2) * 0.5,
    }));
    for (let i = 0; i < sent.length; i += 1000) await record(t, 'slices', sent.slice(i, i + 1000), `slices-${i}`);
    const seriesDays = new Set(sent.map((r) => `${r.host}:${Math.floor(r.time / DAY)}`)).size;
    expect(seriesDays).toBe(300);

    const outcome = await foldOnce(t.store, t.store.holder);
    expect(outcome.readings).toBe(sent.length);
    expect(outcome.parts).toBe(seriesDays);
    expect(await t.store.seriesDays.countDocuments({ metric: 'slices', f: outcome.fold! })).toBe(seriesDays);
    expect(await totalsOf(t, 'slices')).toEqual({ totals: expectedTotals(sent), tail: { entries: 0, readings: 0 } });
    expect((await bucketsOf(t, 'slices', 'HOUR')).buckets).toEqual(expectedBuckets(sent, HOUR));
  });
});
