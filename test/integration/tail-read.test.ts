/**
 * A reader's tail (`readTail`, src/storage/tail.ts) holds every reading of the
 * log entries no visible fold holds, however many entries and readings that is: 2,100
 * single-reading entries (more than the 2,000 entries the cache once kept), and three
 * entries of 90,000 readings (more readings than the process keeps decoded between
 * requests, 250,000), answer every reading; and entries a fold stamped after the reader
 * took its view are in it too, in one read of the log while the folds since then are few,
 * and in two ranges read in turn when more are. A request
 * reads the tail of a metric once, however many of its pipelines add it. The entries
 * this process appended are in its decoded-entry cache from their write: its reads and
 * folds fetch only the entries another process wrote (made here by inserting entries
 * straight into the log, as another process's `appendEntry` does), and answer exactly
 * either way. Totals are checked against a plain loop over the readings sent.
 */
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { foldAll, foldOnce } from '../../src/storage/fold.ts';
import { appendEntry, ingestLog, newEntry } from '../../src/storage/ingest-log.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { readTail, TAIL_FOLDS_AHEAD } from '../../src/storage/tail.ts';
import { readView } from '../../src/storage/fold-state.ts';

const START = Date.parse('2026-05-01T00:00:00Z');
/** More single-reading entries than the decoded-entry cache once kept (2,000 entries). */
const ENTRIES = 2_100;
/** Readings of each of three entries: together more than the decoded-entry cache keeps (250,000). */
const LARGE = 90_000;

let t: TestApp;
beforeAll(async () => {
  t = await openTestApp('tail-read', { journal: false });
});
afterAll(async () => t?.close());

const readingOf = (metric: string, i: number): ReadingInput => ({
  metric,
  tags: [{ key: 'host', value: `h${i % 7}` }],
  time: new Date(START + i * 60_000),
  fields: [{ name: 'v', value: (i * 7) % 13 }],
});

/** Appends `count` log entries of one reading each, 50 at a time, as `recordBatch` would. */
async function appendSingles(metric: string, count: number): Promise<void> {
  for (let first = 0; first < count; first += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - first) }, (_, k) => {
        const receivedAt = Date.now();
        return appendEntry(t.store, validateReadings([readingOf(metric, first + k)], { maxBatchSize: 1, receivedAt }), { receivedAt });
      }),
    );
  }
}

/**
 * Inserts log entries of one reading each, readings `from` to `from + count - 1`, straight
 * into the log as another process's `appendEntry` writes them: this process has not
 * decoded them, so its reads and folds fetch them.
 * @returns the entries' ids.
 */
async function appendForeign(metric: string, from: number, count: number): Promise<string[]> {
  const entries = Array.from({ length: count }, (_, k) => {
    const receivedAt = Date.now();
    const readings = validateReadings([readingOf(metric, from + k)], { maxBatchSize: 1, receivedAt });
    return newEntry(readings, { id: `${metric}:foreign:${from + k}`, receivedAt }).entry;
  });
  await ingestLog(t.store).insertMany(entries);
  return entries.map((entry) => entry._id as string);
}

/**
 * Runs `run` and returns what `pick` takes of each command the test database was sent
 * meanwhile, in the order they were sent.
 */
async function sentDuring<T>(run: () => Promise<unknown>, pick: (event: CommandStartedEvent) => T[]): Promise<T[]> {
  const sent: T[] = [];
  const listener = (event: CommandStartedEvent) => {
    if (event.databaseName === t.store.db.databaseName) sent.push(...pick(event));
  };
  t.store.client.on('commandStarted', listener);
  try {
    await run();
  } finally {
    t.store.client.off('commandStarted', listener);
  }
  return sent;
}

/**
 * Runs `run` and returns the ids of the log entries the test database was asked for by
 * `_id` meanwhile (`find` of `ingest_log` with an `_id` filter), sorted.
 */
async function entriesFetched(run: () => Promise<unknown>): Promise<string[]> {
  const fetched = await sentDuring(run, (event) => {
    const filter = event.command.filter as { _id?: { $in?: unknown[] } } | undefined;
    if (event.command.find !== 'ingest_log' || filter?._id === undefined) return [];
    return (filter._id.$in ?? [filter._id]).map(String);
  });
  return fetched.sort();
}

/** The fold numbers a read of view `visible` names besides "not stamped": the next TAIL_FOLDS_AHEAD. */
const aheadOf = (visible: number) => Array.from({ length: TAIL_FOLDS_AHEAD }, (_, i) => visible + 1 + i);

/**
 * Runs `run` and returns the reads of the log's entries by fold number it sent: `find`
 * filters and the first `$match` of aggregates, each as `{command, filter}`.
 */
function logReads(run: () => Promise<unknown>): Promise<{ command: string; filter: Record<string, unknown> }[]> {
  return sentDuring(run, (event) => {
    const filter = event.command.filter as Record<string, unknown> | undefined;
    const first = (event.command.pipeline as { $match?: Record<string, unknown> }[] | undefined)?.[0]?.$match;
    if (event.command.find === 'ingest_log' && filter && 'fold' in filter) return [{ command: 'find', filter }];
    if (event.command.aggregate === 'ingest_log' && first && 'fold' in first) return [{ command: 'aggregate', filter: first }];
    return [];
  });
}

/** Count and sum of `v` over the readings 0..count-1 of {@link readingOf}: a plain loop. */
function expected(count: number): { count: number; sum: number } {
  let sum = 0;
  for (let i = 0; i < count; i += 1) sum += (i * 7) % 13;
  return { count, sum };
}

describe('the tail a reader reads', () => {
  it('holds the entries a fold stamped after the view was taken, never read before (folded first, alone)', async () => {
    const ids = await appendForeign('tail_stamped', 0, 120);
    const view = await readView(t.store);
    expect(await foldAll(t.store, t.store.holder)).toBeGreaterThanOrEqual(120);
    // Stamped with a fold number above the view's: in the tail of a reader of that view,
    // found by its read of the log and fetched then (written by "another process", and
    // the fold keeps nothing it decodes).
    let tail: Awaited<ReturnType<typeof readTail>> = { entries: 0, readings: [] };
    const fetched = await entriesFetched(async () => {
      tail = await readTail(t.store, 'tail_stamped', view);
    });
    expect(fetched).toEqual([...ids].sort());
    const sum = tail.readings.reduce((total, reading) => total + reading.fields[0]!.value, 0);
    expect({ count: tail.readings.length, sum }).toEqual(expected(120));
    // And in no tail of a reader of the view after the fold.
    expect((await readTail(t.store, 'tail_stamped', await readView(t.store))).readings).toEqual([]);
  });

  it('holds every reading of more entries than the cache once kept', async () => {
    await appendSingles('tail_many', ENTRIES);
    const tail = await readTail(t.store, 'tail_many', await readView(t.store));
    expect(tail.entries).toBe(ENTRIES);
    const sum = tail.readings.reduce((total, reading) => total + reading.fields[0]!.value, 0);
    expect({ count: tail.readings.length, sum }).toEqual(expected(ENTRIES));
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      `query { aggregate(metric: "tail_many", field: "v", from: "2026-05-01T00:00:00Z", to: "2026-05-03T00:00:00Z") { count sum } }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.aggregate).toEqual([expected(ENTRIES)]);
  });

  it('is read once per metric by a request, however many of its pipelines add it', async () => {
    await appendSingles('tail_shared', 90);
    const view = await readView(t.store);
    let answer: Awaited<
      ReturnType<
        typeof t.graphql<{ hourly: { buckets: { count: number; p95: number | null }[] }[]; daily: { count: number; sum: number }[] }>
      >
    > = {};
    const ranges = await logReads(async () => {
      // Three pipelines (hourly buckets, their sketches, the day's totals) on one metric.
      answer = await t.graphql(`query {
        hourly: buckets(metric: "tail_shared", field: "v", granularity: HOUR, from: "2026-05-01T00:00:00Z", to: "2026-05-02T00:00:00Z") { buckets { count p95 } }
        daily: aggregate(metric: "tail_shared", field: "v", from: "2026-05-01T00:00:00Z", to: "2026-05-02T00:00:00Z") { count sum }
      }`);
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.daily).toEqual([expected(90)]);
    // Readings 0..89 a minute apart from midnight: 60 in the first hour, 30 in the second,
    // none in the day's other 22 hours.
    const hours = answer.data?.hourly[0]?.buckets ?? [];
    expect(hours.map((bucket) => bucket.count)).toEqual([60, 30, ...Array<number>(22).fill(0)]);
    expect(hours.slice(0, 2).every((bucket) => bucket.p95 !== null)).toBe(true);
    // One read of the tail, in one command: the entries not stamped or stamped by the
    // TAIL_FOLDS_AHEAD folds after the view.
    expect(ranges).toEqual([{ command: 'aggregate', filter: { metrics: 'tail_shared', fold: { $in: [null, ...aheadOf(view.visible)] } } }]);
  });

  it('holds the entries stamped by more folds after the view than its one read names, read in two ranges then', async () => {
    // The log holds no other entries, so each fold below takes one of these.
    await foldAll(t.store, t.store.holder);
    await appendSingles('tail_behind', TAIL_FOLDS_AHEAD + 4);
    const view = await readView(t.store);
    // One fold per entry: the last four are stamped above V + TAIL_FOLDS_AHEAD.
    for (let fold = 0; fold < TAIL_FOLDS_AHEAD + 4; fold += 1) {
      expect(await foldOnce(t.store, t.store.holder, { maxReadings: 1 })).toMatchObject({ fold: view.visible + fold + 1, entries: 1 });
    }
    let tail: Awaited<ReturnType<typeof readTail>> = { entries: 0, readings: [] };
    const sent = await logReads(async () => {
      tail = await readTail(t.store, 'tail_behind', view);
    });
    expect(sent).toEqual([
      { command: 'aggregate', filter: { metrics: 'tail_behind', fold: { $in: [null, ...aheadOf(view.visible)] } } },
      { command: 'find', filter: { metrics: 'tail_behind', fold: null } },
      { command: 'find', filter: { metrics: 'tail_behind', fold: { $gt: view.visible } } },
    ]);
    expect(tail.entries).toBe(TAIL_FOLDS_AHEAD + 4);
    const sum = tail.readings.reduce((total, reading) => total + reading.fields[0]!.value, 0);
    expect({ count: tail.readings.length, sum }).toEqual(expected(TAIL_FOLDS_AHEAD + 4));
    // The view after those folds has no tail: one read.
    const current = await readView(t.store);
    const again = await logReads(async () => {
      expect((await readTail(t.store, 'tail_behind', current)).readings).toEqual([]);
    });
    expect(again).toHaveLength(1);
  });

  it('reads the entries this process appended without fetching them, and fetches the others', async () => {
    await appendSingles('tail_own', 30);
    const foreign = await appendForeign('tail_own', 30, 30);
    let tail: Awaited<ReturnType<typeof readTail>> | undefined;
    const fetched = await entriesFetched(async () => {
      tail = await readTail(t.store, 'tail_own', await readView(t.store));
    });
    expect(fetched).toEqual([...foreign].sort());
    expect(tail!.entries).toBe(60);
    const sum = tail!.readings.reduce((total, reading) => total + reading.fields[0]!.value, 0);
    expect({ count: tail!.readings.length, sum }).toEqual(expected(60));
  });

  it('folds the entries this process appended without fetching them, and fetches the others', async () => {
    await appendSingles('fold_own', 40);
    const foreign = await appendForeign('fold_own', 40, 40);
    const fetched = await entriesFetched(() => foldAll(t.store, t.store.holder));
    expect(fetched).toEqual([...foreign].sort());
    // Nothing left unfolded: the answer is the folded documents' alone, and exact.
    expect((await readTail(t.store, 'fold_own', await readView(t.store))).readings).toEqual([]);
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      `query { aggregate(metric: "fold_own", field: "v", from: "2026-05-01T00:00:00Z", to: "2026-05-03T00:00:00Z") { count sum } }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.aggregate).toEqual([expected(80)]);
  });

  it('holds every reading of entries holding more readings than the process keeps decoded', async () => {
    for (let entry = 0; entry < 3; entry += 1) {
      const receivedAt = Date.now();
      const inputs = Array.from({ length: LARGE }, (_, k) => readingOf('tail_large', entry * LARGE + k));
      await appendEntry(t.store, validateReadings(inputs, { maxBatchSize: LARGE, receivedAt }), { receivedAt });
    }
    const tail = await readTail(t.store, 'tail_large', await readView(t.store));
    expect(tail.entries).toBe(3);
    const sum = tail.readings.reduce((total, reading) => total + reading.fields[0]!.value, 0);
    expect({ count: tail.readings.length, sum }).toEqual(expected(3 * LARGE));
  });
});
